package io.relock.internal.redis;

import io.lettuce.core.RedisURI;
import io.relock.internal.support.Args;

/** Parsing of configured URIs, and redaction so that no password reaches a message or log. */
public final class RedisUris {

    private RedisUris() {}

    /**
     * Parses a configured URI, rejecting what Lettuce would accept but misread: a scheme other
     * than {@code redis} or {@code rediss}, a missing host, a port that is not a number from 1
     * to 65535 (Lettuce takes {@code host:notaport} for a host name). The messages name the
     * setting and the URI without its credentials.
     */
    public static Parsed parse(String uri, String setting) {
        Args.notNull(uri, setting);
        int schemeEnd = uri.indexOf("://");
        String scheme = schemeEnd > 0 ? uri.substring(0, schemeEnd) : "";
        Args.require(scheme.matches("[A-Za-z][A-Za-z0-9+.-]*"),
                "%s: Redis URI '%s' has no scheme: use redis://host:port, or rediss:// for TLS", setting, redact(uri));
        Args.require(scheme.equals("redis") || scheme.equals("rediss"),
                "%s: unsupported scheme '%s' in Redis URI '%s': use redis:// or rediss://", setting, scheme, redact(uri));
        RedisURI parsed;
        try {
            parsed = RedisURI.create(uri);
        } catch (IllegalArgumentException e) {
            // The parser's reason may quote any fragment of the URI, passwords included.
            String reason = hasCredentials(uri)
                    ? "cannot parse it (percent-encode characters such as / @ : in the user and password)"
                    : String.valueOf(e.getMessage());
            throw new IllegalArgumentException(
                    setting + ": invalid Redis URI '" + redact(uri) + "': " + reason);
        }
        String authority = hostAndPort(uri);
        boolean ipv6 = authority.startsWith("[");
        int portStart = ipv6 ? authority.indexOf(']') + 1 : authority.lastIndexOf(':');
        boolean hasPort = ipv6 ? portStart > 0 && portStart < authority.length() : portStart >= 0;
        String host = hasPort ? authority.substring(0, portStart) : authority;
        Args.require(!host.isEmpty() && !host.equals("[]") && parsed.getHost() != null && !parsed.getHost().isEmpty(),
                "%s: no host in Redis URI '%s'", setting, redact(uri));
        if (hasPort) {
            String port = authority.substring(authority.charAt(portStart) == ':' ? portStart + 1 : portStart);
            Args.require(port.matches("[0-9]{1,5}") && Integer.parseInt(port) >= 1 && Integer.parseInt(port) <= 65535,
                    "%s: invalid port '%s' in Redis URI '%s': it must be a number from 1 to 65535",
                    setting, port, redact(uri));
        }
        return new Parsed(parsed, namesDatabase(parsed, uri) ? parsed.getDatabase() : null);
    }

    /**
     * A parsed URI.
     *
     * @param uri Lettuce's form
     * @param database the database the URI names, or null when it names none
     */
    public record Parsed(RedisURI uri, Integer database) {}

    /** Whether the URI selects a database: a path such as {@code /2} (also {@code /0}), or a query parameter. */
    private static boolean namesDatabase(RedisURI parsed, String uri) {
        int authorityStart = uri.indexOf("://") + 3;
        int authorityEnd = authorityEnd(uri, authorityStart);
        return parsed.getDatabase() != 0
                || authorityEnd < uri.length() && uri.charAt(authorityEnd) == '/' && authorityEnd + 1 < uri.length()
                        && Character.isDigit(uri.charAt(authorityEnd + 1));
    }

    /** The {@code host[:port]} part of a URI that Lettuce parsed, after any {@code user:password@}. */
    private static String hostAndPort(String uri) {
        int authorityStart = uri.indexOf("://") + 3;
        String authority = uri.substring(authorityStart, authorityEnd(uri, authorityStart));
        return authority.substring(authority.lastIndexOf('@') + 1);
    }

    private static int authorityEnd(String uri, int authorityStart) {
        int end = uri.length();
        for (char delimiter : new char[] {'/', '?', '#'}) {
            int at = uri.indexOf(delimiter, authorityStart);
            if (at >= 0 && at < end) {
                end = at;
            }
        }
        return end;
    }

    /** Whether the URI text carries a user or password ({@code scheme://[user]:pw@host}). */
    public static boolean hasCredentials(String uri) {
        int scheme = uri.indexOf("://");
        int at = uri.lastIndexOf('@');
        return scheme >= 0 && at > scheme;
    }

    /** The URI with any {@code user:password@} replaced by {@code ***@}. */
    public static String redact(String uri) {
        int at = uri.lastIndexOf('@');
        if (at < 0) {
            return uri;
        }
        int scheme = uri.indexOf("://");
        String prefix = scheme >= 0 && scheme < at ? uri.substring(0, scheme + 3) : "";
        return prefix + "***@" + uri.substring(at + 1);
    }
}
