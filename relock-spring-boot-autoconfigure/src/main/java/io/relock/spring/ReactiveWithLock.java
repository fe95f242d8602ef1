package io.relock.spring;

import org.aopalliance.intercept.MethodInvocation;

/** Temporary stub until relock-reactor is merged. */
final class ReactiveWithLock {

    private ReactiveWithLock() {}

    static Object guard(LockPlan plan, LockRunner runner, MethodInvocation invocation, Object target, Object[] args) {
        throw new UnsupportedOperationException("not yet");
    }
}
