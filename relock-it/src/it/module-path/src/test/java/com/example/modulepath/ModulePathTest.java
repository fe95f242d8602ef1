package com.example.modulepath;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.DistributedLock;
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
    void onlyTheApiPackageIsExportedAndNothingElseIsOpen() {
        Module relock = Relock.class.getModule();
        assertThat(relock.isExported("io.relock")).isTrue();
        assertThat(relock.getPackages()).anyMatch(name -> name.startsWith("io.relock.internal"));
        assertThat(relock.getPackages()).filteredOn(name -> !name.equals("io.relock")).allSatisfy(name -> {
            assertThat(relock.isExported(name)).as(name).isFalse();
            assertThat(relock.isOpen(name)).as(name).isFalse();
        });
    }

    @Test
    void theLockImplementationCannotBeReachedByReflectionNorCompiledAgainst(RedisServer server,
            @TempDir Path dir) throws Exception {
        try (Relock relock = Relock.create(RelockConfig.builder().singleServer(server.uri()).build())) {
            DistributedLock lock = relock.getLock("order:7");
            Class<?> implementation = lock.getClass();
            assertThat(implementation.getModule()).isSameAs(Relock.class.getModule());
            assertThat(Relock.class.getModule().isExported(implementation.getPackageName())).isFalse();
            // Public in a package the module does not export: its methods cannot be called from here.
            assertThatThrownBy(() -> implementation.getMethod("getName").invoke(lock))
                    .isInstanceOf(IllegalAccessException.class);
            assertThat(lock.getName()).isEqualTo("order:7");

            assertThat(compile(dir.resolve("api"), "io.relock.Relock")).isEmpty();
            assertThat(compile(dir.resolve("internal"), implementation.getName()))
                    .contains("package " + implementation.getPackageName() + " is not visible");
        }
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
