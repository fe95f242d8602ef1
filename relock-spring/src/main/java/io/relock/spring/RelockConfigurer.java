package io.relock.spring;

import java.time.Duration;
import java.util.Collection;
import java.util.List;

/**
 * Settings of the beans that {@link EnableRelock} registers: define one bean of this type and
 * override what should differ from the defaults. Spring Boot's auto-configuration defines one
 * from the {@code relock.*} properties (an application's own bean replaces it).
 *
 * <p>Read once, when the {@link RelockTemplate} and the {@link RelockLeadership} are created.
 * Two beans of this type fail the start ({@code NoUniqueBeanDefinitionException}).
 */
public interface RelockConfigurer {

    /**
     * How long {@link RelockTemplate} calls that give no wait time, and {@link WithLock} methods
     * without {@code waitTime}, wait for their lock.
     *
     * @return null (the default) to wait until acquired; zero or negative for one attempt
     */
    default Duration defaultWaitTime() {
        return null;
    }

    /**
     * Whether a lock lost while its guarded call runs is a
     * {@link io.relock.LockLostException} (and rolls back a transaction begun inside the call)
     * or only a warning in the log.
     *
     * @return true (the default) to throw
     */
    default boolean throwOnLockLost() {
        return true;
    }

    /**
     * Whether this application runs for leadership at all; false: {@link RelockLeadership}
     * never leads and every {@link LeaderOnly} call is skipped.
     *
     * @return true (the default) to run the elections
     */
    default boolean leaderElectionEnabled() {
        return true;
    }

    /**
     * Elections to run for besides those the {@link LeaderOnly} methods name, for an
     * application that only listens to {@link LeadershipEvent}s or asks
     * {@link RelockLeadership#isLeader(String)}.
     *
     * @return the names, none by default; a blank name fails the start
     */
    default Collection<String> leaderElectionNames() {
        return List.of();
    }
}
