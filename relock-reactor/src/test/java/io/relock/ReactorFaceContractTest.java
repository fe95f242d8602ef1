package io.relock;

/**
 * The lock contract, run through the Reactor face ({@link ReactorFaceLock}) over reentrant
 * locks: every acquire and release is a {@code ReactiveLock} pipeline whose owner comes from the
 * Reactor context.
 */
class ReactorFaceContractTest extends LockContractTest {

    @Override
    protected DistributedLock newLock(Relock client, String name) {
        return new ReactorFaceLock(client.getLock(name));
    }
}
