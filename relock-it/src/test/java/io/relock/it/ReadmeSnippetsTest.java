package io.relock.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The documentation's snippets are the text that the consumer builds in {@code src/it} compile:
 * every region between {@code tag::NAME[]} and {@code end::NAME[]} there must appear line for line
 * (indentation removed) in the one document that {@link #EXPECTED_TAGS} names for it (README.md or
 * a guide under docs/), and the published modules, relock-bom and the documents' coordinates must
 * agree.
 */
class ReadmeSnippetsTest {

    /**
     * Every snippet the consumer builds are meant to carry, and the document it must appear in; a
     * snippet that disappears from the builds, or from its document, fails here.
     */
    private static final Map<String, String> EXPECTED_TAGS = Map.ofEntries(
            Map.entry("quickstart-dependencies", "README.md"),
            Map.entry("quickstart-properties", "README.md"),
            Map.entry("quickstart-compiler-plugin", "README.md"),
            Map.entry("slf4j-provider", "README.md"),
            Map.entry("bom-import", "README.md"),
            Map.entry("quickstart-imports", "README.md"),
            Map.entry("quickstart-config", "README.md"),
            Map.entry("quickstart-code", "README.md"),
            Map.entry("testkit-imports", "docs/testing.md"),
            Map.entry("testkit-example", "docs/testing.md"),
            Map.entry("micrometer-dependency", "docs/operations.md"),
            Map.entry("micrometer-imports", "docs/operations.md"),
            Map.entry("micrometer-code", "docs/operations.md"),
            Map.entry("micrometer-shutdown", "docs/operations.md"),
            Map.entry("starter-dependency", "docs/spring.md"),
            Map.entry("recharge-service", "docs/spring.md"),
            Map.entry("spring-plain-dependency", "docs/spring.md"),
            Map.entry("spring-plain-config", "docs/spring.md"),
            Map.entry("scheduled-job", "docs/leader-election-and-jobs.md"),
            Map.entry("spring-integration-dependency", "docs/migrating-from-spring-integration.md"),
            Map.entry("spring-integration-imports", "docs/migrating-from-spring-integration.md"),
            Map.entry("spring-integration-bean", "docs/migrating-from-spring-integration.md"),
            Map.entry("reactor-dependency", "docs/reactive-and-kotlin.md"),
            Map.entry("reactor-imports", "docs/reactive-and-kotlin.md"),
            Map.entry("reactor-code", "docs/reactive-and-kotlin.md"),
            Map.entry("reactor-starter-dependency", "docs/reactive-and-kotlin.md"),
            Map.entry("reactive-recharge-service", "docs/reactive-and-kotlin.md"),
            Map.entry("kotlin-dependency", "docs/reactive-and-kotlin.md"),
            Map.entry("kotlin-properties", "docs/reactive-and-kotlin.md"),
            Map.entry("kotlin-plugin", "docs/reactive-and-kotlin.md"),
            Map.entry("kotlin-imports", "docs/reactive-and-kotlin.md"),
            Map.entry("kotlin-code", "docs/reactive-and-kotlin.md"),
            Map.entry("jdbc-dependencies", "docs/databases.md"),
            Map.entry("jdbc-imports", "docs/databases.md"),
            Map.entry("jdbc-code", "docs/databases.md"),
            Map.entry("jdbc-lease-check", "docs/databases.md"),
            Map.entry("zookeeper-dependencies", "docs/zookeeper.md"),
            Map.entry("zookeeper-imports", "docs/zookeeper.md"),
            Map.entry("zookeeper-code", "docs/zookeeper.md"));

    private static final Pattern TAG = Pattern.compile("tag::([a-z0-9-]+)\\[\\]");
    private static final Pattern END = Pattern.compile("end::([a-z0-9-]+)\\[\\]");
    private static final Pattern RELOCK_ARTIFACT = Pattern.compile("<artifactId>(relock-[a-z0-9.-]+)</artifactId>");
    private static final Pattern MAVEN_COORDINATES = Pattern.compile(
            "<groupId>io\\.relock</groupId>\\s*<artifactId>([^<]+)</artifactId>\\s*<version>([^<]+)</version>");
    private static final Pattern GRADLE_COORDINATES = Pattern.compile("\"io\\.relock:([a-z0-9-]+)(?::([^\"]+))?\"");

