package io.relock.spring.boot;

import java.security.Principal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.Selector.Match;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpoint;
import org.springframework.util.ClassUtils;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

import io.relock.ClientInfo;
import io.relock.HeldLock;
import io.relock.LeaderInfo;
import io.relock.Leadership;
import io.relock.LockInfo;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.RelockException;
import io.relock.spring.RelockLeadership;

/**
 * The Actuator endpoint {@code locks}: what this application's {@link Relock} client holds, who
 * holds any lock by name, and a force-unlock for a lock whose holder is gone.
 *
 * <ul>
 *   <li>{@code GET /actuator/locks}: this client (id, topology, key prefix, host, pid, start,
 *       version), the locks it holds ({@link Relock#heldLocks()}), its last
 *       {@value LockLosses#CAPACITY} lease losses, and the leader elections it runs for
 *       ({@link RelockLeadership}) with who leads each. Answered from the client's own records,
 *       also while Redis is down, except who leads an election this client does not lead: that
 *       is read from Redis (a few round trips per election), and when Redis fails the election's
 *       {@code leader} is {@code null} and its {@code error} says why.</li>
 *   <li>{@code GET /actuator/locks/{name}}: the lock as Redis has it ({@link Relock#getLockInfo(String)}):
 *       its holders with their client's host and process, hold counts, the lease left, the
 *       waiting clients, and its type when it can be told ({@link LockView}, {@code "state": "LOCKED"}).
 *       404 when there is no lock to show, with a {@link LockStatus} body that says which case:
 *       {@code "state": "FREE"} (nobody holds it) or {@code "state": "NOT_A_LOCK"} (its key holds
 *       data that no lock writes).</li>
 *   <li>{@code DELETE /actuator/locks/{name}}: {@code forceUnlock()} of the lock's type; 200 with
 *       the lock as it was just before. 404 {@code "FREE"} when nobody held it (or it was released
 *       meanwhile): nothing to remove, as a {@code DELETE} of a resource that is not there. 409
 *       (Conflict) {@code "NOT_A_LOCK"} when the key holds data that no lock writes: the request
 *       is refused because of what the key holds, and the data is left untouched; a different
 *       code from "free" so that a script does not take the refusal for a lock already gone.
 *       Logged at WARN with the caller's principal (or {@code anonymous}) and address. The
 *       holder is not told at once; its watchdog finds the lock force-unlocked at its next
 *       renewal (a {@link io.relock.LockForceUnlockedException} as the loss's cause), or its
 *       unlock finds it gone.</li>
 * </ul>
 *
 * <p>The states are the words of the {@code relock} command line ({@code inspect} and
 * {@code force-unlock}): locked, free, not a lock.
 *
 * <p>The name is the rest of the path after {@code /actuator/locks/}, percent-decoded segment by
 * segment, so {@code orders/42} and {@code order%3A42} work; empty segments cannot be
 * addressed (a name with {@code //}, or starting or ending with {@code /}), and neither can a
 * {@code /} inside a segment ({@code %2F}), which servlet containers reject.
 *
 * <p>The endpoint's default access is read-only: the DELETE operation exists only when the
 * application sets {@code management.endpoint.locks.access=unrestricted} (otherwise Spring Boot
 * does not map it and answers 405). Redis failing or unreachable: 503 with a JSON body
 * {@code {"error": "..."}}; a name the client refuses (an unpaired surrogate, braces without a
 * hash tag in a cluster): 400.
 *
 * <p>The type comes from this client's own hold when it holds the lock, else from the data
 * ({@link LockInfo#kind()}): {@code reentrant}, {@code fair}, {@code fenced}, {@code simple},
 * {@code read} or {@code write}. A force-unlock is {@link Relock#forceUnlock(String)}: the release
 * of the type the data shows, so the lock's waiters (Relock's and Redisson's) wake at once. A key
 * holding data that no lock writes ({@link LockInfo.Kind#NOT_A_LOCK}) is not a lock: 404 for GET,
 * 409 for DELETE, and nothing is removed (the force-release script checks the data before it
 * deletes).
 */
@WebEndpoint(id = "locks", defaultAccess = Access.READ_ONLY)
public class LocksEndpoint {

