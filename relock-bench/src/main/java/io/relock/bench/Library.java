package io.relock.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Properties;

/**
 * The libraries under comparison, and how to connect a client of each: Relock and its peers,
 * Redisson and Spring Integration's {@code RedisLockRegistry}.
 */
enum Library {

    RELOCK("Relock", "Relock", "relock.version") {
        @Override
        LockLibrary connect(String uri, Duration watchdogTimeout) {
            return new RelockLibrary(uri, watchdogTimeout);
        }
    },

    REDISSON("Redisson", "Redisson", "redisson.version") {
        @Override
        LockLibrary connect(String uri, Duration watchdogTimeout) {
            return new RedissonLibrary(uri, watchdogTimeout);
        }
    },

    REGISTRY("RedisLockRegistry", "Registry", "spring-integration.version") {
        @Override
        LockLibrary connect(String uri, Duration watchdogTimeout) {
            return new RegistryLibrary(uri, watchdogTimeout);
        }
    };

    private static final Properties VERSIONS = loadVersions();

    private final String displayName;
    private final String shortName;
    private final String versionProperty;

    Library(String displayName, String shortName, String versionProperty) {
        this.displayName = displayName;
        this.shortName = shortName;
        this.versionProperty = versionProperty;
    }

    /**
     * Connects one client.
     *
     * @param watchdogTimeout the lock watchdog timeout, or null for the library's default (30 s for
     *     Relock and Redisson; the registry has no watchdog and ignores it)
     */
    abstract LockLibrary connect(String uri, Duration watchdogTimeout);

    String displayName() {
        return displayName;
    }

    /** For the chart's labels, where space is short. */
    String shortName() {
        return shortName;
    }

    /** The version the bench was built with. */
    String version() {
        return VERSIONS.getProperty(versionProperty, "unknown");
    }

    /** The command-line and JSON name: {@code relock}, {@code redisson}, {@code registry}. */
    String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The libraries Relock is compared with. */
    static List<Library> peers() {
        return Arrays.stream(values()).filter(library -> library != RELOCK).toList();
    }

    static Library fromId(String id) {
        return valueOf(id.toUpperCase(Locale.ROOT));
    }

    static Properties loadVersions() {
        Properties properties = new Properties();
        try (InputStream in = Library.class.getResourceAsStream("/bench-versions.properties")) {
            if (in != null) {
                properties.load(in);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read bench-versions.properties", e);
        }
        return properties;
    }
}
