package io.relock.demo;

import java.util.List;

/**
 * The demo's command line:
 * {@code [--redis <uri>] [--jdbc <url> [--jdbc-user <user>] [--jdbc-password <password>]] [--help]}.
 *
 * @param redisUri the Redis to use, or {@code null} to start one
 * @param jdbcUrl the SQL database for the recharge scenarios, or {@code null} for an H2 of our own
 * @param jdbcUser the database user, or {@code null}
 * @param jdbcPassword the database password, or {@code null}
 * @param help whether usage was asked for
 */
record CommandLine(String redisUri, String jdbcUrl, String jdbcUser, String jdbcPassword, boolean help) {

    /** The databases the recharge scenarios can use besides their own H2: another JVM must reach them. */
    static final List<String> JDBC_SCHEMES = List.of("jdbc:postgresql:", "jdbc:mariadb:", "jdbc:h2:tcp:");

    static final String USAGE = String.join(System.lineSeparator(),
            "Usage: java io.relock.demo.Demo [--redis <uri>] [--jdbc <url> [--jdbc-user <user>]"
                    + " [--jdbc-password <password>]] [--help]",
            "  --redis <uri>  use this Redis, e.g. redis://127.0.0.1:6379 or rediss://user:secret@host:6380/0;",
            "                 the demo writes only keys under relock-demo:<run id>: and deletes them at the end",
            "                 (default: start a redis-server of our own for the run)",
            "  --jdbc <url>   run the recharge scenarios on this database, e.g. jdbc:postgresql://host:5432/shop",
            "                 or jdbc:mariadb://host:3306/shop; the demo creates only tables named",
            "                 relock_demo_<run id>_* and drops them at the end",
            "                 (default: an H2 database in the demo's memory)",
            "  --jdbc-user <user>, --jdbc-password <password>  the database's credentials",
            "  --help         print this and exit",
            "With Maven: mvn -q -B -Pdemo -DskipTests verify [-Ddemo.args=\"--redis <uri> --jdbc <url>\"]");

    /**
     * Parses the arguments.
     *
     * @throws IllegalArgumentException naming the offending argument
     */
    static CommandLine parse(String... args) {
        String redisUri = null;
        String jdbcUrl = null;
        String jdbcUser = null;
        String jdbcPassword = null;
        boolean help = false;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--help") || arg.equals("-h")) {
                help = true;
                continue;
            }
            String option = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
            String value;
            if (!List.of("--redis", "--jdbc", "--jdbc-user", "--jdbc-password").contains(option)) {
                throw new IllegalArgumentException("unknown argument: '" + arg + "'");
            } else if (arg.contains("=")) {
                value = arg.substring(option.length() + 1);
            } else if (i + 1 == args.length) {
                throw new IllegalArgumentException(option + " needs " + (option.equals("--redis") ? "a URI"
                        : option.equals("--jdbc") ? "a URL" : "a value"));
            } else {
                value = args[++i];
            }
            switch (option) {
                case "--redis" -> {
                    redisUri = once(option, redisUri, value);
                    if (!value.startsWith("redis://") && !value.startsWith("rediss://")) {
                        throw new IllegalArgumentException("--redis needs a redis:// or rediss:// URI: '" + value + "'");
                    }
                }
                case "--jdbc" -> {
                    jdbcUrl = once(option, jdbcUrl, value);
                    if (JDBC_SCHEMES.stream().noneMatch(value::startsWith)) {
                        throw new IllegalArgumentException("--jdbc needs a URL starting with "
                                + String.join(", ", JDBC_SCHEMES) + ": '" + redactJdbc(value) + "'");
                    }
                }
                case "--jdbc-user" -> jdbcUser = once(option, jdbcUser, value);
                default -> jdbcPassword = once(option, jdbcPassword, value);
            }
        }
        if (jdbcUrl == null && (jdbcUser != null || jdbcPassword != null)) {
            throw new IllegalArgumentException("--jdbc-user and --jdbc-password need --jdbc");
        }
        return new CommandLine(redisUri, jdbcUrl, jdbcUser, jdbcPassword, help);
    }

    private static String once(String option, String previous, String value) {
        if (previous != null) {
            throw new IllegalArgumentException(option + " given twice");
        }
        return value;
    }

    /** The URI without its password, for printing. */
    static String redact(String uri) {
        int scheme = uri.indexOf("://");
        int at = uri.lastIndexOf('@');
        if (scheme < 0 || at < scheme) {
            return uri;
        }
        String userInfo = uri.substring(scheme + 3, at);
        int colon = userInfo.indexOf(':');
        String user = colon < 0 ? "" : userInfo.substring(0, colon);
        return uri.substring(0, scheme + 3) + user + ":***" + uri.substring(at);
    }

    /**
     * A JDBC URL for printing: without its parameters ({@code ?…} or {@code ;…}), which may hold a
     * password, and without a password before an {@code @}.
     */
    static String redactJdbc(String url) {
        int parameters = url.length();
        for (char separator : new char[] {'?', ';'}) {
            int index = url.indexOf(separator);
            if (index >= 0 && index < parameters) {
                parameters = index;
            }
        }
        String bare = redact(url.substring(0, parameters));
        return parameters < url.length() ? bare + " (parameters not shown)" : bare;
    }
}