    private static final Logger LOG = LoggerFactory.getLogger(LocksEndpoint.class);

    /** HTTP 409: WebEndpointResponse names no constant for it. */
    private static final int STATUS_CONFLICT = 409;

    private static final boolean SERVLET_PRESENT = ClassUtils.isPresent(
            "org.springframework.web.context.request.ServletRequestAttributes", LocksEndpoint.class.getClassLoader())
            && ClassUtils.isPresent("jakarta.servlet.http.HttpServletRequest", LocksEndpoint.class.getClassLoader());

    private final Relock relock;
    private final LockLosses losses;
    private final Supplier<@Nullable RelockLeadership> leadership;

    LocksEndpoint(Relock relock, LockLosses losses) {
        this(relock, losses, () -> null);
    }

    LocksEndpoint(Relock relock, LockLosses losses, Supplier<@Nullable RelockLeadership> leadership) {
        this.relock = Objects.requireNonNull(relock, "relock must not be null");
        this.losses = Objects.requireNonNull(losses, "losses must not be null");
        this.leadership = Objects.requireNonNull(leadership, "leadership must not be null");
    }

    /**
     * This client, what it holds, its last lease losses and its leader elections; no Redis
     * round trip but for the leaders of elections this client does not lead.
     *
     * @return the client's view
     */
    @ReadOperation
    public ClientLocks locks() {
        RelockConfig config = relock.config();
        ClientInfo self = relock.clientInfo();
        List<HeldLockView> held = relock.heldLocks().stream().map(HeldLockView::of).toList();
        return new ClientLocks(relock.clientId(), config.topology().name(), config.keyPrefix(),
                config.watchdogTimeout().toMillis(), Client.of(self), held, losses.recent(), elections());
    }

    private List<LeaderElectionView> elections() {
        RelockLeadership elections = leadership.get();
        if (elections == null) {
            return List.of();
        }
        List<LeaderElectionView> views = new ArrayList<>();
        for (String name : elections.names()) {
            Optional<Leadership> mine = elections.leadership(name);
            if (mine.isPresent()) {
                Leadership term = mine.get();
                views.add(new LeaderElectionView(name, elections.isRunning(), true, new Leader(term.term(),
                        relock.clientId(), true, term.leader().host(), term.leader().pid()), null));
                continue;
            }
            try {
                Leader leader = elections.leader(name).map(this::leaderOf).orElse(null);
                views.add(new LeaderElectionView(name, elections.isRunning(), false, leader, null));
            } catch (RuntimeException e) {
                LOG.debug("could not read the leader of '{}'", name, e);
                views.add(new LeaderElectionView(name, elections.isRunning(), false, null,
                        "Relock could not read the leader of '" + name + "': " + e.getMessage()));
            }
        }
        return views;
    }

    private Leader leaderOf(LeaderInfo info) {
        return new Leader(info.term(), info.clientId(), info.clientId().equals(relock.clientId()),
                info.client().map(ClientInfo::host).orElse(null), info.client().map(ClientInfo::pid).orElse(null));
    }

    /**
     * One lock as Redis has it.
     *
     * @param name the lock's name, as path segments
     * @return 200 with the lock ({@link LockView}); 404 with a {@link LockStatus} when it is free
     *     or its key holds something that is not a lock; 400 for a name the client refuses, 503
     *     when Redis fails
     */
    @ReadOperation
    public WebEndpointResponse<Object> lock(@Selector(match = Match.ALL_REMAINING) String[] name) {
        String lockName = String.join("/", name);
        try {
            LockInfo info = relock.getLockInfo(lockName);
            if (info.kind() == LockInfo.Kind.NOT_A_LOCK) {
                return new WebEndpointResponse<>(LockStatus.notALock(lockName, false), WebEndpointResponse.STATUS_NOT_FOUND);
            }
            if (!info.isLocked()) {
                return new WebEndpointResponse<>(new LockStatus(lockName, LockStatus.FREE,
                        "lock '" + lockName + "' is free: nobody holds it"), WebEndpointResponse.STATUS_NOT_FOUND);
            }
            return new WebEndpointResponse<>(view(lockName, info));
        } catch (RuntimeException e) {
            return failure(lockName, "read", e);
        }
    }

