/**
 * Real Redis servers and other processes for tests, with fault injection.
 *
 * <ul>
 *   <li>{@link io.relock.testkit.RedisServer} starts a {@code redis-server} process on a free
 *       loopback port, without persistence, and can kill (SIGKILL), pause (SIGSTOP), resume
 *       (SIGCONT), restart and stop it; {@link io.relock.testkit.RedisServer#command(String...)}
 *       runs commands on it without a Redis client library.</li>
 *   <li>{@link io.relock.testkit.RedisBinary} finds the binary: {@code RELOCK_REDIS_SERVER},
 *       then {@code PATH}, then the one shipped in {@code embedded-redis} (Linux and macOS), so
 *       the tests run on a machine with only a JDK and Maven.</li>
 *   <li>{@link io.relock.testkit.RedisExtension} is the JUnit 5 extension: a server per class
 *       or per test, injected as a {@code RedisServer} parameter.</li>
 *   <li>{@link io.relock.testkit.SentinelTopology} (a master, replicas and Sentinels) and
 *       {@link io.relock.testkit.ClusterTopology} (a Redis Cluster) are whole topologies of such
 *       servers, with failover and repair; {@link io.relock.testkit.SentinelExtension} and
 *       {@link io.relock.testkit.ClusterExtension} give one to a test class.</li>
 *   <li>{@link io.relock.testkit.FaultProxy} sits between a client and a server and injects
 *       network faults at a chosen command: cut before or after it reached Redis, or before
 *       its reply gets through; delay, black hole, half-open connections, refused connects.</li>
 *   <li>{@link io.relock.testkit.TlsCertificates} are the certificates of servers started with
 *       {@code RedisServer.builder().tls()}.</li>
 *   <li>{@link io.relock.testkit.ChildJvm} runs a {@code main} class in another JVM — "another
 *       process" that holds a lock, is told what to do on stdin, reports on stdout, and can be
 *       paused or killed.</li>
 * </ul>
 *
 * <p><b>No orphans.</b> Every process started here is killed when the JVM exits: by a shutdown
 * hook on a normal exit, and by a small per-JVM reaper process ({@code sh}) if the JVM is killed
 * with SIGKILL (for example by a build timeout). Temporary files live under
 * {@code ${java.io.tmpdir}/relock-testkit-<user>/} and are removed with the JVM's processes.
 *
 * <p>Tests that use this package should wait with bounded waits ({@code awaitLine},
 * {@code awaitExit}, latches), never with sleeps. POSIX only (Linux, macOS); public API,
 * published for users testing their own code against Redis.
 */
package io.relock.testkit;
