package io.relock.bench;

import java.util.Locale;

/**
 * Everything the bench reports per case, with how to print it and which way is better. The
 * JSON key is the lower-case name.
 */
enum Metric {

    CYCLES_PER_S("cycles/s", 0, Better.HIGHER),
    ACQUISITIONS_PER_S("acquisitions/s", 0, Better.HIGHER),
    HANDOFFS_PER_S("hand-offs/s", 0, Better.NEITHER),
    CYCLE_P50_US("cycle p50 µs", 1, Better.LOWER),
    CYCLE_P99_US("cycle p99 µs", 1, Better.LOWER),
    WAIT_P50_US("wait p50 µs", 1, Better.LOWER),
    WAIT_P99_US("wait p99 µs", 1, Better.LOWER),
    WAIT_MAX_MS("wait max ms", 1, Better.LOWER),
    HANDOFF_P50_US("hand-off p50 µs", 1, Better.LOWER),
    HANDOFF_P99_US("hand-off p99 µs", 1, Better.LOWER),
    /** S3's {@code w1cr}: the share of acquisitions that went to another participant. */
    HANDOFF_SHARE("hand-offs/acquisition", 2, Better.NEITHER),
    ROUND_TRIPS_PER_OP("round trips/op", 2, Better.LOWER),
    COMMANDS_PER_OP("Redis commands/op", 2, Better.LOWER),
    JVM_CPU_US_PER_OP("client CPU µs/op", 1, Better.LOWER),
    REDIS_CPU_US_PER_OP("Redis CPU µs/op", 1, Better.LOWER),
    SHARE_MIN("thread share min", 2, Better.NEITHER),
    SHARE_MAX("thread share max", 2, Better.NEITHER),
    PIPELINE_SHARE_MIN("pipeline share min", 2, Better.NEITHER),
    PIPELINE_SHARE_MAX("pipeline share max", 2, Better.NEITHER),
    ACQUISITIONS_PER_THREAD("acquisitions/thread", 0, Better.NEITHER),
    SHARE_OF_EQUAL("per-thread share ÷ equal", 2, Better.NEITHER),
    THREADS("threads/client", 0, Better.LOWER),
    THREADS_USED("JVM threads used", 0, Better.LOWER),
    CONNECTIONS("connections/client", 0, Better.LOWER),
    THREADS_IDLE("threads/client, unused", 0, Better.LOWER),
    CONNECTIONS_IDLE("connections/client, unused", 0, Better.LOWER),
    WATCHDOG_CALLS_PER_TICK("renewal calls/tick", 1, Better.LOWER),
    WATCHDOG_COMMANDS_PER_TICK("renewal commands/tick", 0, Better.LOWER),
    WATCHDOG_REDIS_CPU_MS_PER_TICK("renewal Redis CPU ms/tick", 1, Better.LOWER);

    /** Which direction is an improvement; {@code NEITHER} gets no ratio in the chart. */
    enum Better { HIGHER, LOWER, NEITHER }

    private final String label;
    private final int decimals;
    private final Better better;

    Metric(String label, int decimals, Better better) {
        this.label = label;
        this.decimals = decimals;
        this.better = better;
    }

    String key() {
        return name().toLowerCase(Locale.ROOT);
    }

    String label() {
        return label;
    }

    Better better() {
        return better;
    }

    /** The value with the metric's precision, thousands separated by spaces for reading. */
    String format(double value) {
        if (Double.isNaN(value)) {
            return "–";
        }
        int digits = decimals;
        if (digits > 0 && Math.abs(value) >= 100) {
            digits = 0;
        }
        String text = String.format(Locale.ROOT, "%,." + digits + "f", value);
        return text.replace(',', ' ');
    }

    static Metric fromKey(String key) {
        return valueOf(key.toUpperCase(Locale.ROOT));
    }
}
