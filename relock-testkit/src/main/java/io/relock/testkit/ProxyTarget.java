package io.relock.testkit;

import java.util.Objects;

/** The server a {@link FaultProxy} connects its new connections to. */
record ProxyTarget(String host, int port) {

    static ProxyTarget of(String host, int port) {
        Objects.requireNonNull(host, "host must not be null");
        if (host.isBlank()) {
            throw new IllegalArgumentException("host must not be blank: '" + host + "'");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port must be between 1 and 65535: " + port);
        }
        return new ProxyTarget(host, port);
    }

    @Override
    public String toString() {
        return host + ":" + port;
    }
}