    private static final Path MODULE = Path.of(System.getProperty("basedir", "")).toAbsolutePath();
    private static final Path ROOT = MODULE.getParent();
    private static final String VERSION = System.getProperty("relock.version", "");

    @Test
    void everyTaggedRegionOfTheConsumerBuildsIsInItsDocumentVerbatim() {
        Map<String, List<String>> regions = regions(MODULE.resolve("src/it"));

        assertThat(regions).isNotEmpty();
        regions.forEach((where, region) -> {
            String document = EXPECTED_TAGS.get(where.substring(where.lastIndexOf('#') + 1));
            assertThat(document).as("the document of %s (EXPECTED_TAGS has no entry for it)", where).isNotNull();
            assertThat(findIn(lines(ROOT.resolve(document)), region))
                    .as("%s is not in %s as it is in the consumer build:%n%s", where, document, String.join("\n", region))
                    .isGreaterThanOrEqualTo(0);
        });
    }

    @Test
    void theConsumerBuildsCarryEverySnippetTheyAreMeantTo() {
        Set<String> tags = new TreeSet<>();
        regions(MODULE.resolve("src/it")).keySet().forEach(where -> tags.add(where.substring(where.lastIndexOf('#') + 1)));

        assertThat(tags).containsExactlyInAnyOrderElementsOf(EXPECTED_TAGS.keySet());
    }

    @Test
    void ciRunsTheReadmesTestCommandAndNothingElse() {
        List<String> readme = lines(ROOT.resolve("README.md"));
        List<String> commands = readme.subList(readme.indexOf("## Try it"), readme.indexOf("## Quick start")).stream()
                .filter(line -> line.startsWith("mvn ")).map(line -> line.replaceFirst("\\s*#.*$", "")).toList();
        List<String> ci = lines(ROOT.resolve(".ci/run")).stream()
                .filter(line -> !line.isBlank() && !line.startsWith("#") && !line.startsWith("set ") && !line.startsWith("cd "))
                .toList();

        assertThat(commands).as("the README's two commands").containsExactly("mvn -q -B -Pdemo -DskipTests verify", "mvn -B verify");
        assertThat(ci).as("what .ci/run runs").containsExactly(commands.get(1));
    }

    @Test
    void aRegionIsFoundOnlyWhenEveryLineMatches() {
        List<String> readme = List.of("```java", "try (Relock relock = Relock.create(config)) {", "    lock.lock();", "}", "```");

        assertThat(findIn(readme, dedent(List.of("        try (Relock relock = Relock.create(config)) {",
                "            lock.lock();", "        }")))).isEqualTo(1);
        assertThat(findIn(readme, dedent(List.of("try (Relock relock = Relock.create(config)) {",
                "    lock.tryLock();", "}")))).isEqualTo(-1);
    }

