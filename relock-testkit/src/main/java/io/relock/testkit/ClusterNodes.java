package io.relock.testkit;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * {@code CLUSTER NODES} read for {@link ClusterTopology}: one {@link Entry} a line, and what
 * it takes to compare two nodes' views of the cluster.
 */
final class ClusterNodes {

    /** Flags of a node that its peers do not (yet) count as a working member. */
    private static final Set<String> FAILING_FLAGS = Set.of("fail", "fail?", "handshake", "noaddr");

    private ClusterNodes() {
    }

    /**
     * Parses {@code CLUSTER NODES}: {@code <id> <ip:port@cport[,hostname]> <flags> <master>
     * <ping-sent> <pong-recv> <config-epoch> <link-state> <slot>...}.
     */
    static List<Entry> parse(Object reply) {
        List<Entry> entries = new ArrayList<>();
        for (String line : ((String) reply).split("\n")) {
            String[] fields = line.trim().split(" ");
            if (fields.length < 8) {
                continue;
            }
            String address = fields[1];
            int at = address.indexOf('@');
            String hostPort = at >= 0 ? address.substring(0, at) : address;
            int port = Integer.parseInt(hostPort.substring(hostPort.lastIndexOf(':') + 1));
            int slots = 0;
            int firstSlot = ClusterTopology.SLOTS;
            List<String> ranges = new ArrayList<>();
            for (int i = 8; i < fields.length; i++) {
                if (fields[i].startsWith("[")) {
                    continue; // a slot being migrated or imported, not served
                }
                int dash = fields[i].indexOf('-');
                int from = Integer.parseInt(dash < 0 ? fields[i] : fields[i].substring(0, dash));
                int to = dash < 0 ? from : Integer.parseInt(fields[i].substring(dash + 1));
                slots += to - from + 1;
                firstSlot = Math.min(firstSlot, from);
                ranges.add(fields[i]);
            }
            entries.add(new Entry(fields[0], port, Set.of(fields[2].split(",")), fields[3], Long.parseLong(fields[6]),
                    fields[7], slots, firstSlot, String.join(" ", ranges)));
        }
        return entries;
    }

    /**
     * Who serves which slot ranges and who replicates whom, by port, sorted, with the config
     * epoch of each node in {@code live}: equal for nodes that agree.
     */
    static String signature(List<Entry> entries, Set<Integer> live) {
        Map<String, Integer> ports = entries.stream().collect(Collectors.toMap(Entry::id, Entry::port));
        return entries.stream()
                .map(entry -> entry.port()
                        + (entry.isMaster() ? " master of [" + entry.slotRanges() + "]" : " replica of " + ports.get(entry.masterId()))
                        + (live.contains(entry.port()) ? " epoch " + entry.configEpoch() : ""))
                .sorted()
                .collect(Collectors.joining(", ", "[", "]"));
    }

    /** Returns the entry for {@code port}, or null if the view has none. */
    static Entry entry(List<Entry> view, int port) {
        for (Entry entry : view) {
            if (entry.port() == port) {
                return entry;
            }
        }
        return null;
    }

    /**
     * One line of {@code CLUSTER NODES}; {@code slotRanges} are the served ranges as listed
     * there (e.g. {@code "0-5460"}), separated by spaces.
     */
    record Entry(String id, int port, Set<String> flags, String masterId, long configEpoch, String linkState, int slots,
            int firstSlot, String slotRanges) {

        boolean isMaster() {
            return flags.contains("master");
        }

        boolean failing() {
            return flags.stream().anyMatch(FAILING_FLAGS::contains);
        }
    }
}
