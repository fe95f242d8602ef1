package io.relock.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.core.annotation.AliasFor;

/**
 * Runs the annotated method only while this application leads the named leader election
 * ({@link io.relock.LeaderElection}); on every other instance the call is skipped. Made for
 * {@code @Scheduled} jobs that one node must run:
 *
 * <pre>{@code
 * @Scheduled(fixedRate = 60_000)
 * @LeaderOnly("billing")
 * public void chargeDueSubscriptions() { ... }
 * }</pre>
 *
 * <p><b>The election.</b> The starter runs for every name used by a {@code @LeaderOnly} method
 * (and for the names in {@code relock.leader-election.names}) from the moment the context is
 * ready until it closes; see {@link RelockLeadership}. Whether this instance leads is answered
 * locally ({@link RelockLeadership#isLeader(String)}: no Redis round trip per call): from the
 * moment the listeners of the term's {@link LeadershipGrantedEvent} have returned until the term
 * is over, which a pause longer than the lease ends at once. The check is made when the call
 * starts: a call that began as leader runs to its end even if the leadership is lost meanwhile
 * (closing the context waits for it before handing over); pass
 * {@link RelockLeadership#leadership(String)}'s {@linkplain io.relock.Leadership#term() term}
 * along with the writes made as leader where the resource can refuse an older one.
 *
 * <p><b>A skipped call</b> returns {@code null} ({@code Optional.empty()} for an
 * {@link java.util.Optional}); a {@code void} method just does not run. A method that returns a
 * primitive other than {@code void} fails the application's start (a skipped call has no value
 * to return), as do a private, final or static method (a Spring proxy cannot intercept it), an
 * empty name, and a name whose {@code ${…}} placeholders resolve to a blank one; the message
 * names the method.
 *
 * <p>With {@code relock.leader-election.enabled=false} this instance runs for no election and
 * every {@code @LeaderOnly} call is skipped. The check comes before a {@code @Transactional} on
 * the same method opens its transaction; with {@link WithLock} on the same method both apply,
 * in no defined order. As with {@code @Transactional}, a call from inside
 * the same bean does not pass the proxy and is not checked. Usable as a meta-annotation.
 */
@Target({ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface LeaderOnly {

    /**
     * Alias for {@link #name()}.
     *
     * @return the election's name
     */
    @AliasFor("name")
    String value() default "";

    /**
     * The election's name ({@code relock.getLeaderElection(name)}); {@code ${…}} placeholders are
     * resolved against the environment. Required.
     *
     * @return the election's name
     */
    @AliasFor("value")
    String name() default "";
}
