package io.relock.release;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * The release profile, run as a maintainer runs it, minus the upload: a copy of this repository
 * at a release version ({@code -SNAPSHOT} dropped), {@code mvn -Prelease deploy -DskipUpload=true}
 * signing with a {@link ThrowawayKey}, then every entry of the bundle it leaves for the Central
 * Publisher Portal is checked as the portal would: each published module (relock-bom's list,
 * the BOM and the parent POM) with its jar, sources, Javadoc and POM, each signed and
 * checksummed, nothing else, and every module's effective POM with the metadata Central
 * requires. The copy is built with tests skipped; a module that is not published (relock-cli)
 * is built too, to see it stay out of the bundle.
 */
class ReleaseBundleTest {

    /** Not published (maven.deploy.skip), built beside the published ones. */
    private static final String UNPUBLISHED_MODULE = "relock-cli";
    private static final List<String> SIGNATURE_AND_CHECKSUMS = List.of(".asc", ".md5", ".sha1");
    private static final Map<String, String> CHECKSUMS = Map.of(
            ".md5", "MD5", ".sha1", "SHA-1", ".sha256", "SHA-256", ".sha512", "SHA-512");

    /** The copy, the build's log and its effective POMs: in target/, for a look after a failure. */
    private static Path work;
    private static Path copy;
    private static String releaseVersion;
    private static ThrowawayKey key;
    private static Set<String> published;
    private static Map<String, byte[]> bundle;
    private static Map<String, Element> effectivePoms;
    private static Element parentPom;

    @BeforeAll
    static void buildTheBundle() throws Exception {
        Path root = Path.of(property("relock.root")).toRealPath();
        // In a release build (RELEASING.md) the version is a release version already.
        String version = property("relock.version");
        releaseVersion = version.endsWith("-SNAPSHOT")
                ? version.substring(0, version.length() - "-SNAPSHOT".length())
                : version;

        work = Path.of(property("relock.release.check.dir"));
        deleteTree(work);
        copy = work.resolve("relock");
        copySources(root, copy);
        setVersion(copy, version, releaseVersion);
        published = publishedModules(copy.resolve("relock-bom/pom.xml"));
        parentPom = parse(copy.resolve("pom.xml"));

        key = ThrowawayKey.generate();
        Path effective = work.resolve("effective-poms.xml");
        Path log = work.resolve("release-build.log");
        runReleaseBuild(effective, log);

        bundle = unzip(copy.resolve("target/central-publishing/central-bundle.zip"));
        effectivePoms = effectivePoms(parse(effective));
    }

    @Test
    void bundleHoldsEveryPublishedModuleAndNothingElse() {
        Set<String> expected = new TreeSet<>(published);
        expected.add("relock-parent");
        expected.add("relock-bom");

        Set<String> inBundle = new TreeSet<>();
        for (String entry : bundle.keySet()) {
            String[] parts = entry.split("/");
            assertThat(parts).as("bundle entry %s", entry).hasSize(5).startsWith("io", "relock");
            inBundle.add(parts[2]);
        }

        assertThat(inBundle).isEqualTo(expected).doesNotContain(UNPUBLISHED_MODULE);
        assertThat(bundle.keySet()).allMatch(entry -> entry.contains("/" + releaseVersion + "/"));
    }

    @Test
    void everyJarModuleHasItsJarSourcesJavadocAndPom() throws IOException {
        for (String module : published) {
            String base = base(module);
            assertThat(bundle).as(module).containsKeys(
                    base + ".pom", base + ".jar", base + "-sources.jar", base + "-javadoc.jar");

            Set<String> classes = names(bundle.get(base + ".jar"), ".class");
            Set<String> sources = names(bundle.get(base + "-sources.jar"), ".java", ".kt");
            Set<String> javadoc = names(bundle.get(base + "-javadoc.jar"), ".html");
            if (!classes.isEmpty()) {
                assertThat(sources).as("sources of %s", module).isNotEmpty();
                assertThat(javadoc).as("Javadoc of %s", module).contains("index.html");
            }
        }
        assertThat(names(bundle.get(base("relock-core") + ".jar"), ".class"))
                .contains("io/relock/Relock.class");
        assertThat(names(bundle.get(base("relock-kotlin") + "-javadoc.jar"), ".html"))
                .as("Dokka's Javadoc pages of relock-kotlin")
                .anyMatch(page -> page.startsWith("io/relock/kotlin/"));
        assertThat(bundle).containsKeys(base("relock-parent") + ".pom", base("relock-bom") + ".pom");
    }

