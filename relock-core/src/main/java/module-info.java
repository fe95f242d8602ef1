/**
 * Relock: distributed locks on Redis, on the Lettuce client. Only {@code io.relock} is exported;
 * {@code io.relock.internal} (and any package under it) is not, so code outside this module
 * cannot compile against it or reach it by reflection.
 */
// Lettuce and Reactor have no module-info: requiring them by their Automatic-Module-Name is the intent.
@SuppressWarnings("requires-automatic")
module io.relock {
    exports io.relock;

    // Lettuce 6.8 to 7.x is an automatic module of this name (its manifest's Automatic-Module-Name).
    requires lettuce.core;
    // RedisGateway subscribes to Lettuce's event bus, a Reactor Flux.
    requires reactor.core;
    // The timer; the others are the Netty modules lettuce-core needs (the ones this pom declares):
    // an automatic module does not pull explicit modules into the graph, so they are named here.
    requires io.netty.common;
    requires io.netty.handler;
    requires io.netty.transport;
    requires io.netty.resolver.dns;
    requires org.slf4j;
}
