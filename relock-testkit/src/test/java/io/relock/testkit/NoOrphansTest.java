package io.relock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * A child JVM starts a redis-server and never stops it; whether the child exits or is killed,
 * the server — and the child's reaper — must be gone soon after.
 */
class NoOrphansTest {

    private static final Duration PROMPTLY = Duration.ofSeconds(30);
    private static final Duration REAPING = Duration.ofSeconds(10);

    @Test
    void serverOfAJvmThatExitsWithoutStoppingItIsKilled() throws InterruptedException {
        try (ChildJvm child = ChildJvm.start(RedisHolderMain.class, "exit")) {
            long redisPid = pid(child.awaitLine("REDIS_PID ", PROMPTLY));

            assertThat(child.awaitExit(PROMPTLY)).as(child.output()).isZero();

            ProcessAssertions.assertDiesWithin(redisPid, REAPING);
            assertThat(jvmDirectory(child.pid())).doesNotExist();
        }
    }

    @Test
    void serverOfAJvmKilledWithSigkillIsKilledByTheReaper() throws InterruptedException {
        try (ChildJvm child = ChildJvm.start(RedisHolderMain.class, "hold")) {
            long redisPid = pid(child.awaitLine("REDIS_PID ", PROMPTLY));
            // Everything the child started: its redis-server and its reaper.
            List<ProcessHandle> descendants = ProcessHandle.of(child.pid()).orElseThrow().descendants()
                    .collect(Collectors.toList());
            assertThat(descendants).extracting(ProcessHandle::pid).contains(redisPid);
            assertThat(descendants).hasSizeGreaterThanOrEqualTo(2);

            child.kill();

            for (ProcessHandle descendant : descendants) {
                ProcessAssertions.assertDiesWithin(descendant.pid(), REAPING);
            }
            assertThat(jvmDirectory(child.pid())).doesNotExist();
        }
    }

    @Test
    void processesOfAKilledJvmAreKilledDownTheWholeTree() throws InterruptedException {
        // Like a test JVM killed by a build timeout while its own child JVM runs a server.
        try (ChildJvm jvm = ChildJvm.start(ChildHolderMain.class)) {
            long childPid = pid(jvm.awaitLine("CHILD_PID ", PROMPTLY));
            long redisPid = pid(jvm.awaitLine("REDIS_PID ", PROMPTLY));
            // The grandchild JVM, its server, and both JVMs' reapers.
            List<ProcessHandle> descendants = ProcessHandle.of(jvm.pid()).orElseThrow().descendants()
                    .collect(Collectors.toList());
            assertThat(descendants).extracting(ProcessHandle::pid).contains(childPid, redisPid);
            assertThat(descendants).hasSizeGreaterThanOrEqualTo(4);

            jvm.kill();

            for (ProcessHandle descendant : descendants) {
                ProcessAssertions.assertDiesWithin(descendant.pid(), REAPING);
            }
            assertThat(jvmDirectory(jvm.pid())).doesNotExist();
            assertThat(jvmDirectory(childPid)).doesNotExist();
        }
    }

    private static long pid(String line) {
        return Long.parseLong(line.substring(line.indexOf(' ') + 1).trim());
    }

    private static Path jvmDirectory(long pid) {
        return Workspace.root().resolve("jvm-" + pid);
    }
}
