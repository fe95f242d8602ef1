package io.relock;

import io.relock.testkit.ClusterTopology;
import io.relock.testkit.RedisServer;
import io.relock.testkit.SentinelTopology;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Where a test's clients connect, and the servers that hold the locks (to read what is stored
 * on them): one server, the master of a Sentinel topology, or the masters of a cluster.
 */
record Backend(String description, Supplier<RelockConfig.Builder> config, Supplier<List<RedisServer>> masters,
        Function<String, RedisServer> masterFor) {

    static Backend single(RedisServer server) {
        return new Backend("single server", () -> RelockConfig.builder().singleServer(server.uri()),
                () -> List.of(server), key -> server);
    }

    static Backend sentinel(SentinelTopology topology) {
        List<String> sentinels = topology.sentinelUris();
        return new Backend("sentinel",
                () -> RelockConfig.builder().sentinel(topology.masterName(), sentinels.toArray(String[]::new)),
                () -> List.of(topology.master()), key -> topology.master());
    }

    static Backend cluster(ClusterTopology topology) {
        List<String> seeds = topology.uris();
        return new Backend("cluster", () -> RelockConfig.builder().cluster(seeds.toArray(String[]::new)),
                topology::masters, topology::masterFor);
    }

    /** The same single server reached at another address, e.g. through a fault proxy. */
    Backend withUri(String uri) {
        return new Backend(description + " via " + uri, () -> RelockConfig.builder().singleServer(uri), masters, masterFor);
    }

    /** The master that holds {@code key} now (in a cluster, its slot's master). */
    RedisServer masterFor(String key) {
        return masterFor.apply(key);
    }

    /** Keys stored on all masters together, apart from the clients' registry entries. */
    long dbSize() {
        return masters.get().stream().mapToLong(Backend::lockKeys).sum();
    }

    /** Keys on {@code server} apart from Relock clients' registry entries ({@code relock:client:<id>}). */
    static long lockKeys(RedisServer server) {
        return ((List<?>) server.command("KEYS", "*")).stream()
                .filter(key -> !String.valueOf(key).contains("relock:client:")).count();
    }

    /** How often the masters ran a command, e.g. {@code evalsha}, since their start. */
    long calls(String command) {
        String prefix = "cmdstat_" + command + ":";
        return masters.get().stream().mapToLong(server -> server.info("commandstats").lines()
                .filter(line -> line.startsWith(prefix)).findFirst()
                .map(line -> Long.parseLong(line.substring(line.indexOf("calls=") + 6, line.indexOf(','))))
                .orElse(0L)).sum();
    }

    @Override
    public String toString() {
        return description;
    }
}
