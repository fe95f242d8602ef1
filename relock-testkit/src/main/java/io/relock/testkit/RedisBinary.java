package io.relock.testkit;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.net.URLConnection;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the {@code redis-server} binary that the testkit runs comes from.
 *
 * <p>Looked up in this order:
 * <ol>
 *   <li>the environment variable {@value #ENV_VARIABLE}, if set: the path of a
 *       {@code redis-server} binary (it must exist; there is no fallback, so a typo is noticed);</li>
 *   <li>{@code redis-server} on {@code PATH};</li>
 *   <li>the binary shipped inside {@code com.github.codemonstur:embedded-redis} for Linux
 *       (amd64, arm64, x86) and macOS (amd64, arm64), extracted once to
 *       {@code ${java.io.tmpdir}/relock-testkit-<user>/bin/} — so that a machine with only a JDK
 *       and Maven can run the tests.</li>
 * </ol>
 *
 * <p>Instances are immutable (whether the binary supports TLS is found out once, when first asked).
 */
public final class RedisBinary {

    /** The environment variable that names the redis-server binary to use. */
    public static final String ENV_VARIABLE = "RELOCK_REDIS_SERVER";

    /** {@link #source()} of a binary named by {@value #ENV_VARIABLE}. */
    public static final String SOURCE_ENV_VARIABLE = ENV_VARIABLE;

    /** {@link #source()} of a binary found on {@code PATH}. */
    public static final String SOURCE_PATH = "PATH";

    /** {@link #source()} of the binary extracted from embedded-redis. */
    public static final String SOURCE_EMBEDDED = "embedded-redis";

    private static final Logger LOG = LoggerFactory.getLogger(RedisBinary.class);
    private static final String BINARY_NAME = "redis-server";
    private static final Pattern VERSION = Pattern.compile("\\bv=(\\S+)");
    private static final int MAX_OUTPUT = 4096;
    /** An option no redis-server knows: the config error names it only if the options before it were accepted. */
    private static final String PROBE_OPTION = "relock-testkit-probe";

    private static final Object LOCK = new Object();
    private static RedisBinary located; // guarded by LOCK

    private final Path path;
    private final String source;
    private final String version;
    private volatile Boolean tls; // null until supportsTls() has run the binary

    private RedisBinary(Path path, String source, String version) {
        this.path = path;
        this.source = source;
        this.version = version;
    }

    /**
     * Locates redis-server using this process's environment; the result is cached for the
     * lifetime of the JVM, and logged (INFO) the first time.
     *
     * @return the binary
     * @throws IllegalStateException if {@value #ENV_VARIABLE} is set but does not name an
     *     executable file, if no binary is found at all (no variable, none on {@code PATH} and
     *     no embedded binary for this OS and architecture), or if the binary found does not
     *     run {@code --version}
     * @throws UncheckedIOException if the embedded binary cannot be extracted
     */
    public static RedisBinary locate() {
        synchronized (LOCK) {
            if (located == null) {
                located = locate(System.getenv());
                LOG.info("Using redis-server {} from {}: {}", located.version, located.source, located.path);
            }
            return located;
        }
    }

    /**
     * Locates redis-server using {@code env} instead of the process environment (only
     * {@value #ENV_VARIABLE} and {@code PATH} are read); not cached.
     *
     * @throws IllegalStateException and {@link UncheckedIOException} as {@link #locate()}
     */
    static RedisBinary locate(Map<String, String> env) {
        Objects.requireNonNull(env, "env must not be null");
        String configured = env.get(ENV_VARIABLE);
        if (configured != null && !configured.isBlank()) {
            return fromEnvironmentVariable(configured);
        }
        Path onPath = searchPath(env.get("PATH"));
        if (onPath != null) {
            return inspect(onPath, SOURCE_PATH);
        }
        return inspect(extractEmbedded(), SOURCE_EMBEDDED);
    }

    /** {@return the path of the binary} */
    public Path path() {
        return path;
    }

    /** {@return where it was found: {@value #SOURCE_ENV_VARIABLE}, {@value #SOURCE_PATH} or {@value #SOURCE_EMBEDDED}} */
    public String source() {
        return source;
    }

    /** {@return its version as reported by {@code redis-server --version}, e.g. {@code 7.0.15}} */
    public String version() {
        return version;
    }

    /**
     * Returns whether this redis-server is built with TLS, as {@link RedisServer.Builder#tls()}
     * needs. Found out once by running the binary with {@code --tls-port 0} followed by an
     * option it does not know: the configuration error it exits with names {@code tls-port}
     * if that option is unknown too. (A build with TLS as a loadable module counts as TLS-capable
     * here, but needs the module loaded.)
     *
     * @return whether the binary accepts the TLS options
     * @throws IllegalStateException if the binary cannot be run or does not finish within 10 seconds
     */
    public boolean supportsTls() {
        Boolean known = tls;
        if (known == null) {
            Output output = run(path, source, "--tls-port", "0", "--" + PROBE_OPTION, "yes");
            if (!output.text().contains(PROBE_OPTION) && !output.text().contains("tls-port")) {
                throw new IllegalStateException(path + " (from " + source + ") gave an unexpected answer to a TLS probe: "
                        + output.text());
            }
            known = !output.text().contains("tls-port");
            tls = known;
        }
        return known;
    }

    @Override
    public String toString() {
        return "redis-server " + version + " (" + source + ": " + path + ")";
    }

    /**
     * Returns the name of the embedded-redis resource for an OS and architecture, or
     * {@code null} if embedded-redis ships none.
     */
    static String embeddedResourceName(String osName, String osArch) {
        String os = osName.toLowerCase(Locale.ROOT);
        String arch = osArch.toLowerCase(Locale.ROOT);
        boolean amd64 = arch.equals("amd64") || arch.equals("x86_64");
        boolean arm64 = arch.equals("aarch64") || arch.equals("arm64");
        boolean x86 = arch.equals("x86") || arch.matches("i[3-6]86");
        if (os.contains("linux")) {
            if (amd64) {
                return "redis-server-6.2.6-v5-linux-amd64";
            }
            if (arm64) {
                return "redis-server-6.2.7-linux-arm64";
            }
            if (x86) {
                return "redis-server-6.2.7-linux-386";
            }
        } else if (os.contains("mac") || os.contains("darwin")) {
            if (amd64) {
                return "redis-server-6.2.6-v5-darwin-amd64";
            }
            if (arm64) {
                return "redis-server-6.2.6-v5-darwin-arm64";
            }
        }
        return null;
    }

    private static RedisBinary fromEnvironmentVariable(String value) {
        Path candidate;
        try {
            candidate = Path.of(value);
        } catch (InvalidPathException e) {
            throw new IllegalStateException(ENV_VARIABLE + " is not a valid path: " + value, e);
        }
        if (!Files.isRegularFile(candidate)) {
            throw new IllegalStateException(ENV_VARIABLE + " points to " + value
                    + ", which does not exist or is not a file; unset it to use redis-server from PATH or embedded-redis");
        }
        if (!Files.isExecutable(candidate)) {
            throw new IllegalStateException(ENV_VARIABLE + " points to " + value + ", which is not executable");
        }
        return inspect(candidate, SOURCE_ENV_VARIABLE);
    }

    private static Path searchPath(String pathVariable) {
        if (pathVariable == null) {
            return null;
        }
        for (String entry : pathVariable.split(Pattern.quote(File.pathSeparator))) {
            if (entry.isEmpty()) {
                continue;
            }
            try {
                Path candidate = Path.of(entry, BINARY_NAME);
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return candidate;
                }
            } catch (InvalidPathException e) {
                // a malformed PATH entry cannot hold the binary; keep looking
            }
        }
        return null;
    }

    private static Path extractEmbedded() {
        String osName = System.getProperty("os.name", "");
        String osArch = System.getProperty("os.arch", "");
        String resource = embeddedResourceName(osName, osArch);
        if (resource == null) {
            throw new IllegalStateException("no redis-server found: " + ENV_VARIABLE + " is not set, there is none on PATH, "
                    + "and embedded-redis has no binary for " + osName + "/" + osArch
                    + "; install Redis or set " + ENV_VARIABLE);
        }
        URL url = RedisBinary.class.getResource("/" + resource);
        if (url == null) {
            throw new IllegalStateException("no redis-server found: " + ENV_VARIABLE + " is not set, there is none on PATH, "
                    + "and the resource /" + resource + " (com.github.codemonstur:embedded-redis) is not on the classpath");
        }
        Path directory = Workspace.root().resolve("bin");
        Path target = directory.resolve(resource);
        try {
            Workspace.createPrivateDirectories(directory);
            URLConnection connection = url.openConnection();
            // Without this the JDK keeps the jar open for the rest of the JVM's life; closing the
            // stream closes it.
            connection.setUseCaches(false);
            try (InputStream in = connection.getInputStream()) {
                long size = connection.getContentLengthLong();
                if (Files.isRegularFile(target) && Files.isExecutable(target) && (size < 0 || Files.size(target) == size)) {
                    return target;
                }
                // Written under a unique name, then renamed: other JVMs see either no file or a whole one.
                Path temporary = Files.createTempFile(directory, resource + "-", ".tmp");
                try {
                    Files.copy(in, temporary, StandardCopyOption.REPLACE_EXISTING);
                    if (Workspace.isPosix()) {
                        Files.setPosixFilePermissions(temporary, PosixFilePermissions.fromString("rwx------"));
                    } else if (!temporary.toFile().setExecutable(true, true)) {
                        throw new IOException("cannot make " + temporary + " executable");
                    }
                    Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } finally {
                    Files.deleteIfExists(temporary);
                }
            }
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot extract " + resource + " from embedded-redis to " + target, e);
        }
    }

    /** Runs {@code binary --version} (bounded) to learn the version and to check that it runs here. */
    private static RedisBinary inspect(Path binary, String source) {
        Output output = run(binary, source, "--version");
        Matcher matcher = VERSION.matcher(output.text());
        if (output.exitCode() != 0 || !matcher.find()) {
            throw new IllegalStateException(binary + " --version (from " + source + ") failed with exit code "
                    + output.exitCode() + ": " + output.text());
        }
        return new RedisBinary(binary, source, matcher.group(1));
    }

    /** Runs {@code binary args} to its end (at most {@link Processes#HELPER_TIMEOUT}) and returns what it printed. */
    private static Output run(Path binary, String source, String... args) {
        List<String> command = new ArrayList<>();
        command.add(binary.toString());
        Collections.addAll(command, args);
        String description = String.join(" ", command) + " (from " + source + ")";
        Path outputFile = null;
        try {
            // A file, not a pipe: whatever the binary does, reading its output cannot block or grow unbounded.
            outputFile = Files.createTempFile(Workspace.root(), "probe-", ".txt");
            Process process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(outputFile.toFile())
                    .start();
            process.getOutputStream().close();
            if (!Processes.awaitExit(process, Processes.HELPER_TIMEOUT)) {
                process.destroyForcibly();
                throw new IllegalStateException(description + " did not finish within " + Processes.HELPER_TIMEOUT);
            }
            try (InputStream in = Files.newInputStream(outputFile)) {
                String text = new String(in.readNBytes(MAX_OUTPUT), StandardCharsets.UTF_8).trim();
                return new Output(process.exitValue(), text);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + description, e);
        } finally {
            if (outputFile != null) {
                Workspace.deleteQuietly(outputFile);
            }
        }
    }

    /** What a short run of the binary printed (stdout and stderr, at most 4 KiB), and its exit code. */
    private record Output(int exitCode, String text) {
    }
}