    @Test
    void anUnclosedRegionIsAnError() {
        assertThatThrownBy(() -> regionsOf("Demo.java", List.of("// tag::demo[]", "int x;")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("Demo.java").hasMessageContaining("demo");
    }

    @Test
    void relockBomManagesExactlyThePublishedModulesAndTheConsumerBuildsInstallThemAll() {
        Set<String> published = publishedModules();
        Set<String> managed = artifactIds(ROOT.resolve("relock-bom/pom.xml"));
        Set<String> installed = artifactIds(MODULE.resolve("pom.xml"));

        assertThat(published).contains("relock-core", "relock-testkit", "relock-micrometer", "relock-spring",
                "relock-spring-boot-autoconfigure", "relock-spring-boot-starter");
        assertThat(managed).containsExactlyInAnyOrderElementsOf(published);
        assertThat(installed).containsAll(published).contains("relock-bom");
    }

    @Test
    void theDocumentsNameRelockArtifactsThatExistInThisBuildsVersion() {
        Set<String> known = new LinkedHashSet<>(publishedModules());
        known.add("relock-bom");
        int mavenCount = 0;
        int gradleCount = 0;

        for (Path document : documents()) {
            String text = read(document);
            String name = ROOT.relativize(document).toString();
            Matcher maven = MAVEN_COORDINATES.matcher(text);
            while (maven.find()) {
                mavenCount++;
                assertThat(maven.group(1)).as("a Maven dependency in %s", name).isIn(known);
                assertThat(maven.group(2)).as("the version of %s in %s", maven.group(1), name).isEqualTo(VERSION);
            }
            Matcher gradle = GRADLE_COORDINATES.matcher(text);
            while (gradle.find()) {
                gradleCount++;
                assertThat(gradle.group(1)).as("a Gradle dependency in %s", name).isIn(known);
                if (gradle.group(2) != null) {
                    assertThat(gradle.group(2)).as("the version of %s in %s", gradle.group(1), name).isEqualTo(VERSION);
                }
            }
        }
        assertThat(mavenCount).as("Maven coordinates in the documents").isPositive();
        assertThat(gradleCount).as("Gradle coordinates in the documents").isPositive();
    }

    /** README.md and every guide under docs/. */
    static List<Path> documents() {
        List<Path> documents = new ArrayList<>();
        documents.add(ROOT.resolve("README.md"));
        try (Stream<Path> guides = Files.list(ROOT.resolve("docs"))) {
            guides.filter(file -> file.toString().endsWith(".md")).sorted().forEach(documents::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return documents;
    }

    /** Regions of every file under {@code dir}, keyed by "file#tag". */
    private static Map<String, List<String>> regions(Path dir) {
        Map<String, List<String>> regions = new TreeMap<>();
        try (Stream<Path> files = Files.walk(dir)) {
            files.filter(Files::isRegularFile).sorted().forEach(file ->
                    regions.putAll(regionsOf(MODULE.relativize(file).toString(), lines(file))));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return regions;
    }

    private static Map<String, List<String>> regionsOf(String file, List<String> lines) {
        Map<String, List<String>> regions = new TreeMap<>();
        String open = null;
        List<String> region = new ArrayList<>();
        for (String line : lines) {
            Matcher tag = TAG.matcher(line);
            Matcher end = END.matcher(line);
            if (tag.find()) {
                if (open != null) {
                    throw new IllegalStateException(file + ": region " + tag.group(1) + " starts inside " + open);
                }
                open = tag.group(1);
                region = new ArrayList<>();
            } else if (end.find()) {
                if (!end.group(1).equals(open)) {
                    throw new IllegalStateException(file + ": end of " + end.group(1) + " while in " + open);
                }
                if (regions.put(file + "#" + open, dedent(region)) != null) {
                    throw new IllegalStateException(file + ": region " + open + " twice");
                }
                open = null;
            } else if (open != null) {
                region.add(line);
            }
        }
        if (open != null) {
            throw new IllegalStateException(file + ": region " + open + " is not closed");
        }
        return regions;
    }

    private static List<String> dedent(List<String> region) {
        int indent = region.stream().filter(line -> !line.isBlank())
                .mapToInt(line -> line.length() - line.stripLeading().length()).min().orElse(0);
        return region.stream().map(line -> line.isBlank() ? "" : line.substring(indent).stripTrailing()).toList();
    }

    /** Index of the README line where {@code region} starts, or -1. */
    private static int findIn(List<String> readme, List<String> region) {
        for (int start = 0; start + region.size() <= readme.size(); start++) {
            int matched = 0;
            while (matched < region.size() && readme.get(start + matched).stripTrailing().equals(region.get(matched))) {
                matched++;
            }
            if (matched == region.size() && !region.isEmpty()) {
                return start;
            }
        }
        return -1;
    }

    /** Modules listed in the root POM that are deployed (no maven.deploy.skip), relock-bom aside. */
    private static Set<String> publishedModules() {
        Set<String> published = new TreeSet<>();
        Matcher module = Pattern.compile("<module>([^<]+)</module>").matcher(read(ROOT.resolve("pom.xml")));
        while (module.find()) {
            String pom = read(ROOT.resolve(module.group(1)).resolve("pom.xml"));
            if (!module.group(1).equals("relock-bom") && !pom.contains("<maven.deploy.skip>true</maven.deploy.skip>")) {
                published.add(module.group(1));
            }
        }
        return published;
    }

    private static Set<String> artifactIds(Path pom) {
        String text = read(pom);
        Set<String> ids = new TreeSet<>();
        Matcher artifact = RELOCK_ARTIFACT.matcher(text.substring(text.indexOf("<dependencies>")));
        while (artifact.find()) {
            ids.add(artifact.group(1));
        }
        return ids;
    }

    private static List<String> lines(Path file) {
        return read(file).lines().toList();
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
