package io.relock;

import java.time.Instant;
import java.util.Objects;

/**
 * Where a Relock client runs, as it registered itself on Redis when it was created: which host,
 * which process, since when, which Relock version. {@link LockInfo#clients()} has one for each
 * holder's client that is alive and registered (Redisson clients register nothing).
 *
 * <p>Each client keeps its entry in the key {@code <keyPrefix>relock:client:<clientId>}, a hash
 * that the watchdog renews (it expires one watchdog timeout after the client stops) and that
 * {@link Relock#close()} deletes. Lock keys are not touched, so the wire format stays
 * Redisson's.
 *
 * @param clientId the client's id ({@link Relock#clientId()})
 * @param host the host name the client's process runs on
 * @param pid the process id, or -1 if it could not be told
 * @param startedAt when the client was created
 * @param version the Relock version of the client, or {@code unknown}
 */
public record ClientInfo(String clientId, String host, long pid, Instant startedAt, String version) {

    /**
     * Creates a client description.
     *
     * @param clientId the client's id
     * @param host the host name
     * @param pid the process id, or -1
     * @param startedAt when the client was created
     * @param version the Relock version
     * @throws NullPointerException if any argument is null
     */
    public ClientInfo {
        Objects.requireNonNull(clientId, "clientId must not be null");
        Objects.requireNonNull(host, "host must not be null");
        Objects.requireNonNull(startedAt, "startedAt must not be null");
        Objects.requireNonNull(version, "version must not be null");
    }
}
