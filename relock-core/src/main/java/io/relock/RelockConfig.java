package io.relock;

import io.relock.internal.Args;
import io.relock.internal.RedisUris;
import java.time.Duration;
import java.util.List;

/**
 * Immutable settings of a {@link Relock} client. Built once with {@link #builder()}:
 *
 * <pre>{@code
 * RelockConfig config = RelockConfig.builder()
 *     .singleServer("redis://127.0.0.1:6379")
 *     .watchdogTimeout(Duration.ofSeconds(30))
 *     .build();
 * }</pre>
 *
 * <p>Every setting has a named default ({@code DEFAULT_*}) except the server, which must be
 * given. The builder rejects a setting given twice; {@link Builder#build()} rejects invalid
 * values, naming the setting.
 */
public final class RelockConfig {

    /** Lease of a lock taken without an explicit lease, renewed every third of it: 30 s. */
    public static final Duration DEFAULT_WATCHDOG_TIMEOUT = Duration.ofSeconds(30);

    /** How long a Redis command may take before it fails with {@link RelockTimeoutException}: 3 s. */
    public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(3);

    /** Prefix put before every lock name to form its Redis key: none. */
    public static final String DEFAULT_KEY_PREFIX = "";

    /** First pause of a spin lock's backoff: 5 ms. */
    public static final Duration DEFAULT_SPIN_BACKOFF_INITIAL = Duration.ofMillis(5);

    /** Longest pause of a spin lock's backoff: 500 ms. */
    public static final Duration DEFAULT_SPIN_BACKOFF_MAX = Duration.ofMillis(500);

    /** How long a fair lock's waiter may stay silent before it is taken for dead: 5 s. */
    public static final Duration DEFAULT_THREAD_WAIT_TIME = Duration.ofSeconds(5);

    /** The smallest watchdog timeout accepted: below it renewals would flood Redis. */
    public static final Duration MIN_WATCHDOG_TIMEOUT = Duration.ofMillis(30);

    /** How the client reaches Redis. More topologies join this list in later versions. */
    public enum Topology {
        /** One Redis server (standalone, or a fixed master without failover). */
        SINGLE_SERVER
    }

    private final Topology topology;
    private final List<String> serverUris;
    private final Duration watchdogTimeout;
    private final Duration commandTimeout;
    private final String keyPrefix;
    private final Duration spinBackoffInitial;
    private final Duration spinBackoffMax;
    private final Duration threadWaitTime;

    private RelockConfig(Builder builder) {
        this.topology = builder.topology;
        this.serverUris = List.copyOf(builder.serverUris);
        this.watchdogTimeout = orDefault(builder.watchdogTimeout, DEFAULT_WATCHDOG_TIMEOUT);
        this.commandTimeout = orDefault(builder.commandTimeout, DEFAULT_COMMAND_TIMEOUT);
        this.keyPrefix = orDefault(builder.keyPrefix, DEFAULT_KEY_PREFIX);
        this.spinBackoffInitial = orDefault(builder.spinBackoffInitial, DEFAULT_SPIN_BACKOFF_INITIAL);
        this.spinBackoffMax = orDefault(builder.spinBackoffMax, DEFAULT_SPIN_BACKOFF_MAX);
        this.threadWaitTime = orDefault(builder.threadWaitTime, DEFAULT_THREAD_WAIT_TIME);
    }

    private static <T> T orDefault(T value, T defaultValue) {
        return value != null ? value : defaultValue;
    }

    /**
     * Starts a new builder with every setting at its default and no server.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * How the client reaches Redis.
     *
     * @return the topology
     */
    public Topology topology() {
        return topology;
    }

    /**
     * The server URIs as given ({@code redis://} or {@code rediss://}).
     *
     * @return an unmodifiable list with at least one URI
     */
    public List<String> serverUris() {
        return serverUris;
    }

    /**
     * The lease of locks taken without one; the watchdog renews them every third of it.
     *
     * @return the watchdog timeout
     */
    public Duration watchdogTimeout() {
        return watchdogTimeout;
    }

    /**
     * How long one Redis command may take.
     *
     * @return the command timeout
     */
    public Duration commandTimeout() {
        return commandTimeout;
    }

    /**
     * The prefix of every lock key.
     *
     * @return the prefix, empty for none
     */
    public String keyPrefix() {
        return keyPrefix;
    }

    /**
     * The first pause of a spin lock ({@link Relock#getSpinLock}) between attempts; it doubles
     * after each failed attempt up to {@link #spinBackoffMax()}, with jitter.
     *
     * @return the initial backoff
     */
    public Duration spinBackoffInitial() {
        return spinBackoffInitial;
    }

    /**
     * The longest pause of a spin lock between attempts.
     *
     * @return the maximum backoff
     */
    public Duration spinBackoffMax() {
        return spinBackoffMax;
    }

    /**
     * How long a waiter of a fair lock ({@link Relock#getFairLock}) may go without retrying
     * before it is taken for dead and skipped. Waiters retry every third of it while waiting,
     * so a live waiter keeps its place; a crashed one delays the queue by at most this.
     *
     * @return the thread wait time
     */
    public Duration threadWaitTime() {
        return threadWaitTime;
    }

    @Override
    public String toString() {
        return "RelockConfig{topology=" + topology
                + ", servers=" + serverUris.stream().map(RedisUris::redact).toList()
                + ", watchdogTimeout=" + watchdogTimeout
                + ", commandTimeout=" + commandTimeout
                + ", keyPrefix='" + keyPrefix + "'}";
    }

    /**
     * Collects settings for a {@link RelockConfig}. Not thread-safe. Each setter may be called
     * once; a second call throws {@link IllegalStateException}.
     */
    public static final class Builder {

