package io.relock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class ChildJvmTest {

    private static final Duration PROMPTLY = Duration.ofSeconds(30);
    private static final Duration BRIEFLY = Duration.ofMillis(300);

    @Test
    void awaitsLinesSendsLinesAndReportsTheExitCode() {
        try (ChildJvm child = ChildJvm.start(EchoMain.class, "a b", "", "c")) {
            assertThat(child.awaitLine("READY", PROMPTLY)).isEqualTo("READY " + child.pid());
            assertThat(child.awaitLine("ARGS", PROMPTLY)).isEqualTo("ARGS a b,,c");

            child.send("one");
            child.send("two");

            assertThat(child.awaitLine("ECHO", PROMPTLY)).isEqualTo("ECHO one");
            assertThat(child.awaitLine("ECHO", PROMPTLY)).isEqualTo("ECHO two");

            child.send("exit 3");

            assertThat(child.awaitExit(PROMPTLY)).isEqualTo(3);
            assertThat(child.isAlive()).isFalse();
            assertThat(child.output()).contains("echo starting", "READY " + child.pid(), "ECHO one", "ECHO two");
            assertThatThrownBy(() -> child.send("too late"))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("exited with code 3");
        }
    }

    @Test
    void awaitLineFailsAtOnceWhenTheChildExitsFirst() {
        try (ChildJvm child = ChildJvm.start(EchoMain.class)) {
            child.awaitLine("READY", PROMPTLY);
            child.send("exit 0");

            assertThatThrownBy(() -> child.awaitLine("NEVER", PROMPTLY))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("exited with code 0")
                    .hasMessageContaining("'NEVER'")
                    .hasMessageContaining("echo starting");
        }
    }

    @Test
    void awaitLineTimesOutWithTheOutputSoFar() {
        try (ChildJvm child = ChildJvm.start(EchoMain.class)) {
            child.awaitLine("READY", PROMPTLY);

            assertThatThrownBy(() -> child.awaitLine("NEVER", BRIEFLY))
                    .isInstanceOf(IllegalStateException.class)
                    .hasCauseInstanceOf(TimeoutException.class)
                    .hasMessageContaining("READY");
            assertThatThrownBy(() -> child.awaitExit(BRIEFLY))
                    .isInstanceOf(IllegalStateException.class)
                    .hasCauseInstanceOf(TimeoutException.class);
            assertThat(child.isAlive()).isTrue();
        }
    }

    @Test
    void pausedChildDoesNothingUntilResumed() {
        try (ChildJvm child = ChildJvm.start(EchoMain.class)) {
            child.awaitLine("READY", PROMPTLY);

            child.pause();
            child.send("while paused");

            assertThatThrownBy(() -> child.awaitLine("ECHO", BRIEFLY)).isInstanceOf(IllegalStateException.class);

            child.resume();

            assertThat(child.awaitLine("ECHO", PROMPTLY)).isEqualTo("ECHO while paused");
        }
    }

    @Test
    void terminateStopsTheChildAsSigtermDoesAndKeepsWhatItsShutdownHooksPrint() {
        try (ChildJvm child = ChildJvm.start(EchoMain.class)) {
            child.awaitLine("READY", PROMPTLY);

            child.terminate();

            assertThat(child.awaitExit(PROMPTLY)).isEqualTo(143);
            assertThat(child.output()).contains("HOOK ran");
            child.terminate(); // harmless once it has exited
        }
    }

    @Test
    void killEndsTheChildAndCloseIsSafeAfterwards() {
        ChildJvm child = ChildJvm.start(EchoMain.class);
        child.awaitLine("READY", PROMPTLY);
        long pid = child.pid();

        child.kill();

        assertThat(child.isAlive()).isFalse();
        assertThat(ProcessAssertions.isAlive(pid)).isFalse();
        assertThat(child.awaitExit(PROMPTLY)).isEqualTo(137);
        assertThatThrownBy(child::pause).isInstanceOf(IllegalStateException.class).hasMessageContaining("not alive");
        child.kill();
        child.close();
    }

    @Test
    void closeKillsALiveChild() {
        long pid;
        try (ChildJvm child = ChildJvm.start(EchoMain.class)) {
            pid = child.pid();
            child.awaitLine("READY", PROMPTLY);
        }
        assertThat(ProcessAssertions.isAlive(pid)).isFalse();
    }

    @Test
    void rejectsBadArguments() {
        assertThatThrownBy(() -> ChildJvm.start(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("mainClass");
        assertThatThrownBy(() -> ChildJvm.start(EchoMain.class, "ok", null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("args[1]");
    }
}
