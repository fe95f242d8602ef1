package io.relock.demo;

/**
 * The demo's command line: {@code [--redis <uri>] [--help]}.
 *
 * @param redisUri the Redis to use, or {@code null} to start one
 * @param help whether usage was asked for
 */
record CommandLine(String redisUri, boolean help) {

    static final String USAGE = String.join(System.lineSeparator(),
            "Usage: java io.relock.demo.Demo [--redis <uri>] [--help]",
            "  --redis <uri>  use this Redis, e.g. redis://127.0.0.1:6379 or rediss://user:secret@host:6380/0;",
            "                 the demo writes only keys under relock-demo:<run id>: and deletes them at the end",
            "                 (default: start a redis-server of our own for the run)",
            "  --help         print this and exit",
            "With Maven: mvn -q -B -Pdemo -DskipTests verify [-Ddemo.args=\"--redis <uri>\"]");

    /**
     * Parses the arguments.
     *
     * @throws IllegalArgumentException naming the offending argument
     */
    static CommandLine parse(String... args) {
        String redisUri = null;
        boolean help = false;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--help") || arg.equals("-h")) {
                help = true;
            } else if (arg.equals("--redis") || arg.startsWith("--redis=")) {
                if (redisUri != null) {
                    throw new IllegalArgumentException("--redis given twice");
                }
                if (arg.equals("--redis")) {
                    if (i + 1 == args.length) {
                        throw new IllegalArgumentException("--redis needs a URI");
                    }
                    redisUri = args[++i];
                } else {
                    redisUri = arg.substring("--redis=".length());
                }
                if (!redisUri.startsWith("redis://") && !redisUri.startsWith("rediss://")) {
                    throw new IllegalArgumentException("--redis needs a redis:// or rediss:// URI: '" + redisUri + "'");
                }
            } else {
                throw new IllegalArgumentException("unknown argument: '" + arg + "'");
            }
        }
        return new CommandLine(redisUri, help);
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
}
