/**
 * Relock: distributed locks on Redis, on the Lettuce client. Only {@code io.relock} is exported
 * to everyone; {@code io.relock.internal} and the packages under it only to Relock's other back
 * ends (JDBC, ZooKeeper), so no other code can compile against them or reach them by reflection.
 */
// Lettuce and Reactor have no module-info: requiring them by their Automatic-Module-Name is the
// intent. The back ends' modules are built after this one ("module"): naming them is the intent.
@SuppressWarnings({"requires-automatic", "module"})
module io.relock {
    exports io.relock;
    exports io.relock.internal to io.relock.jdbc, io.relock.zookeeper;
    exports io.relock.internal.backend to io.relock.jdbc, io.relock.zookeeper;
    exports io.relock.internal.engine to io.relock.jdbc, io.relock.zookeeper;
    exports io.relock.internal.lease to io.relock.jdbc, io.relock.zookeeper;
    exports io.relock.internal.support to io.relock.jdbc, io.relock.zookeeper;
    exports io.relock.internal.types to io.relock.jdbc, io.relock.zookeeper;

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