    /**
     * Releases a lock whoever holds it ({@code forceUnlock()} of its type), and logs who asked.
     *
     * @param name the lock's name, as path segments
     * @param principal the authenticated caller, or {@code null}
     * @return 200 with the lock as it was just before ({@link LockView}); 404 with a
     *     {@link LockStatus} {@code FREE} when nobody held it or it was released meanwhile; 409
     *     with a {@link LockStatus} {@code NOT_A_LOCK} when the key holds data that no lock
     *     writes (left untouched); 400 for a name the client refuses, 503 when Redis fails
     */
    @DeleteOperation
    public WebEndpointResponse<Object> forceUnlock(@Selector(match = Match.ALL_REMAINING) String[] name,
            @Nullable Principal principal) {
        String lockName = String.join("/", name);
        try {
            LockInfo info = relock.getLockInfo(lockName);
            if (info.kind() == LockInfo.Kind.NOT_A_LOCK) {
                return new WebEndpointResponse<>(LockStatus.notALock(lockName, true), STATUS_CONFLICT);
            }
            if (!info.isLocked()) {
                return new WebEndpointResponse<>(new LockStatus(lockName, LockStatus.FREE,
                        "nothing to remove: lock '" + lockName + "' is free"), WebEndpointResponse.STATUS_NOT_FOUND);
            }
            LockView before = view(lockName, info);
            if (!relock.forceUnlock(lockName)) {
                // The release script checks the data before it deletes: the lock went meanwhile, or
                // the key now holds something else.
                if (relock.getLockInfo(lockName).kind() == LockInfo.Kind.NOT_A_LOCK) {
                    return new WebEndpointResponse<>(LockStatus.notALock(lockName, true),
                            STATUS_CONFLICT);
                }
                return new WebEndpointResponse<>(new LockStatus(lockName, LockStatus.FREE, "nothing removed: lock '"
                        + lockName + "' was released or changed meanwhile"), WebEndpointResponse.STATUS_NOT_FOUND);
            }
            LOG.warn("Force-unlocked lock '{}' (type {}, holders {}) through the actuator endpoint: by {} from {}",
                    lockName, before.type() == null ? "unknown" : before.type(), before.holderNames(),
                    principal == null ? "anonymous" : principal.getName(), remoteAddress());
            return new WebEndpointResponse<>(before);
        } catch (RuntimeException e) {
            return failure(lockName, "force-unlock", e);
        }
    }

    /** A held lock as Redis has it, with what this client knows of its own holds. */
    private LockView view(String name, LockInfo info) {
        List<HeldLock> mine = relock.heldLocks().stream().filter(held -> held.name().equals(name)).toList();
        String clientId = relock.clientId();
        List<Holder> holders = new ArrayList<>();
        for (Map.Entry<String, Long> entry : info.holders().entrySet()) {
            holders.add(Holder.of(entry.getKey(), entry.getValue(), info.clientOf(entry.getKey()), clientId, mine));
        }
        holders.sort(Comparator.comparing(Holder::holder));
        return new LockView(name, LockStatus.LOCKED, typeOf(info, mine), info.remainTimeToLive(), info.waitingClients(),
                holders);
    }

    private static @Nullable String typeOf(LockInfo info, List<HeldLock> mine) {
        if (!mine.isEmpty()) {
            return mine.get(0).type();
        }
        return switch (info.kind()) {
            case READ_WRITE -> info.holders().keySet().stream().anyMatch(holder -> holder.endsWith(":write"))
                    ? "write" : "read";
            case NONE, NOT_A_LOCK -> null;
            default -> info.kind().label();
        };
    }

