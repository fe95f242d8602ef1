package io.relock.internal;

import io.relock.ClientInfo;
import io.relock.Relock;
import java.time.Instant;
import java.util.function.Function;

/**
 * How a back end in another module turns its {@link Client} into a {@link Relock}: the API class
 * keeps its constructor private and hands this class the one way to call it when it is loaded.
 */
public final class Clients {

    private static volatile Function<Client, Relock> factory;
    private static volatile Function<Relock, Client> unwrapper;

    private Clients() {}

    /** Called once, by {@code Relock}'s static initialiser: how to make a Relock, and how to see its client. */
    public static void install(Function<Client, Relock> relockFactory, Function<Relock, Client> clientOf) {
        if (factory != null) {
            throw new IllegalStateException("the Relock factory is installed already");
        }
        factory = relockFactory;
        unwrapper = clientOf;
    }

    /** The client a {@link Relock} runs on: how a back end's module recognises its own. */
    public static Client clientOf(Relock relock) {
        return unwrapper.apply(relock);
    }

    /** How a client of this process started at {@code startedAt} describes itself (host, pid, version). */
    public static ClientInfo thisProcess(String clientId, Instant startedAt) {
        return ClientRegistry.thisProcess(clientId, startedAt);
    }

    /** A {@link Relock} on {@code client}, with the JVM shutdown hook when its settings ask for one. */
    public static Relock relock(Client client) {
        try {
            Class.forName(Relock.class.getName(), true, Relock.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
        return factory.apply(client);
    }
}
