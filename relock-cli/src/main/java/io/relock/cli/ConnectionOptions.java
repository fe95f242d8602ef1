package io.relock.cli;

import io.relock.RelockConfig;
import java.io.Console;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Where the locks are and how to log in, shared by every command: the same settings as
 * {@link RelockConfig}. The password never comes from the command line (it would show in the
 * process list and the shell history): it is read from {@value #PASSWORD_VARIABLE} or typed at
 * a prompt that does not echo it.
 */
public final class ConnectionOptions {

    /** The environment variable the password is read from. */
    public static final String PASSWORD_VARIABLE = "RELOCK_PASSWORD";

    /** The server used when no topology option is given. */
    public static final String DEFAULT_REDIS = "redis://127.0.0.1:6379";

    @Spec(Spec.Target.MIXEE)
    private CommandSpec spec;

    @ArgGroup(exclusive = true, multiplicity = "0..1")
    private Topology topology;

    @Option(names = "--user", paramLabel = "USER",
            description = "ACL user for servers whose URI names none (needs a password)")
    private String user;

    @Option(names = "--password-prompt",
            description = "ask for the password on the terminal (not echoed) instead of reading $"
                    + PASSWORD_VARIABLE)
    private boolean passwordPrompt;

    @Option(names = "--tls-ca", paramLabel = "PEM",
            description = "PEM file of the CAs to trust for rediss:// (default: the JVM's trust store)")
    private Path tlsCa;

    @Option(names = "--key-prefix", paramLabel = "PREFIX",
            description = "the prefix the applications configured (keyPrefix); names are given without it")
    private String keyPrefix;

    @Option(names = "--database", paramLabel = "N",
            description = "database number (default: the URI's /db, else 0; only 0 with --cluster)")
    private Integer database;

    /** Exactly one topology; none given means {@link #DEFAULT_REDIS}. */
    static final class Topology {
        @Option(names = "--redis", paramLabel = "URI",
                description = "one Redis server: redis[s]://[user[:password]@]host:port[/db] (default: "
                        + DEFAULT_REDIS + ")")
        String redis;

        @Option(names = "--sentinel", arity = "2..*", paramLabel = "MASTER URI...", hideParamSyntax = true,
                description = "the master that these Sentinels monitor as MASTER; end the list with -- or put NAME first")
        List<String> sentinel;

        @Option(names = "--cluster", arity = "1..*", paramLabel = "URI...", hideParamSyntax = true,
                description = "seed nodes of a Redis Cluster; end the list with -- or put NAME first")
        List<String> cluster;
    }

    /** The key prefix, empty when none is configured. */
    String keyPrefix() {
        return keyPrefix == null ? "" : keyPrefix;
    }

    /**
     * The client configuration these options describe, asking for the password if told to.
     * Invalid values are reported as usage errors naming the option.
     */
    RelockConfig config() {
        RelockConfig.Builder builder = RelockConfig.builder();
        String topologyOption;
        if (topology != null && topology.sentinel != null) {
            topologyOption = "--sentinel";
            List<String> uris = topology.sentinel.subList(1, topology.sentinel.size());
            builder.sentinel(topology.sentinel.get(0), uris.toArray(String[]::new));
        } else if (topology != null && topology.cluster != null) {
            topologyOption = "--cluster";
            builder.cluster(topology.cluster.toArray(String[]::new));
        } else {
            topologyOption = "--redis";
            builder.singleServer(topology == null ? DEFAULT_REDIS : topology.redis);
        }
        char[] password = password();
        if (user != null && password == null) {
            throw usage("--user " + user + " needs a password: set " + PASSWORD_VARIABLE + " or use --password-prompt");
        }
        if (password != null) {
            if (user != null && user.isEmpty()) {
                throw usage("--user must not be empty");
            }
            builder.credentials(user, password);
        }
        if (database != null) {
            if (database < 0) {
                throw usage("--database must be 0 or more, not " + database);
            }
            builder.database(database);
        }
        if (tlsCa != null) {
            builder.trustedCertificates(tlsCa);
        }
        if (keyPrefix != null) {
            builder.keyPrefix(keyPrefix);
        }
        try {
            return builder.build();
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw usage(optionOf(e.getMessage(), topologyOption) + ": " + e.getMessage());
        }
    }

    /** Which option a {@link RelockConfig} validation message is about (it names builder settings). */
    private static String optionOf(String message, String topologyOption) {
        String text = String.valueOf(message);
        for (Map.Entry<String, String> setting : Map.of("database", "--database", "trustedCertificates", "--tls-ca",
                "keyPrefix", "--key-prefix", "credentials", "--user").entrySet()) {
            if (text.startsWith(setting.getKey())) {
                return setting.getValue();
            }
        }
        return topologyOption;
    }

    private char[] password() {
        if (passwordPrompt) {
            Console console = System.console();
            if (console == null) {
                throw usage("--password-prompt needs a terminal; set " + PASSWORD_VARIABLE + " instead");
            }
            char[] typed = console.readPassword("Redis password%s: ", user == null ? "" : " for " + user);
            if (typed == null) {
                throw usage("--password-prompt: no password entered");
            }
            return typed;
        }
        String variable = System.getenv(PASSWORD_VARIABLE);
        return variable == null || variable.isEmpty() ? null : variable.toCharArray();
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