    private static WebEndpointResponse<Object> failure(String name, String operation, RuntimeException e) {
        if (e instanceof IllegalArgumentException) {
            return new WebEndpointResponse<>(Map.of("error", String.valueOf(e.getMessage())),
                    WebEndpointResponse.STATUS_BAD_REQUEST);
        }
        if (e instanceof RelockException || e instanceof IllegalStateException) {
            LOG.debug("could not {} lock '{}'", operation, name, e);
            return new WebEndpointResponse<>(Map.of("error", "Relock could not " + operation + " lock '" + name
                    + "': " + e.getMessage()), WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
        }
        throw e;
    }

    private static String remoteAddress() {
        return SERVLET_PRESENT ? ServletRequests.remoteAddress() : "an unknown address";
    }

    /** Reads the servlet request only where the servlet API is present. */
    private static final class ServletRequests {

        static String remoteAddress() {
            RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
            return attributes instanceof ServletRequestAttributes servlet ? servlet.getRequest().getRemoteAddr()
                    : "an unknown address";
        }
    }

    /**
     * The answer of {@code GET /actuator/locks}.
     *
     * @param clientId this client's id, the first part of its holders' fields on Redis
     * @param topology how the client connects: {@code SINGLE_SERVER}, {@code SENTINEL}, {@code CLUSTER}
     *     or {@code MASTER_REPLICA}
     * @param keyPrefix the prefix of every lock key, empty for none
     * @param watchdogTimeoutMillis the lease of locks taken without one
     * @param client where this client runs, as it registered itself on Redis
     * @param heldLocks the locks this client holds, oldest first
     * @param recentLosses the last lease losses of this client, newest first
     * @param leaderElections the leader elections this client runs for ({@link RelockLeadership}),
     *     by name; empty without any
     */
    public record ClientLocks(String clientId, String topology, String keyPrefix, long watchdogTimeoutMillis,
            Client client, List<HeldLockView> heldLocks, List<LockLoss> recentLosses,
            List<LeaderElectionView> leaderElections) {
    }

    /**
     * A leader election this client runs for.
     *
     * @param name the election's name
     * @param running whether this client runs for it now (false before the context is ready, after
     *     it closed, and with {@code relock.leader-election.enabled=false})
     * @param thisClientLeads whether this client leads it, by its local lease deadline
     * @param leader who leads: this client's own term when it leads, else as Redis has it;
     *     {@code null} when nobody leads or Redis could not be read
     * @param error why the leader could not be read, else {@code null}
     */
    public record LeaderElectionView(String name, boolean running, boolean thisClientLeads, @Nullable Leader leader,
            @Nullable String error) {
    }

    /**
     * The leader of an election.
     *
     * @param term its term, the fencing token it was elected with
     * @param clientId the leading client's id
     * @param thisClient whether that is this application's client
     * @param host the host the leading client runs on, {@code null} when it is not registered
     *     (see {@link LeaderInfo#client()})
     * @param pid its process id, {@code null} likewise
     */
    public record Leader(long term, String clientId, boolean thisClient, @Nullable String host, @Nullable Long pid) {
    }

    /**
     * Where a client runs ({@link ClientInfo}).
     *
     * @param clientId the client's id
     * @param host the host name
     * @param pid the process id, or -1 if unknown
     * @param startedAt when the client was created (ISO-8601)
     * @param version the Relock version
     */
    public record Client(String clientId, String host, long pid, String startedAt, String version) {

        static Client of(ClientInfo info) {
            return new Client(info.clientId(), info.host(), info.pid(), info.startedAt().toString(), info.version());
        }
    }

    /**
     * One lock this client holds ({@link HeldLock}).
     *
     * @param name the lock's name
     * @param type {@code reentrant}, {@code fair}, {@code fenced}, {@code spin}, {@code simple},
     *     {@code read} or {@code write}
     * @param ownerId the owning thread's id (or async owner id)
     * @param ownerThreadName the owning thread's name, or {@code null} for an async owner
     * @param holdCount the hold count
     * @param heldSince when the first hold was taken (ISO-8601)
     * @param leaseLeftMillis the lease left
     * @param watchdog whether the watchdog renews it
     */
    public record HeldLockView(String name, String type, long ownerId, @Nullable String ownerThreadName,
            int holdCount, String heldSince, long leaseLeftMillis, boolean watchdog) {

        static HeldLockView of(HeldLock held) {
            return new HeldLockView(held.name(), held.type(), held.ownerId(), held.ownerThreadName(),
                    held.holdCount(), held.heldSince().toString(), held.leaseLeftMillis(), held.watchdog());
        }
    }

    /**
     * A lease this client lost.
     *
     * @param lockName the lock's name
     * @param owner the hold's field on Redis, {@code <clientId>:<ownerId>}
     * @param ownerId the thread id (or async owner id) that held it
     * @param cause why: the renewal's error, or that the lock was gone
     * @param time when the client noticed (ISO-8601)
     */
    public record LockLoss(String lockName, String owner, long ownerId, String cause, String time) {
    }

    /**
     * The answer of {@code GET} and {@code DELETE /actuator/locks/{name}} when there is no lock to
     * show or remove: which case it is, in the {@code relock} command line's words.
     *
     * @param name the lock's name
     * @param state {@value #FREE} (nobody holds it) or {@value #NOT_A_LOCK} (its key holds data
     *     that no lock writes)
     * @param message the case in a sentence, for a person reading the answer
     */
    public record LockStatus(String name, String state, String message) {

        /** The state of a lock somebody holds ({@link LockView#state()}). */
        public static final String LOCKED = "LOCKED";

        /** The state of a lock nobody holds. */
        public static final String FREE = "FREE";

        /** The state of a name whose key holds data that no lock writes. */
        public static final String NOT_A_LOCK = "NOT_A_LOCK";

        static LockStatus notALock(String name, boolean refused) {
            return new LockStatus(name, NOT_A_LOCK, "'" + name + "' is not a lock: its key holds other data"
                    + (refused ? "; nothing was changed" : ""));
        }
    }

    /**
     * The answer of {@code GET /actuator/locks/{name}} for a held lock, and of its
     * {@code DELETE} for the lock it removed.
     *
     * @param name the lock's name
     * @param state always {@code "LOCKED"}, as in {@link LockStatus#state()}
     * @param type the lock's type when it can be told (see {@link LocksEndpoint}), else {@code null}
     * @param leaseLeftMillis the lease left, {@code -1} when the key has no expiry
     * @param waitingClients how many client connections wait for its release
     * @param holders who holds it
     */
    public record LockView(String name, String state, @Nullable String type, long leaseLeftMillis,
            long waitingClients, List<Holder> holders) {

        List<String> holderNames() {
            return holders.stream().map(holder -> holder.holder() + "=" + holder.holdCount()).toList();
        }
    }

    /**
     * One holder of a lock.
     *
     * @param holder the holder's field on Redis: {@code <clientId>:<threadId>}, with {@code :write}
     *     for a read-write lock's writer
     * @param clientId the holder's client id
     * @param threadId the holder's thread id (or async owner id), or {@code null} if the field
     *     does not have one
     * @param threadName the thread's name, when the holder is this client and knows it
     * @param holdCount how often the holder entered it
     * @param thisClient whether the holder is this application's client
     * @param host the host the holder's client runs on, {@code null} when that client is not a
     *     registered Relock client (a Redisson client, or one that stopped)
     * @param pid the holder's process id, {@code null} likewise
     * @param clientStartedAt when the holder's client started (ISO-8601), {@code null} likewise
     * @param clientVersion the holder's Relock version, {@code null} likewise
     */
    public record Holder(String holder, String clientId, @Nullable Long threadId, @Nullable String threadName,
            long holdCount, boolean thisClient, @Nullable String host, @Nullable Long pid,
            @Nullable String clientStartedAt, @Nullable String clientVersion) {

        static Holder of(String field, long count, Optional<ClientInfo> client, String selfId, List<HeldLock> mine) {
            String[] parts = field.split(":", 3);
            String clientId = parts[0];
            Long threadId = null;
            if (parts.length > 1) {
                try {
                    threadId = Long.valueOf(parts[1]);
                } catch (NumberFormatException e) {
                    // Not a Relock or Redisson holder field: shown as it is, without a thread.
                }
            }
            boolean self = clientId.equals(selfId);
            String threadName = null;
            if (self && threadId != null) {
                long owner = threadId;
                threadName = mine.stream().filter(held -> held.ownerId() == owner).map(HeldLock::ownerThreadName)
                        .filter(Objects::nonNull).findFirst().orElse(null);
            }
            return new Holder(field, clientId, threadId, threadName, count, self,
                    client.map(ClientInfo::host).orElse(null), client.map(ClientInfo::pid).orElse(null),
                    client.map(info -> info.startedAt().toString()).orElse(null),
                    client.map(ClientInfo::version).orElse(null));
        }
    }
}
