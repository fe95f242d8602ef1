package io.relock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a {@link RedisServer}'s process is started, and starting it: the command line from the
 * server's settings, the process in the server's directory, and the wait until the port answers
 * PING as that very process. {@link #start} also picks the ports, and tries others while a port
 * is taken under it.
 *
 * @param configFile null: no config file
 * @param tlsPort 0: no TLS
 */
record ServerLaunch(Path binary, Path configFile, int port, int tlsPort, List<String> extraArgs, Duration startupTimeout,
        Path directory) {

    private static final Logger LOG = LoggerFactory.getLogger(RedisServer.class);

    private static final int PORT_ATTEMPTS = 5;
    /** Short: a probe that times out is simply repeated, and a long one delays noticing an early exit. */
    private static final Duration PROBE_TIMEOUT = Duration.ofMillis(250);
    private static final long PROBE_INTERVAL_MILLIS = 10;
    private static final int LOG_TAIL_LINES = 30;

    /**
     * Starts a server on {@code requestedPort} (0: a free one), and on a free TLS port if
     * {@code tls}, in a new directory; returns it once it answers PING.
     *
     * @throws RedisServer.StartupException if it does not start, even on other ports where that may help
     */
    static RedisServer start(Path binary, Path configFile, int requestedPort, boolean tls, List<String> options,
            Duration startupTimeout) {
        // A taken TLS port shows up like a taken port; with a fixed port, another TLS port may still work.
        int attempts = requestedPort == 0 || tls ? PORT_ATTEMPTS : 1;
        for (int attempt = 1; ; attempt++) {
            int chosenPort = requestedPort == 0 ? freePort(0) : requestedPort;
            int chosenTlsPort = tls ? freePort(chosenPort) : 0;
            Path directory;
            try {
                directory = Files.createTempDirectory(Workspace.jvmDirectory(), "redis-" + chosenPort + "-");
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create a directory for redis-server", e);
            }
            RedisServer server = new RedisServer(new ServerLaunch(binary, configFile, chosenPort, chosenTlsPort, options,
                    startupTimeout, directory));
            try {
                server.launch();
                return server;
            } catch (RedisServer.StartupException e) {
                Workspace.deleteQuietly(directory);
                if (!e.portInUse() || attempt >= attempts) {
                    throw e;
                }
                LOG.debug("port {} was taken before redis-server could bind it; trying another", chosenPort);
            }
        }
    }

    /** Starts the process on {@link #port}, its output appended to its log; does not wait for it. */
    Process spawn() {
        List<String> command = new ArrayList<>();
        command.add(binary.toString());
        if (configFile != null) {
            // Only the first argument may name the config file; options follow and override it.
            command.add(configFile.toString());
        }
        command.addAll(List.of(
                "--port", Integer.toString(port),
                "--bind", RedisServer.HOST,
                "--daemonize", "no",
                "--save", "",
                "--appendonly", "no",
                "--dir", directory.toString()));
        if (tlsPort != 0) {
            TlsCertificates certificates = TlsCertificates.get();
            command.addAll(List.of(
                    "--tls-port", Integer.toString(tlsPort),
                    "--tls-cert-file", certificates.certificate().toString(),
                    "--tls-key-file", certificates.privateKey().toString(),
                    "--tls-ca-cert-file", certificates.caCertificate().toString(),
                    "--tls-auth-clients", "no"));
        }
        command.addAll(extraArgs);
        Path log = directory.resolve(RedisServer.LOG_FILE);
        Process started;
        try {
            // Redis logs to stdout when no logfile is set; errors before logging starts go to stderr.
            started = ProcessTracker.start(new ProcessBuilder(command)
                    .directory(directory.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())));
        } catch (IOException e) {
            throw new RedisServer.StartupException("cannot run " + binary, e, false);
        }
        try {
            started.getOutputStream().close();
        } catch (IOException ignored) {
            // redis-server never reads stdin
        }
        return started;
    }

    /**
     * Waits until {@code started} answers PING on {@link #port} and returns its version.
     *
     * @throws RedisServer.StartupException if it exits first, or does not answer in time (it is then killed)
     */
    String awaitReady(Process started) {
        long deadline = System.nanoTime() + startupTimeout.toNanos();
        while (true) {
            if (!started.isAlive()) {
                String tail = logTail();
                throw new RedisServer.StartupException("redis-server on port " + port + " exited with code "
                        + started.exitValue() + " while starting; " + tail, null, tail.contains("Address already in use"));
            }
            try {
                if ("PONG".equals(Resp.call(RedisServer.HOST, port, PROBE_TIMEOUT, "PING"))) {
                    String info = (String) Resp.call(RedisServer.HOST, port, PROBE_TIMEOUT, "INFO", "server");
                    // The port may answer for another server that won a race for it; ours will then exit.
                    if (Long.toString(started.pid()).equals(infoField(info, "process_id"))) {
                        return infoField(info, "redis_version");
                    }
                }
            } catch (IOException | RedisServer.CommandException notReadyYet) {
                // not listening yet, or still loading
            }
            if (System.nanoTime() - deadline >= 0) {
                started.destroyForcibly();
                throw new RedisServer.StartupException("redis-server on port " + port + " did not answer PING within "
                        + startupTimeout + "; " + logTail(), null, false);
            }
            try {
                // Waiting for exit doubles as the pause between probes, and ends early if the server dies.
                started.waitFor(PROBE_INTERVAL_MILLIS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                started.destroyForcibly();
                throw new RedisServer.StartupException("interrupted while waiting for redis-server on port " + port
                        + " to start", e, false);
            }
        }
    }

    private static String infoField(String info, String name) {
        for (String line : info.split("\r\n")) {
            if (line.startsWith(name + ":")) {
                return line.substring(name.length() + 1).trim();
            }
        }
        return null;
    }

    private String logTail() {
        Path log = directory.resolve(RedisServer.LOG_FILE);
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            List<String> tail = lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size());
            return "last lines of " + log + ":\n" + String.join("\n", tail);
        } catch (NoSuchFileException e) {
            return "it wrote no log (" + log + ")";
        } catch (IOException e) {
            return "its log " + log + " cannot be read: " + e;
        }
    }

    /** Returns a free loopback port other than 6379 and {@code taken} (0: none taken). */
    private static int freePort(int taken) {
        for (int attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
            try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(RedisServer.HOST))) {
                int candidate = socket.getLocalPort();
                if (candidate != RedisServer.DEFAULT_REDIS_PORT && candidate != taken) {
                    return candidate;
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot find a free port on " + RedisServer.HOST, e);
            }
        }
        throw new IllegalStateException("cannot find a free port on " + RedisServer.HOST + " other than "
                + RedisServer.DEFAULT_REDIS_PORT);
    }
}
