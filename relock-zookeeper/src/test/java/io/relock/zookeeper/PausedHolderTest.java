package io.relock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.relock.FencedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.ChildJvm;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/**
 * A holder JVM paused past its session timeout (SIGSTOP, as in a long GC): ZooKeeper expires its
 * session and lets the next client in, and when the paused JVM runs again its late write carries
 * the old token, which the store refuses. The history checked: of two writers that each
 * believed they held the lock, only the one with the newer token got its write in; and the
 * resumed holder hears that its hold was lost.
 */
class PausedHolderTest {

    private static final Duration PROMPTLY = Duration.ofSeconds(30);

    /** A store that keeps the largest token it has seen and refuses writes with smaller ones. */
    private static final class FencedStore {
        private long highest;

        synchronized boolean write(long token) {
            if (token < highest) {
                return false;
            }
            highest = token;
            return true;
        }
    }

    @Test
    void aHolderPausedPastItsSessionIsFencedOutWhenItRunsAgain() throws Exception {
        String root = "/paused/" + UUID.randomUUID();
        try (TestingServer zookeeper = new TestingServer(true);
                ChildJvm holder = ChildJvm.start(Holder.class, zookeeper.getConnectString(), root);
                Relock next = RelockZooKeeper.builder(zookeeper.getConnectString()).root(root)
                        .sessionTimeout(Duration.ofSeconds(4)).build()) {
            FencedStore store = new FencedStore();
            long oldToken = Long.parseLong(holder.awaitLine("HELD ", PROMPTLY).substring(5));
            assertThat(store.write(oldToken)).isTrue();

            holder.pause();
            FencedLock lock = next.getFencedLock("ledger");
            Long newToken = lock.tryLockAndGetToken(PROMPTLY.toSeconds(), TimeUnit.SECONDS);
            assertThat(newToken).as("acquired once the paused holder's session expired").isNotNull();
            assertThat(newToken).isGreaterThan(oldToken);
            assertThat(store.write(newToken)).isTrue();

            holder.resume();
            holder.send("WRITE");
            long lateToken = Long.parseLong(holder.awaitLine("WRITE ", PROMPTLY).substring(6));
            assertThat(lateToken).isEqualTo(oldToken);
            assertThat(store.write(lateToken)).as("the late write of the resumed holder").isFalse();
            assertThat(holder.awaitLine("LOST", PROMPTLY)).as("the resumed holder told of its loss").isNotNull();
            lock.unlock();
        }
    }

    /** The child: holds the fenced lock, reports its token, and on "WRITE" reports the token it would write with. */
    public static final class Holder {
        public static void main(String[] args) throws Exception {
            try (Relock relock = RelockZooKeeper.builder(args[0]).root(args[1]).sessionTimeout(Duration.ofSeconds(4))
                    .config(RelockConfig.builder().singleServer(RelockZooKeeper.PLACEHOLDER_SERVER).build()).build()) {
                relock.addLockListener(event -> System.out.println("LOST " + event.lockName()));
                long token = relock.getFencedLock("ledger").lockAndGetToken();
                System.out.println("HELD " + token);
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                if ("WRITE".equals(in.readLine())) {
                    // The late work: it still has its token, and writes with it.
                    System.out.println("WRITE " + token);
                }
                in.readLine();
            }
        }
    }
}
