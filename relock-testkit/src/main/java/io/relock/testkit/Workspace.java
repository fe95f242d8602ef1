package io.relock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.Comparator;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The testkit's directories on disk.
 *
 * <p>Layout under {@code ${java.io.tmpdir}/relock-testkit-<user>/}:
 * <ul>
 *   <li>{@code bin/} — redis-server binaries extracted from embedded-redis, shared by all JVMs;</li>
 *   <li>{@code jvm-<pid>/} — one per JVM: {@code pids/} (one file per live process the JVM
 *       started, read by the reaper) and the servers' data directories. The reaper deletes it
 *       when the JVM is gone.</li>
 * </ul>
 */
final class Workspace {

    private static final String JVM_DIRECTORY_PREFIX = "jvm-";
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");

    private static final Object LOCK = new Object();
    private static Path root; // guarded by LOCK
    private static Path jvmDirectory; // guarded by LOCK

    private Workspace() {
    }

    /**
     * Returns the per-user root directory, creating it (owner-only) on first use.
     *
     * @throws IllegalStateException if the directory exists but belongs to another user, since
     *     binaries are executed from it
     * @throws UncheckedIOException if it cannot be created
     */
    static Path root() {
        synchronized (LOCK) {
            if (root == null) {
                String user = System.getProperty("user.name", "unknown").replaceAll("[^A-Za-z0-9._-]", "_");
                Path dir = Path.of(System.getProperty("java.io.tmpdir"), "relock-testkit-" + user);
                try {
                    createPrivateDirectories(dir);
                    checkOwnedByCurrentUser(dir);
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot create the testkit directory " + dir, e);
                }
                root = dir;
            }
            return root;
        }
    }

    /**
     * Returns this JVM's directory, creating it on first use; the first call also removes the
     * directories that JVMs which are no longer alive left behind.
     *
     * @throws UncheckedIOException if it cannot be created
     */
    static Path jvmDirectory() {
        synchronized (LOCK) {
            if (jvmDirectory == null) {
                Path base = root();
                deleteStaleJvmDirectories(base);
                Path dir = base.resolve(JVM_DIRECTORY_PREFIX + ProcessHandle.current().pid());
                try {
                    createPrivateDirectories(dir);
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot create the testkit directory " + dir, e);
                }
                jvmDirectory = dir;
            }
            return jvmDirectory;
        }
    }

    /** Creates {@code dir} and missing parents, readable only by the current user where supported. */
    static void createPrivateDirectories(Path dir) throws IOException {
        if (isPosix()) {
            FileAttribute<Set<PosixFilePermission>> ownerOnly = PosixFilePermissions.asFileAttribute(OWNER_ONLY);
            Files.createDirectories(dir, ownerOnly);
        } else {
            Files.createDirectories(dir);
        }
    }

    /** Deletes {@code path} and everything below it; failures are ignored (best effort cleanup). */
    static void deleteQuietly(Path path) {
        try (Stream<Path> paths = Files.walk(path)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException ignored) {
                    // best effort: a file we cannot delete is left for the next cleanup
                }
            });
        } catch (NoSuchFileException ignored) {
            // already gone
        } catch (IOException | UncheckedIOException ignored) {
            // best effort, see above
        }
    }

    static boolean isPosix() {
        return FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
    }

    private static void checkOwnedByCurrentUser(Path dir) throws IOException {
        if (!isPosix()) {
            return;
        }
        // The owner of a file we just created is the current user, whatever user.name says.
        Path probe = Files.createTempFile("relock-testkit-", ".probe");
        UserPrincipal me;
        try {
            me = Files.getOwner(probe);
        } finally {
            Files.deleteIfExists(probe);
        }
        UserPrincipal owner = Files.getOwner(dir);
        if (!owner.equals(me)) {
            throw new IllegalStateException("testkit directory " + dir + " belongs to " + owner.getName()
                    + ", not to " + me.getName() + "; remove it or set java.io.tmpdir");
        }
        Files.setPosixFilePermissions(dir, OWNER_ONLY);
    }

    private static void deleteStaleJvmDirectories(Path base) {
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(base, JVM_DIRECTORY_PREFIX + "*")) {
            for (Path dir : dirs) {
                String suffix = dir.getFileName().toString().substring(JVM_DIRECTORY_PREFIX.length());
                long pid;
                try {
                    pid = Long.parseLong(suffix);
                } catch (NumberFormatException e) {
                    continue;
                }
                // Only the directory goes: the pids listed in it may belong to other processes by now.
                if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                    continue;
                }
                deleteQuietly(dir);
            }
        } catch (IOException ignored) {
            // best effort: stale directories only cost disk space
        }
    }
}
