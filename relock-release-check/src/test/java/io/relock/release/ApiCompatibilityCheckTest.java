package io.relock.release;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The root POM's API check (japicmp against {@code relock.api.baseline}) on a module of two
 * classes that inherits it as every published module does: one class in a public package, one in
 * an {@code internal} package. Version 1.0.0 is installed as the baseline; 1.0.1 must build when
 * only the internal class breaks, and must fail when the public class loses a method. (Whether a
 * baseline that was never released is skipped, every build of this repository shows until 1.0.0
 * is on Maven Central.)
 */
class ApiCompatibilityCheckTest {

    private static final String GROUP = "io.relock.releasecheck";
    private static final String ARTIFACT = "api-sample";
    private static final String BASELINE = "1.0.0";

    private static Path sample;
    private static Path logs;

    @BeforeAll
    static void installTheBaseline() throws Exception {
        Path work = Path.of(Maven.property("relock.release.check.dir")).resolveSibling("api-check");
        deleteTree(work);
        deleteTree(installed());
        sample = work.resolve("sample");
        logs = Files.createDirectories(work);

        writeSample(BASELINE, true, "int");
        Maven.run(sample.resolve("pom.xml"), logs.resolve("baseline.log"), Map.of(),
                List.of("-Dmaven.javadoc.skip=true", "-Dmaven.source.skip=true", "-Djapicmp.skip=true", "install"))
                .passed();
    }

    @AfterAll
    static void forgetTheBaseline() throws IOException {
        deleteTree(installed());
    }

    @Test
    void aChangeInsideAnInternalPackagePasses() throws Exception {
        writeSample("1.0.1", true, "long");

        Maven.Build build = check("internal-change.log").passed();

        assertThat(build.output()).contains("japicmp-maven-plugin").doesNotContain("incompatibility");
        assertThat(sample.resolve("target/japicmp/api-compatibility.diff")).content()
                .contains(ARTIFACT + "-" + BASELINE + ".jar");
    }

    @Test
    void aPublicMethodRemovedFailsTheBuild() throws Exception {
        writeSample("1.0.1", false, "int");

        Maven.Build build = check("public-change.log").failed();

        assertThat(build.output())
                .contains("There is at least one incompatibility: io.relock.apisample.Greeter.bye():METHOD_REMOVED");
    }

    private static Maven.Build check(String log) throws IOException, InterruptedException {
        return Maven.run(sample.resolve("pom.xml"), logs.resolve(log), Map.of(),
                List.of("-Dmaven.javadoc.skip=true", "-Dmaven.source.skip=true",
                        "-Drelock.api.baseline=" + BASELINE, "clean", "verify"));
    }

    /**
     * The sample at a version: {@code Greeter} (public API) with or without {@code bye()}, and the
     * internal {@code Sizes.of} returning {@code sizeType}.
     */
    private static void writeSample(String version, boolean withBye, String sizeType) throws IOException {
        Path root = Path.of(Maven.property("relock.root")).toRealPath();
        Files.createDirectories(sample);
        Files.writeString(sample.resolve("pom.xml"), """
                <?xml version="1.0" encoding="UTF-8"?>
                <project xmlns="http://maven.apache.org/POM/4.0.0">
                  <modelVersion>4.0.0</modelVersion>
                  <parent>
                    <groupId>io.relock</groupId>
                    <artifactId>relock-parent</artifactId>
                    <version>%s</version>
                    <relativePath>%s</relativePath>
                  </parent>
                  <groupId>%s</groupId>
                  <artifactId>%s</artifactId>
                  <version>%s</version>
                  <name>API check sample</name>
                  <description>Two classes under the parent's API check.</description>
                </project>
                """.formatted(Maven.property("relock.version"), sample.relativize(root.resolve("pom.xml")),
                GROUP, ARTIFACT, version));
        write("io/relock/apisample/Greeter.java", """
                package io.relock.apisample;

                /** Public API of the sample. */
                public final class Greeter {
                    /** Creates one. */
                    public Greeter() {
                    }

                    /** @return a greeting */
                    public String hello() {
                        return "hello";
                    }
                %s}
                """.formatted(withBye ? """

                    /** @return a farewell */
                    public String bye() {
                        return "bye";
                    }
                """ : ""));
        write("io/relock/internal/apisample/Sizes.java", """
                package io.relock.internal.apisample;

                /** Not API: under an internal package. */
                public final class Sizes {
                    private Sizes() {
                    }

                    /** @return the length of the text */
                    public static %s of(String text) {
                        return text.length();
                    }
                }
                """.formatted(sizeType));
    }

    private static void write(String source, String text) throws IOException {
        Path file = sample.resolve("src/main/java").resolve(source);
        Files.createDirectories(file.getParent());
        Files.writeString(file, text);
    }

    /** Where the install puts the baseline: this build's local repository, under a group of its own. */
    private static Path installed() {
        return Maven.localRepository().resolve(GROUP.replace('.', '/'));
    }

    private static void deleteTree(Path tree) throws IOException {
        if (Files.exists(tree)) {
            try (Stream<Path> files = Files.walk(tree)) {
                for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(file);
                }
            }
        }
    }
}
