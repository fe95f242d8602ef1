package io.relock.spring.boot;

import java.util.regex.Pattern;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import io.relock.RelockConnectionException;

/**
 * Explains a start that failed because Relock could not reach Redis (a
 * {@link RelockConnectionException} anywhere in the causes, typically from the {@code relock}
 * bean): which server it tried, with the password masked, what to check, and the property that
 * lets the application start without Redis. Registered in {@code META-INF/spring.factories}.
 */
final class RelockConnectionFailureAnalyzer extends AbstractFailureAnalyzer<RelockConnectionException> {

    /** The user info of a URI ({@code redis://user:secret@host}): masked, should a message carry one. */
    private static final Pattern USER_INFO = Pattern.compile("://[^@/\\s\\[\\]]*@");

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, RelockConnectionException cause) {
        String description = "Relock could not connect to Redis while the application started:\n\n    "
                + mask(String.valueOf(cause.getMessage())) + "\n\nThe client is the Relock bean, which Relock's auto-configuration makes from"
                + " Spring Boot's spring.data.redis.* settings unless the application defines its own.";
        String action = """
                Check that:
                \t- the Redis server is running and reachable from this host (firewall, network policy);
                \t- the host and port are right (spring.data.redis.url, or spring.data.redis.host and \
                spring.data.redis.port; the nodes for a cluster or sentinels);
                \t- TLS matches the server: a rediss:// URL or spring.data.redis.ssl.enabled=true for a TLS \
                port, neither for a plain one;
                \t- the credentials for AUTH are right (spring.data.redis.username, spring.data.redis.password).

                To start without Redis, set %s=false: the application starts, Relock connects in the \
                background, the relock health indicator is DOWN, and lock calls fail with \
                RelockConnectionException until Redis is reachable.""".formatted(RelockProperties.REQUIRE_REDIS_AT_STARTUP);
        return new FailureAnalysis(description, action, cause);
    }

    private static String mask(String message) {
        return USER_INFO.matcher(message).replaceAll("://***@");
    }
}