    @Test
    void everyFileIsSignedByTheKeyAndCarriesCorrectChecksums() throws Exception {
        List<String> files = bundle.keySet().stream()
                .filter(entry -> !entry.endsWith(".asc") && CHECKSUMS.keySet().stream().noneMatch(entry::endsWith))
                .sorted()
                .toList();
        assertThat(files).hasSizeGreaterThan(published.size() * 4);

        for (String file : files) {
            for (String suffix : SIGNATURE_AND_CHECKSUMS) {
                assertThat(bundle).as("%s%s", file, suffix).containsKey(file + suffix);
            }
            byte[] data = bundle.get(file);
            assertThat(key.signed(bundle.get(file + ".asc"), data))
                    .as("%s.asc is the throwaway key's signature of %s", file, file).isTrue();
            for (Map.Entry<String, String> checksum : CHECKSUMS.entrySet()) {
                byte[] recorded = bundle.get(file + checksum.getKey());
                if (recorded != null) {
                    assertThat(new String(recorded, StandardCharsets.US_ASCII).trim().split("\\s+")[0])
                            .as("%s%s", file, checksum.getKey())
                            .isEqualToIgnoringCase(digest(checksum.getValue(), data));
                }
            }
        }
    }

    @Test
    void everyPublishedPomNamesItsProjectLicenceDevelopersAndSources() {
        String url = text(parentPom, "url");
        Element parentScm = child(parentPom, "scm");
        assertThat(url).startsWith("https://");

        Set<String> modules = new TreeSet<>(published);
        modules.add("relock-parent");
        modules.add("relock-bom");
        for (String module : modules) {
            Element pom = effectivePoms.get(module);
            assertThat(pom).as("effective POM of %s", module).isNotNull();
            assertThat(text(pom, "version")).as(module).isEqualTo(releaseVersion);
            assertThat(text(pom, "name")).as("name of %s", module).isNotBlank();
            assertThat(text(pom, "description")).as("description of %s", module).isNotBlank();
            assertThat(text(pom, "url")).as("url of %s", module).isEqualTo(url);

            Element license = child(child(pom, "licenses"), "license");
            assertThat(text(license, "name")).as("licence of %s", module).isNotBlank();
            assertThat(text(license, "url")).as("licence of %s", module).startsWith("https://");
            assertThat(text(child(child(pom, "developers"), "developer"), "name"))
                    .as("developer of %s", module).isNotBlank();

            Element scm = child(pom, "scm");
            for (String field : List.of("connection", "developerConnection", "url")) {
                assertThat(text(scm, field)).as("scm %s of %s", field, module)
                        .isNotBlank().isEqualTo(text(parentScm, field));
            }
        }
    }

    private static void runReleaseBuild(Path effective, Path log) throws IOException, InterruptedException {
        Set<String> modules = new TreeSet<>(published);
        modules.add("relock-bom");
        modules.add(UNPUBLISHED_MODULE);
        Maven.run(copy.resolve("pom.xml"), log,
                Map.of("MAVEN_GPG_KEY", key.armoredSecretKey(), "MAVEN_GPG_PASSPHRASE", key.passphrase(),
                        // A maintainer's own setting would name another key (empty: unset).
                        "MAVEN_GPG_KEY_FINGERPRINT", ""),
                List.of("-Prelease",
                        "-pl", "." + modules.stream().map(module -> "," + module).collect(Collectors.joining()),
                        "-am",
                        // A check of the bundle, not of the code: the suite runs in the build around.
                        "-DskipTests", "-Dinvoker.skip=true", "-Djapicmp.skip=true",
                        // Nothing of this copy goes to the local repository or to the portal.
                        "-Dmaven.install.skip=true", "-DskipUpload=true",
                        "deploy",
                        "org.apache.maven.plugins:maven-help-plugin:3.5.1:effective-pom", "-Doutput=" + effective))
                .passed();
    }

