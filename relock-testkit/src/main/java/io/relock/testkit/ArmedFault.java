package io.relock.testkit;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One one-shot fault of a {@link FaultProxy}, from arming to its end: what it does, the marker
 * it waits for, and its state machine, which lets exactly one connection claim it. Thread-safe.
 */
final class ArmedFault implements FaultProxy.Fault {

    /** What the fault does to the connection whose chunk carries its marker. */
    enum Kind {
        CUT_BEFORE_REQUEST("cutBeforeRequest"),
        CUT_AFTER_REQUEST("cutAfterRequest"),
        CUT_BEFORE_REPLY("cutBeforeReply"),
        DELAY_REPLIES("delayReplies");

        private final String method;

        Kind(String method) {
            this.method = method;
        }
    }

    /** ARMED → CLAIMED (marker seen) → FIRED; or ARMED → CANCELLED, or ARMED → ABANDONED (proxy closed). */
    private enum State {
        ARMED, CLAIMED, FIRED, CANCELLED, ABANDONED
    }

    final Kind kind;
    final byte[] bytes;
    final long delayNanos;
    private final String marker;
    private final ProxyCore proxy;
    private final AtomicReference<State> state = new AtomicReference<>(State.ARMED);
    /** Counted down when the fault leaves ARMED and CLAIMED for good. */
    private final CountDownLatch settled = new CountDownLatch(1);

    ArmedFault(ProxyCore proxy, Kind kind, String marker, long delayNanos) {
        this.proxy = proxy;
        this.kind = kind;
        this.marker = marker;
        this.bytes = marker.getBytes(StandardCharsets.UTF_8);
        this.delayNanos = delayNanos;
    }

    boolean isArmed() {
        return state.get() == State.ARMED;
    }

    /** Takes the fault for one connection; only one caller ever succeeds. */
    boolean claim() {
        if (state.compareAndSet(State.ARMED, State.CLAIMED)) {
            proxy.armed.remove(this);
            return true;
        }
        return false;
    }

    /** Marks a claimed fault as done; idempotent. */
    void fire(ProxyLink link) {
        if (state.compareAndSet(State.CLAIMED, State.FIRED)) {
            ProxyCore.LOG.debug("{} triggered on connection {} of {}", this, link.id, proxy);
            settled.countDown();
        }
    }

    /** The proxy closed before the marker was seen. */
    void abandon() {
        settle(State.ABANDONED);
    }

    @Override
    public boolean triggered() {
        return state.get() == State.FIRED;
    }

    @Override
    public void awaitTriggered(Duration timeout) {
        Settings.requireNonNegative(timeout, "timeout");
        try {
            settled.await(ProxyCore.saturatedNanos(timeout), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + this + " to trigger", e);
        }
        switch (state.get()) {
            case FIRED:
                return;
            case CANCELLED:
                throw new IllegalStateException(this + " was cancelled before it triggered");
            case ABANDONED:
                throw new IllegalStateException(this + " never triggered: " + proxy + " was closed first");
            case CLAIMED:
                throw new IllegalStateException(this + " saw its marker but did not finish within " + timeout
                        + (kind == Kind.CUT_BEFORE_REPLY ? " (the server has not closed the connection yet)" : ""));
            default:
                throw new IllegalStateException(this + " did not trigger within " + timeout
                        + ": no client sent \"" + marker + "\" through " + proxy);
        }
    }

    @Override
    public void cancel() {
        settle(State.CANCELLED);
    }

    /** Ends a fault whose marker was not seen yet; does nothing to one already claimed. */
    private void settle(State end) {
        if (state.compareAndSet(State.ARMED, end)) {
            proxy.armed.remove(this);
            settled.countDown();
        }
    }

    @Override
    public String toString() {
        return kind.method + "(\"" + marker + "\")";
    }
}
