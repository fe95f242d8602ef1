package io.relock;

import io.relock.testkit.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * A test class on one redis-server, which the subclass registers (a
 * {@link io.relock.testkit.RedisExtension}, per class or per test): each test finds the server in
 * {@link #server} and its own {@link #clients} on it, closed after the test (before a per-test
 * server stops). A subclass's own {@code @BeforeEach} methods run after the clients exist, its
 * {@code @AfterEach} methods before they are closed.
 */
abstract class SingleServerTest {

    protected RedisServer server;
    protected Clients clients;

    @BeforeEach
    final void connectClients(RedisServer server) {
        this.server = server;
        this.clients = new Clients(server);
    }

    @AfterEach
    final void closeClients() {
        clients.close();
    }
}