    /** The working tree without build output or Git's files. */
    private static void copySources(Path from, Path to) throws IOException {
        Files.walkFileTree(from, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                String name = dir.getFileName().toString();
                if (!dir.equals(from) && (name.equals("target") || name.equals(".git"))) {
                    return FileVisitResult.SKIP_SUBTREE;
                }
                Files.createDirectories(to.resolve(from.relativize(dir).toString()));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                if (attrs.isRegularFile() && !file.getFileName().toString().equals(".git")) {
                    Files.copy(file, to.resolve(from.relativize(file).toString()));
                }
                return FileVisitResult.CONTINUE;
            }
        });
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

    /** What a maintainer does before a release (RELEASING.md): the version in every POM. */
    private static void setVersion(Path tree, String from, String to) throws IOException {
        String old = "<version>" + from + "</version>";
        List<Path> poms;
        try (Stream<Path> files = Files.walk(tree)) {
            poms = files.filter(file -> file.getFileName().toString().equals("pom.xml")).toList();
        }
        for (Path pom : poms) {
            String text = Files.readString(pom);
            Files.writeString(pom, text.replace(old, "<version>" + to + "</version>"));
        }
        assertThat(Files.readString(tree.resolve("pom.xml"))).contains("<version>" + to + "</version>");
    }

    private static Set<String> publishedModules(Path bom) throws Exception {
        Element dependencies = child(child(parse(bom), "dependencyManagement"), "dependencies");
        Set<String> modules = new TreeSet<>();
        for (Node node = dependencies.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element dependency && text(dependency, "groupId").equals("io.relock")) {
                modules.add(text(dependency, "artifactId"));
            }
        }
        assertThat(modules).contains("relock-core");
        return modules;
    }

    private static Map<String, Element> effectivePoms(Element root) {
        Map<String, Element> poms = new LinkedHashMap<>();
        if (root.getTagName().equals("project")) {
            poms.put(text(root, "artifactId"), root);
        }
        for (Node node = root.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element project && project.getTagName().equals("project")) {
                poms.put(text(project, "artifactId"), project);
            }
        }
        return poms;
    }

    private static Map<String, byte[]> unzip(Path zip) throws IOException {
        assertThat(zip).as("the bundle").isRegularFile();
        Map<String, byte[]> entries = new TreeMap<>();
        try (ZipInputStream in = new ZipInputStream(Files.newInputStream(zip))) {
            for (ZipEntry entry = in.getNextEntry(); entry != null; entry = in.getNextEntry()) {
                if (!entry.isDirectory()) {
                    entries.put(entry.getName(), in.readAllBytes());
                }
            }
        }
        return entries;
    }

    /** The names of a jar's entries that end with one of the suffixes. */
    private static Set<String> names(byte[] jar, String... suffixes) throws IOException {
        Set<String> names = new TreeSet<>();
        try (ZipInputStream in = new ZipInputStream(new ByteArrayInputStream(jar))) {
            for (ZipEntry entry = in.getNextEntry(); entry != null; entry = in.getNextEntry()) {
                for (String suffix : suffixes) {
                    if (entry.getName().endsWith(suffix)) {
                        names.add(entry.getName());
                    }
                }
            }
        }
        return names;
    }

    private static String base(String module) {
        return "io/relock/" + module + "/" + releaseVersion + "/" + module + "-" + releaseVersion;
    }

    private static String digest(String algorithm, byte[] data) throws NoSuchAlgorithmException {
        return HexFormat.of().formatHex(MessageDigest.getInstance(algorithm).digest(data));
    }

    private static Element parse(Path xml) throws Exception {
        try (InputStream in = Files.newInputStream(xml)) {
            Document document = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(in);
            return document.getDocumentElement();
        }
    }

    /** The first child element of that name; fails the test when there is none. */
    private static Element child(Element parent, String name) {
        for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element element && element.getTagName().equals(name)) {
                return element;
            }
        }
        return fail("<%s> has no <%s>", parent.getTagName(), name);
    }

    private static String text(Element parent, String name) {
        return child(parent, name).getTextContent().trim();
    }

    private static String property(String name) {
        return Maven.property(name);
    }
}
