package io.relock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real {@code redis-server} process on a loopback port, for tests.
 *
 * <p>The server runs in the foreground as a child of this JVM, bound to {@code 127.0.0.1},
 * without persistence ({@code --save "" --appendonly no}), in a fresh temporary directory that
 * also holds its log. It never outlives the JVM: a shutdown hook kills it on normal exit, and a
 * reaper process kills it if the JVM itself is killed.
 *
 * <pre>{@code
 * try (RedisServer server = RedisServer.start()) {
 *     server.command("SET", "k", "v");
 *     server.kill();      // like a crash: connections drop, the port refuses
 *     server.restart();   // same port, empty data set
 * }
 * }</pre>
 *
 * <p>Fault injection: {@link #kill()} (SIGKILL), {@link #pause()} / {@link #resume()}
 * (SIGSTOP / SIGCONT: connections stay open but nothing is answered), {@link #restart()}.
 * {@link #command(String...)} talks to the server through a tiny built-in client, so tests can
 * set up and inspect data without a Redis client library.
 *
 * <p>The {@linkplain #builder() builder} also starts replicas ({@link Builder#replicaOf}),
 * Sentinels ({@link Builder#sentinel()} with a {@link Builder#configFile config file}) and
 * servers that accept TLS next to plain connections ({@link Builder#tls()}); see
 * {@link SentinelTopology} and {@link ClusterTopology} for whole topologies.
 *
 * <p>Thread-safe: lifecycle methods are serialised; {@link #command(String...)} may be called
 * from any thread at any time. POSIX only (Linux, macOS).
 */
public final class RedisServer implements AutoCloseable {

    /** Loopback address every server binds to. */
    public static final String HOST = "127.0.0.1";

    /** How long {@link #start()} waits for a new server to answer PING, unless the builder says otherwise. */
    public static final Duration DEFAULT_STARTUP_TIMEOUT = Duration.ofSeconds(10);

    /** Connect and read timeout of {@link #command(String...)}. */
    public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(5);

    private static final Logger LOG = LoggerFactory.getLogger(RedisServer.class);

    /** The default Redis port; a developer's real server is likely there, so it is never used. */
    static final int DEFAULT_REDIS_PORT = 6379;
    private static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration KILL_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration STOP_SIGNAL_TIMEOUT = Duration.ofSeconds(5);
    static final String LOG_FILE = "redis.log";
    /** Options the testkit sets itself: overriding them would break readiness checks or cleanup. */
    private static final Set<String> RESERVED_OPTIONS = Set.of("port", "bind", "dir", "logfile", "daemonize", "tls-port");

    private final ServerLaunch launch;
    private final int port;
    private final int tlsPort; // 0: no TLS
    private final Path directory;

    private volatile Process process; // replaced only under this object's lock
    private volatile String version;
    private boolean paused; // guarded by this

    RedisServer(ServerLaunch launch) {
        this.launch = launch;
        this.port = launch.port();
        this.tlsPort = launch.tlsPort();
        this.directory = launch.directory();
    }

    /**
     * Starts a standalone server on a free loopback port with the binary that
     * {@link RedisBinary#locate()} finds, and returns once it answers PING.
     *
     * @return the running server
     * @throws IllegalStateException if no binary is found, or the server does not start or answer
     *     PING within {@link #DEFAULT_STARTUP_TIMEOUT}; the message then includes the tail of
     *     its log
     * @throws UncheckedIOException if its directory cannot be created
     */
    public static RedisServer start() {
        return builder().start();
    }

    /**
     * Returns a builder for a server with a fixed port, extra options, another binary or timeout.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return the host the server listens on: always {@value #HOST}} */
    public String host() {
        return HOST;
    }

    /** {@return its port, which stays the same across {@link #restart()}} */
    public int port() {
        return port;
    }

    /** {@return {@code redis://127.0.0.1:<port>}} */
    public String uri() {
        return "redis://" + HOST + ":" + port;
    }

    /** {@return whether the server also accepts TLS connections, on {@link #tlsPort()} ({@link Builder#tls()})} */
    public boolean isTls() {
        return tlsPort != 0;
    }

    /**
     * Returns the port on which the server accepts TLS connections; like {@link #port()}, it
     * stays the same across {@link #restart()}.
     *
     * @return the TLS port
     * @throws IllegalStateException if the server was not started with {@link Builder#tls()}
     */
    public int tlsPort() {
        if (tlsPort == 0) {
            throw new IllegalStateException("redis-server on port " + port + " was started without tls()");
        }
        return tlsPort;
    }

    /**
     * Returns {@code rediss://127.0.0.1:<tlsPort>}; clients must trust
     * {@link TlsCertificates#caCertificate()}.
     *
     * @return the TLS URI
     * @throws IllegalStateException if the server was not started with {@link Builder#tls()}
     */
    public String tlsUri() {
        return "rediss://" + HOST + ":" + tlsPort();
    }

    /** {@return the pid of the current process; a {@link #restart()} gives a new one} */
    public long pid() {
        return process.pid();
    }

    /** {@return whether the process is alive (a {@linkplain #pause() paused} server counts as running)} */
    public boolean isRunning() {
        return process.isAlive();
    }

    /** {@return whether the server is running and {@linkplain #pause() paused}} */
    public synchronized boolean isPaused() {
        return paused && isRunning();
    }

    /** {@return the server's version, as reported by {@code INFO server}, e.g. {@code 7.0.15}} */
    public String version() {
        return version;
    }

    /**
     * Returns the server's directory: its working directory and the home of its log file
     * {@code redis.log}. {@link #stop()} deletes it; so does the end of the JVM.
     *
     * @return the server's directory
     */
    public Path directory() {
        return directory;
    }

    /**
     * Stops the server gracefully ({@code SHUTDOWN NOSAVE}, after resuming it if paused), waits
     * for the process to exit, kills it if it has not exited within a few seconds, and deletes
     * its directory. Does nothing more if it is not running; may be called again.
     *
     * @throws IllegalStateException if the process survives even SIGKILL for 10 seconds
     */
    public synchronized void stop() {
        Process current = process;
        if (current.isAlive()) {
            if (paused) {
                Processes.signal(current.pid(), "CONT");
            }
            boolean shutdownSent = true;
            try {
                Resp.call(HOST, port, SHUTDOWN_TIMEOUT, "SHUTDOWN", "NOSAVE");
            } catch (IOException expected) {
                // A successful SHUTDOWN closes the connection without a reply.
            } catch (CommandException e) {
                LOG.debug("SHUTDOWN NOSAVE refused by {}: {}; killing it", this, e.getMessage());
                shutdownSent = false;
            }
            if (!shutdownSent || !Processes.awaitExit(current.toHandle(), SHUTDOWN_TIMEOUT)) {
                Processes.killAndAwait(current.toHandle(), KILL_TIMEOUT);
            }
            LOG.debug("stopped {}", this);
        }
        paused = false;
        Workspace.deleteQuietly(directory);
    }

    /**
     * Kills the server with SIGKILL, as in a crash, and waits until the process has exited: its
     * connections are reset and its port refuses connections. Data is lost. Does nothing if it
     * is not running. Use {@link #restart()} to bring it back.
     *
     * @throws IllegalStateException if the process is still alive 10 seconds after SIGKILL
     */
    public synchronized void kill() {
        Processes.killAndAwait(process.toHandle(), KILL_TIMEOUT);
        paused = false;
    }

    /**
     * Pauses the server with SIGSTOP and returns once the kernel reports it stopped: it keeps
     * its connections, and the kernel still accepts new ones, but it answers nothing until
     * {@link #resume()} — like a server stuck in a long GC pause or a frozen VM.
     *
     * @throws IllegalStateException if the server is not running, or does not stop within 5 seconds
     */
    public synchronized void pause() {
        requireRunning();
        Processes.signal(process.pid(), "STOP");
        paused = true;
        Processes.awaitStopped(process.pid(), STOP_SIGNAL_TIMEOUT);
    }

    /**
     * Resumes a paused server with SIGCONT; harmless if it is not paused.
     *
     * @throws IllegalStateException if the server is not running
     */
    public synchronized void resume() {
        requireRunning();
        Processes.signal(process.pid(), "CONT");
        paused = false;
    }

    /**
     * Restarts the server on the same port with the same options, and returns once it answers
     * PING. A running server is killed first (SIGKILL), so the data set is always empty
     * afterwards. Also brings back a {@linkplain #stop() stopped} server.
     *
     * @throws IllegalStateException if the server does not come back within the startup timeout,
     *     for example because another process took the port in the meantime; the message
     *     includes the tail of its log
     * @throws UncheckedIOException if its directory cannot be re-created
     */
    public synchronized void restart() {
        kill();
        try {
            Workspace.createPrivateDirectories(directory);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + directory, e);
        }
        launch();
    }

    /**
     * Runs one command with a {@linkplain #DEFAULT_COMMAND_TIMEOUT 5-second} timeout; see
     * {@link #command(Duration, String...)}.
     *
     * @param args the command and its arguments, e.g. {@code "SET", "key", "value"}
     * @return the reply, typed as described at {@link #command(Duration, String...)}
     * @throws CommandException if Redis replies with an error
     * @throws UncheckedIOException if the connection fails or times out
     */
    public Object command(String... args) {
        return command(DEFAULT_COMMAND_TIMEOUT, args);
    }

    /**
     * Runs one command on a new connection and returns the reply.
     *
     * <p>Replies map to: simple and bulk strings → {@link String} (UTF-8), integers →
     * {@link Long}, arrays → an unmodifiable {@code List<Object>} (nested as the reply is; an
     * error inside an array, as {@code EXEC} may return, is a {@link CommandException}
     * element), null bulk strings and null arrays → {@code null}.
     *
     * @param timeout bounds the connect and each read; a server that does not answer in time
     *     (for example a {@linkplain #pause() paused} one) makes the call fail with an
     *     {@link UncheckedIOException} caused by a {@link java.net.SocketTimeoutException}
     * @param args the command and its arguments, e.g. {@code "SET", "key", "value"}
     * @return the reply
     * @throws IllegalArgumentException if {@code args} is empty or {@code timeout} is not positive
     * @throws NullPointerException if {@code timeout}, {@code args} or one of its elements is null
     * @throws CommandException if Redis replies with an error; its message is the server's
     * @throws UncheckedIOException if the connection fails, times out or breaks
     */
    public Object command(Duration timeout, String... args) {
        Settings.requirePositive(timeout, "timeout");
        Objects.requireNonNull(args, "args must not be null");
        if (args.length == 0) {
            throw new IllegalArgumentException("args must not be empty");
        }
        for (int i = 0; i < args.length; i++) {
            Objects.requireNonNull(args[i], "args[" + i + "] must not be null");
        }
        try {
            return Resp.call(HOST, port, timeout, args);
        } catch (IOException e) {
            throw new UncheckedIOException(args[0] + " on " + HOST + ":" + port + " failed: " + e.getMessage(), e);
        }
    }

    /**
     * Returns the text of {@code INFO <section>}.
     *
     * @param section e.g. {@code server}, {@code memory}, {@code clients}
     * @return the text, lines separated by CRLF
     * @throws CommandException if Redis replies with an error
     * @throws UncheckedIOException if the connection fails or times out
     */
    public String info(String section) {
        Objects.requireNonNull(section, "section must not be null");
        return (String) command("INFO", section);
    }

    /**
     * Deletes all keys of all databases ({@code FLUSHALL}).
     *
     * @throws CommandException if Redis replies with an error
     * @throws UncheckedIOException if the connection fails or times out
     */
    public void flushAll() {
        command("FLUSHALL");
    }

    /** Same as {@link #stop()}. */
    @Override
    public void close() {
        stop();
    }

    @Override
    public String toString() {
        return "redis-server " + version + " on " + HOST + ":" + port + " (pid " + process.pid() + ")";
    }

    /** Starts the process on {@link #port} and waits until it answers PING as this process. */
    synchronized void launch() {
        Process started = launch.spawn();
        process = started;
        paused = false;
        version = launch.awaitReady(started);
        LOG.debug("started {} in {}", this, directory);
    }

    private void requireRunning() {
        if (!process.isAlive()) {
            throw new IllegalStateException("redis-server on port " + port + " is not running");
        }
    }

    /**
     * A Redis error reply, such as {@code ERR unknown command} or {@code WRONGTYPE ...}; the
     * message is the server's, prefix included.
     */
    public static final class CommandException extends RuntimeException {

        private static final long serialVersionUID = 1L;

        /**
         * Creates an exception for an error reply.
         *
         * @param message the error reply as the server sent it, without the leading {@code -}
         */
        public CommandException(String message) {
            super(message);
        }
    }

    /** A failed start; {@link #portInUse()} says whether another port may succeed. */
    static final class StartupException extends IllegalStateException {

        private static final long serialVersionUID = 1L;

        private final boolean portInUse;

        StartupException(String message, Throwable cause, boolean portInUse) {
            super(message, cause);
            this.portInUse = portInUse;
        }

        /** Returns whether the server failed because one of its ports was taken. */
        boolean portInUse() {
            return portInUse;
        }
    }

    /**
     * Configures and starts a {@link RedisServer}. Each setting may be given once; options
     * accumulate in order and are passed after the testkit's own, so they can override
     * {@code save} and {@code appendonly} (but not the options the testkit must control:
     * {@code port}, {@code bind}, {@code dir}, {@code logfile}, {@code daemonize},
     * {@code tls-port}).
     *
     * <p>Not thread-safe; a builder may start several servers.
     */
    public static final class Builder {

        private Integer port;
        private Path binary;
        private Duration startupTimeout;
        private Path configFile;
        private boolean sentinel;
        private RedisServer master;
        private boolean tls;
        private final List<String> args = new ArrayList<>();

        private Builder() {
        }

        /**
         * Sets the port; {@code 0} (the default) picks a free one, retrying with another if a
         * different process takes it first.
         *
         * @param port the port, or 0
         * @return this builder
         * @throws IllegalArgumentException if {@code port} is outside 0–65535 or is 6379 (the
         *     default Redis port, where a real server is likely to live)
         * @throws IllegalStateException if the port was already set
         */
        public Builder port(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port must be between 0 and 65535: " + port);
            }
            if (port == DEFAULT_REDIS_PORT) {
                throw new IllegalArgumentException("port must not be " + DEFAULT_REDIS_PORT
                        + ", the default Redis port, where a real server may run: " + port);
            }
            this.port = Settings.once(this.port, port, "port");
            return this;
        }

        /**
         * Adds the option {@code --name value}, e.g. {@code arg("maxmemory", "10mb")}.
         *
         * @param name the option's name, with or without the leading {@code --}
         * @param value its value; may be empty
         * @return this builder
         * @throws NullPointerException if {@code name} or {@code value} is null
         * @throws IllegalArgumentException if {@code name} is blank, contains whitespace, or is
         *     an option the testkit controls
         */
        public Builder arg(String name, String value) {
            Objects.requireNonNull(name, "name must not be null");
            Objects.requireNonNull(value, "value must not be null");
            String bare = name.startsWith("--") ? name.substring(2) : name;
            if (bare.isBlank() || !bare.equals(bare.strip()) || bare.chars().anyMatch(Character::isWhitespace)) {
                throw new IllegalArgumentException("name must be a non-blank option name without whitespace: '" + name + "'");
            }
            requireNotReserved(bare, "name");
            args.add("--" + bare);
            args.add(value);
            return this;
        }

        /**
         * Adds raw command-line arguments, passed to redis-server as they are, e.g.
         * {@code args("--maxmemory-policy", "allkeys-lru")}.
         *
         * @param args the arguments
         * @return this builder
         * @throws NullPointerException if {@code args} or one of its elements is null
         * @throws IllegalArgumentException if one of them names an option the testkit controls
         */
        public Builder args(String... args) {
            Objects.requireNonNull(args, "args must not be null");
            for (int i = 0; i < args.length; i++) {
                Objects.requireNonNull(args[i], "args[" + i + "] must not be null");
                if (args[i].startsWith("--")) {
                    requireNotReserved(args[i].substring(2), "args[" + i + "]");
                }
            }
            Collections.addAll(this.args, args);
            return this;
        }

        /**
         * Uses this redis-server binary instead of the one {@link RedisBinary#locate()} finds.
         *
         * @param binary the path of a redis-server executable
         * @return this builder
         * @throws NullPointerException if {@code binary} is null
         * @throws IllegalStateException if the binary was already set
         */
        public Builder binary(Path binary) {
            this.binary = Settings.once(this.binary, binary, "binary");
            return this;
        }

        /**
         * Sets how long {@link #start()} waits for the server to answer PING (default
         * {@link RedisServer#DEFAULT_STARTUP_TIMEOUT}); also used by {@link RedisServer#restart()}.
         *
         * @param startupTimeout how long to wait at most
         * @return this builder
         * @throws NullPointerException if {@code startupTimeout} is null
         * @throws IllegalArgumentException if it is not positive
         * @throws IllegalStateException if it was already set
         */
        public Builder startupTimeout(Duration startupTimeout) {
            this.startupTimeout = Settings.once(this.startupTimeout, Settings.requirePositive(startupTimeout, "startupTimeout"),
                    "startupTimeout");
            return this;
        }

        /**
         * Starts the server with this configuration file, passed as redis-server's first
         * argument; the command-line options (the testkit's and those given here) override it.
         * The file stays the caller's: the server may rewrite it ({@code CONFIG REWRITE}, and a
         * Sentinel keeps its state there), {@link RedisServer#restart()} starts from the file as
         * it then is, and {@link RedisServer#stop()} does not delete it.
         *
         * @param configFile an existing file, writable if the server is to rewrite it
         * @return this builder
         * @throws NullPointerException if {@code configFile} is null
         * @throws IllegalStateException if the config file was already set
         */
        public Builder configFile(Path configFile) {
            this.configFile = Settings.once(this.configFile, configFile, "configFile").toAbsolutePath();
            return this;
        }

        /**
         * Starts a Sentinel ({@code --sentinel}) instead of a data server. A Sentinel keeps its
         * state in its config file, so a {@link #configFile(Path)} holding at least one
         * {@code sentinel monitor} line is required; {@link SentinelTopology} writes one.
         *
         * @return this builder
         * @throws IllegalStateException if sentinel mode was already set, or {@link #replicaOf}
         *     or {@link #tls()} was
         */
        public Builder sentinel() {
            Settings.requireOff(sentinel, "sentinel()");
            if (master != null || tls) {
                throw new IllegalStateException("sentinel() conflicts with " + (master != null ? "replicaOf()" : "tls()"));
            }
            sentinel = true;
            return this;
        }

        /**
         * Starts the server as a replica of {@code master} ({@code --replicaof 127.0.0.1 <port>}).
         * The option is part of the command line, so a {@link RedisServer#restart()} makes the
         * server a replica of that master again, whatever {@code REPLICAOF} said in between.
         *
         * @param master the server to replicate
         * @return this builder
         * @throws NullPointerException if {@code master} is null
         * @throws IllegalStateException if a master was already set, or {@link #sentinel()} was
         */
        public Builder replicaOf(RedisServer master) {
            Objects.requireNonNull(master, "master must not be null");
            if (this.master != null) {
                throw new IllegalStateException("replicaOf was already set to " + this.master.uri());
            }
            if (sentinel) {
                throw new IllegalStateException("replicaOf() conflicts with sentinel()");
            }
            this.master = master;
            return this;
        }

        /**
         * Makes the server accept TLS connections on a second free port, {@link RedisServer#tlsPort()},
         * next to plain ones on {@link RedisServer#port()} (which {@link RedisServer#command} and
         * the readiness check keep using). Its certificate is {@link TlsCertificates#get()}'s:
         * issued by a CA generated for this JVM, for {@code 127.0.0.1} and {@code localhost}.
         * Clients need no certificate of their own ({@code tls-auth-clients no}). The binary
         * must be built with TLS ({@link RedisBinary#supportsTls()}).
         *
         * @return this builder
         * @throws IllegalStateException if TLS was already set, or {@link #sentinel()} was
         */
        public Builder tls() {
            Settings.requireOff(tls, "tls()");
            if (sentinel) {
                throw new IllegalStateException("tls() conflicts with sentinel()");
            }
            tls = true;
            return this;
        }

        /**
         * Starts the server and returns once it answers PING.
         *
         * @return the running server
         * @throws IllegalArgumentException if the binary set with {@link #binary(Path)} is not an
         *     executable file, or the {@link #configFile(Path)} is not a regular file
         * @throws IllegalStateException if no binary is found, if {@link #sentinel()} is set
         *     without a config file, or the server exits or does not answer PING within the
         *     startup timeout (with a free port: after a few attempts on different ports, if the
         *     port was taken); the message includes the tail of its log
         * @throws UncheckedIOException if its directory cannot be created
         */
        public RedisServer start() {
            Path executable = binary != null ? checkExecutable(binary) : RedisBinary.locate().path();
            if (sentinel && configFile == null) {
                throw new IllegalStateException("sentinel() needs a configFile(...) that Sentinel can rewrite");
            }
            if (configFile != null && !Files.isRegularFile(configFile)) {
                throw new IllegalArgumentException("configFile must be a regular file: " + configFile);
            }
            int requestedPort = port == null ? 0 : port;
            Duration timeout = startupTimeout == null ? DEFAULT_STARTUP_TIMEOUT : startupTimeout;
            List<String> options = new ArrayList<>();
            if (sentinel) {
                options.add("--sentinel");
            }
            if (master != null) {
                // Two arguments: redis-server would quote "host port" given as one.
                options.addAll(List.of("--replicaof", master.host(), Integer.toString(master.port())));
            }
            options.addAll(args);
            return ServerLaunch.start(executable, configFile, requestedPort, tls, List.copyOf(options), timeout);
        }

        private static Path checkExecutable(Path binary) {
            if (!Files.isRegularFile(binary) || !Files.isExecutable(binary)) {
                throw new IllegalArgumentException("binary must be an executable file: " + binary);
            }
            return binary;
        }

        private static void requireNotReserved(String option, String argumentName) {
            if (RESERVED_OPTIONS.contains(option.toLowerCase(Locale.ROOT))) {
                throw new IllegalArgumentException(argumentName + " must not set --" + option
                        + ", which the testkit controls (" + RESERVED_OPTIONS + ")");
            }
        }
    }
}
