package io.relock.internal.backend;

/**
 * How a back end renews one lock type's holds in a batch: a Redis script, a SQL statement. The
 * watchdog only groups holds by it and hands it back to {@link RenewalGateway#renew}.
 */
public interface Renewal {}
