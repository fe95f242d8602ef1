package io.relock.internal;

import io.lettuce.core.RedisURI;

/** Parsing of configured URIs, and redaction so that no password reaches a message or log. */
public final class RedisUris {

    private RedisUris() {}

    public static RedisURI parse(String uri, String setting) {
        Args.notNull(uri, setting);
        try {
            RedisURI parsed = RedisURI.create(uri);
            Args.require(parsed.getHost() != null && !parsed.getHost().isEmpty(),
                    "%s: no host in Redis URI '%s'", setting, redact(uri));
            return parsed;
        } catch (IllegalArgumentException e) {
            // The parser's reason may quote any fragment of the URI, passwords included.
            String reason = hasCredentials(uri)
                    ? "cannot parse it (percent-encode characters such as / @ : in the user and password)"
                    : String.valueOf(e.getMessage());
            throw new IllegalArgumentException(
                    setting + ": invalid Redis URI '" + redact(uri) + "': " + reason);
        }
    }

    /** Whether the URI text carries a user or password ({@code scheme://[user]:pw@host}). */
    public static boolean hasCredentials(String uri) {
        int scheme = uri.indexOf("://");
        int at = uri.lastIndexOf('@');
        return scheme >= 0 && at > scheme;
    }

    public static String redact(String uri) {
        int scheme = uri.indexOf("://");
        int at = uri.lastIndexOf('@');
        if (scheme < 0 || at < scheme) {
            return uri;
        }
        return uri.substring(0, scheme + 3) + "***@" + uri.substring(at + 1);
    }
}
