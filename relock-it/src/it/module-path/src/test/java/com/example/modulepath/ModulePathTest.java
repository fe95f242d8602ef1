package com.example.modulepath;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Relock on the module path: surefire runs these tests inside module com.example.modulepath
 * (patched with the test classes), with relock-core and its dependencies on the module path.
 */
class ModulePathTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    @Test
    void relockIsTheNamedModuleIoRelockAndThisCodeIsAModuleToo() {
        assertThat(Relock.class.getModule().getName()).isEqualTo("io.relock");
        assertThat(Orders.class.getModule().getName()).isEqualTo("com.example.modulepath");
        assertThat(System.getProperty("jdk.module.path")).contains("relock-core");
    }

    @Test
    void aLockIsTakenAndReleasedFromTheModulePath(RedisServer server) {
        RelockConfig config = RelockConfig.builder().singleServer(server.uri()).build();
        try (Relock relock = Relock.create(config); Relock other = Relock.create(config)) {
            Orders orders = new Orders(relock);
            assertThat(orders.charge(42)).isEqualTo(1);
            assertThat(orders.charge(42)).isEqualTo(2);
            assertThat(other.getLock("order:42").isLocked()).isFalse();
            assertThat(other.getLock("order:42").tryLock()).isTrue();
            other.getLock("order:42").unlock();
        }
    }

    @Test
    void theInternalPackageIsInTheModuleButNotExported() throws Exception {
        Module relock = Relock.class.getModule();
        assertThat(relock.getPackages()).contains("io.relock", "io.relock.internal");
        assertThat(relock.isExported("io.relock")).isTrue();
        assertThat(relock.isExported("io.relock.internal")).isFalse();
        assertThat(relock.isOpen("io.relock.internal", Orders.class.getModule())).isFalse();
        Class<?> args = Class.forName("io.relock.internal.Args");
        assertThatThrownBy(() -> args.getMethod("notNull", Object.class, String.class).invoke(null, "x", "x"))
                .isInstanceOf(IllegalAccessException.class);
    }

    @Test
    void aModuleThatImportsTheInternalsDoesNotCompile(@TempDir Path dir) throws Exception {
        assertThat(compile(dir.resolve("api"), "io.relock.Relock")).isEmpty();
        assertThat(compile(dir.resolve("internal"), "io.relock.internal.Args"))
                .contains("package io.relock.internal is not visible");
    }

    /**
     * Compiles module {@code probe}, which imports {@code type}, with this JDK's javac against
     * this test's module path; javac's output, empty when it compiled.
     */
    private static String compile(Path dir, String type) throws IOException, InterruptedException {
        Path source = Files.createDirectories(dir.resolve("src/probe"));
        Files.writeString(source.resolve("module-info.java"), "module probe { requires io.relock; }\n");
        Files.writeString(source.resolve("Probe.java"), "package probe;\nimport " + type + ";\n"
                + "public class Probe {}\n");
        Path javac = Path.of(System.getProperty("java.home"), "bin", "javac");
        Process process = new ProcessBuilder(javac.toString(), "--release", "17", "-d", dir.resolve("out").toString(),
                "--module-path", System.getProperty("jdk.module.path"),
                source.resolve("module-info.java").toString(), source.resolve("Probe.java").toString())
                .redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(1, TimeUnit.MINUTES)).as("javac finished").isTrue();
        assertThat(process.exitValue() == 0).as("javac's exit for: %s", output).isEqualTo(output.isEmpty());
        return output;
    }
}
