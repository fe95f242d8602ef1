package io.relock.bench;

import java.util.List;

/**
 * What a scenario needs inside a worker: the library, the server(s), the bench's own admin
 * connections to them, and the phase durations.
 *
 * @param masters the independent masters for RedLock (S4); empty when not started
 * @param masterAdmins admin connections to {@code masters}, same order
 * @param heap the worker's heap size, for the JVMs it starts itself (S3's waiter in another JVM)
 */
record WorkerContext(
        Library library,
        String uri,
        RedisAdmin admin,
        List<String> masters,
        List<RedisAdmin> masterAdmins,
        Load.Timing timing,
        String heap) {

    /** Connects a client of the library under test with its defaults. */
    LockLibrary connect() {
        return library.connect(uri, null);
    }
}
