package io.relock.spring;

import io.relock.LockLostException;
import java.util.List;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.Ordered;
import org.springframework.transaction.ConfigurableTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Makes a transaction that begins inside a guarded call ({@link WithLock} or
 * {@link RelockTemplate}) check the call's locks just before it commits, and roll back with
 * {@link LockLostException} when one is gone (see {@link RelockLocks.Held#checkBeforeCommit()}).
 *
 * <p>The lock is the outermost advice, so the transaction opens after the lock is taken, inside
 * the call; the first moment a synchronization can be registered in it is when it has begun.
 * This listener on the transaction manager is told that moment, for a {@code @Transactional}
 * method and a {@code TransactionTemplate} alike, whatever the order of the advisors. Spring's
 * own transaction managers all take listeners ({@link ConfigurableTransactionManager}); a
 * transaction manager that does not is not checked.
 */
final class TransactionLeaseCheck implements TransactionExecutionListener {

    private static final TransactionLeaseCheck INSTANCE = new TransactionLeaseCheck();

    private TransactionLeaseCheck() {}

    /** Adds the check to every imperative transaction manager of the context, once. */
    static BeanPostProcessor installer() {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String beanName) {
                if (bean instanceof PlatformTransactionManager && bean instanceof ConfigurableTransactionManager manager
                        && !manager.getTransactionExecutionListeners().contains(INSTANCE)) {
                    manager.addListener(INSTANCE);
                }
                return bean;
            }
        };
    }

    @Override
    public void afterBegin(TransactionExecution transaction, Throwable beginFailure) {
        // Only a transaction of its own commits; one that joins an outer transaction commits with it,
        // after the call (the wrong order, which docs/spring.md's transaction rule explains).
        if (beginFailure != null || !transaction.isNewTransaction()
                || !TransactionSynchronizationManager.isSynchronizationActive()) {
            return;
        }
        // Every enclosing call's lock: a commit under any lost one is unprotected.
        List<RelockLocks.Held> guards = RelockLocks.all().stream().filter(RelockLocks.Held::checksBeforeCommit).toList();
        if (!guards.isEmpty()) {
            TransactionSynchronizationManager.registerSynchronization(new Check(guards));
        }
    }

    /** The check registered in one transaction. */
    private record Check(List<RelockLocks.Held> guards) implements TransactionSynchronization {

        /** Last of the before-commit callbacks, as close to the commit as a synchronization gets. */
        @Override
        public int getOrder() {
            return Ordered.LOWEST_PRECEDENCE;
        }

        @Override
        public void beforeCommit(boolean readOnly) {
            for (RelockLocks.Held guard : guards) {
                guard.checkBeforeCommit();
            }
        }
    }
}