        private Topology topology;
        private List<String> serverUris = List.of();
        private Duration watchdogTimeout;
        private Duration commandTimeout;
        private String keyPrefix;
        private Duration spinBackoffInitial;
        private Duration spinBackoffMax;
        private Duration threadWaitTime;

        private Builder() {}

        /**
         * Use one Redis server. The URI may carry a user and password
         * ({@code redis://user:secret@host:6379}), a database ({@code /2}) and TLS
         * ({@code rediss://}).
         *
         * @param uri the server's URI
         * @return this builder
         * @throws NullPointerException if {@code uri} is null
         * @throws IllegalStateException if a server was already set
         */
        public Builder singleServer(String uri) {
            Args.notNull(uri, "uri");
            if (topology != null) {
                throw new IllegalStateException("a server is already configured (" + topology
                        + "); singleServer can only be set once");
            }
            topology = Topology.SINGLE_SERVER;
            serverUris = List.of(uri);
            return this;
        }

        /**
         * The lease of locks taken without one, renewed every third of it while held. Default
         * {@link #DEFAULT_WATCHDOG_TIMEOUT}; at least {@link #MIN_WATCHDOG_TIMEOUT}.
         *
         * @param timeout the watchdog timeout
         * @return this builder
         * @throws NullPointerException if {@code timeout} is null
         * @throws IllegalStateException if already set
         */
        public Builder watchdogTimeout(Duration timeout) {
            Args.notNull(timeout, "watchdogTimeout");
            Args.setOnce(watchdogTimeout, "watchdogTimeout");
            watchdogTimeout = timeout;
            return this;
        }

        /**
         * How long one Redis command may take before it fails. Default
         * {@link #DEFAULT_COMMAND_TIMEOUT}; must be positive. Connecting (in
         * {@link Relock#create}) may take the longer of this and 10 s.
         *
         * @param timeout the command timeout
         * @return this builder
         * @throws NullPointerException if {@code timeout} is null
         * @throws IllegalStateException if already set
         */
        public Builder commandTimeout(Duration timeout) {
            Args.notNull(timeout, "commandTimeout");
            Args.setOnce(commandTimeout, "commandTimeout");
            commandTimeout = timeout;
            return this;
        }

        /**
         * A prefix put before every lock name to form its key, e.g. {@code "billing:"}. Clients
         * that must exclude each other, Redisson ones included, must use the same prefix.
         *
         * @param prefix the prefix; empty for none
         * @return this builder
         * @throws NullPointerException if {@code prefix} is null
         * @throws IllegalStateException if already set
         */
        public Builder keyPrefix(String prefix) {
            Args.notNull(prefix, "keyPrefix");
            Args.setOnce(keyPrefix, "keyPrefix");
            keyPrefix = prefix;
            return this;
        }

        /**
         * How spin locks back off between attempts: {@code initial} after the first failed
         * attempt, doubling up to {@code max}, each pause randomised between half and all of
         * it. Defaults {@link #DEFAULT_SPIN_BACKOFF_INITIAL} and {@link #DEFAULT_SPIN_BACKOFF_MAX};
         * both at least 1 ms, {@code initial} at most {@code max}.
         *
         * @param initial the first pause
         * @param max the longest pause
         * @return this builder
         * @throws NullPointerException if either is null
         * @throws IllegalStateException if already set
         */
        public Builder spinBackoff(Duration initial, Duration max) {
            Args.notNull(initial, "initial");
            Args.notNull(max, "max");
            Args.setOnce(spinBackoffInitial, "spinBackoff");
            spinBackoffInitial = initial;
            spinBackoffMax = max;
            return this;
        }

        /**
         * How long a fair lock's waiter may stay silent before it is taken for dead. Default
         * {@link #DEFAULT_THREAD_WAIT_TIME}; at least 30 ms.
         *
         * @param timeout the thread wait time
         * @return this builder
         * @throws NullPointerException if {@code timeout} is null
         * @throws IllegalStateException if already set
         */
        public Builder threadWaitTime(Duration timeout) {
            Args.notNull(timeout, "threadWaitTime");
            Args.setOnce(threadWaitTime, "threadWaitTime");
            threadWaitTime = timeout;
            return this;
        }

        /**
         * Validates the settings and builds the configuration.
         *
         * @return the configuration
         * @throws IllegalStateException if no server was configured
         * @throws IllegalArgumentException if a setting is invalid; the message names it
         */
        public RelockConfig build() {
            if (topology == null) {
                throw new IllegalStateException("no server configured: call singleServer(uri)");
            }
            for (String uri : serverUris) {
                RedisUris.parse(uri, "singleServer");
            }
            RelockConfig config = new RelockConfig(this);
            Args.require(config.watchdogTimeout.compareTo(MIN_WATCHDOG_TIMEOUT) >= 0,
                    "watchdogTimeout must be at least %s: %s", MIN_WATCHDOG_TIMEOUT, config.watchdogTimeout);
            Args.require(!config.commandTimeout.isNegative() && !config.commandTimeout.isZero(),
                    "commandTimeout must be positive: %s", config.commandTimeout);
            Args.require(config.threadWaitTime.toMillis() >= 30,
                    "threadWaitTime must be at least 30 ms: %s", config.threadWaitTime);
            Args.require(config.spinBackoffInitial.toMillis() >= 1 && config.spinBackoffMax.toMillis() >= 1,
                    "spinBackoff must be at least 1 ms: %s, %s", config.spinBackoffInitial, config.spinBackoffMax);
            Args.require(config.spinBackoffInitial.compareTo(config.spinBackoffMax) <= 0,
                    "spinBackoff initial must not exceed max: %s > %s", config.spinBackoffInitial, config.spinBackoffMax);
            return config;
        }
    }
}
