package io.relock.zookeeper.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.zookeeper.internal.ZkLocks.Child;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Who a waiter's node waits behind, and when that one node's deletion alone makes it the holder
 * (then it takes the lock without reading the children again). Getting the second wrong would
 * let a waiter in while another node still holds, so every shape of queue is spelled out.
 */
class QueueRulesTest {

    /** A queue of nodes in the order given, their modes as named. */
    private static List<Child> queue(String... modes) {
        List<Child> children = new ArrayList<>();
        for (int i = 0; i < modes.length; i++) {
            children.add(new Child("_c_node" + i + "-" + modes[i], modes[i], i));
        }
        return children;
    }

    private static boolean onlyBlocker(List<Child> queue, int own, String ownWriter) {
        String mode = queue.get(own).mode();
        Child blocker = ZkLocks.blocker(queue, own, mode, ownWriter);
        assertThat(blocker).as("the node at %d waits", own).isNotNull();
        return ZkLocks.onlyBlocker(queue, blocker, mode, ownWriter);
    }

    @Test
    void aLockNodeWaitsBehindItsPredecessorAndHoldsWhenTheFirstGoes() {
        List<Child> queue = queue("lock", "lock", "lock");
        assertThat(ZkLocks.blocker(queue, 0, "lock", null)).isNull();
        assertThat(ZkLocks.blocker(queue, 2, "lock", null)).isEqualTo(queue.get(1));
        assertThat(onlyBlocker(queue, 1, null)).isTrue();
        // The second node leaving the queue leaves the first holding: the third must look again.
        assertThat(onlyBlocker(queue, 2, null)).isFalse();
    }

    @Test
    void aWriteNodeWaitsForEveryNodeBeforeIt() {
        List<Child> queue = queue("read", "read", "write");
        assertThat(ZkLocks.blocker(queue, 2, "write", null)).isEqualTo(queue.get(1));
        assertThat(onlyBlocker(queue, 2, null)).isFalse();
        assertThat(onlyBlocker(queue("read", "write"), 1, null)).isTrue();
    }

    @Test
    void aReadNodeWaitsOnlyForTheWritersBeforeIt() {
        List<Child> queue = queue("write", "read", "read");
        assertThat(ZkLocks.blocker(queue, 2, "read", null)).isEqualTo(queue.get(0));
        assertThat(onlyBlocker(queue, 2, null)).isTrue();
        assertThat(ZkLocks.blocker(queue("read", "read"), 1, "read", null)).isNull();
    }

    @Test
    void aReadNodeBehindTwoWritersIsNotClearedByTheNearerOne() {
        List<Child> queue = queue("write", "read", "write", "read");
        assertThat(ZkLocks.blocker(queue, 3, "read", null)).isEqualTo(queue.get(2));
        assertThat(onlyBlocker(queue, 3, null)).isFalse();
        // A plain lock node before counts as a writer too.
        assertThat(onlyBlocker(queue("lock", "write", "read"), 2, null)).isFalse();
    }

    @Test
    void theOwnersOwnWriteHoldBlocksNeitherItsReadNorTheClearing() {
        List<Child> queue = queue("write", "write", "read");
        String ownWriter = queue.get(0).name();
        // The owner holds the first write node and reads: only the other writer is in its way.
        assertThat(ZkLocks.blocker(queue, 2, "read", ownWriter)).isEqualTo(queue.get(1));
        assertThat(onlyBlocker(queue, 2, ownWriter)).isTrue();
        assertThat(ZkLocks.blocker(queue("write", "read"), 1, "read", queue("write").get(0).name())).isNull();
    }
}
