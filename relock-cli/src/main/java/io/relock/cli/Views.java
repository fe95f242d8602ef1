package io.relock.cli;

import io.relock.ClientInfo;
import io.relock.LockInfo;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** How the commands print a {@link LockView}: aligned text for people, JSON for machines. */
final class Views {

    private static final String LABEL = "%-15s %s%n";

    private Views() {}

    /** The lease left as people read it. */
    static String lease(long millis) {
        if (millis == -1) {
            return "no expiry";
        }
        if (millis < 0) {
            return "-";
        }
        return String.format(Locale.ROOT, "%.3f s", millis / 1000.0);
    }

    /** {@code relock inspect}'s text. */
    static String text(LockView view) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(LABEL, "lock", view.name()));
        if (!view.key().equals(view.name())) {
            out.append(String.format(LABEL, "key", view.key()));
        }
        if (view.type() == LockInfo.Kind.NOT_A_LOCK) {
            out.append(String.format(LABEL, "state", "not a lock: a Redis " + view.redisType()
                    + (view.redisType().equals("hash") || view.redisType().equals("string")
                            ? " that no lock type writes" : "")));
            return out.toString();
        }
        out.append(String.format(LABEL, "state", view.locked() ? "locked" : "free"));
        if (view.type() != LockInfo.Kind.NONE) {
            out.append(String.format(LABEL, "type", view.type().label()
                    + (view.mode() == null ? "" : " (mode " + view.mode() + ")")));
        }
        if (view.locked()) {
            out.append(String.format(LABEL, "holders", holderRow("CLIENT ID", "HOST", "PID", "THREAD", "HOLDS")));
            for (LockView.Holder holder : view.holders()) {
                ClientInfo client = holder.client();
                out.append(String.format(LABEL, "", holderRow(holder.clientId(), client == null ? "-" : client.host(),
                        client == null || client.pid() < 0 ? "-" : Long.toString(client.pid()),
                        Long.toString(holder.threadId()), Long.toString(holder.holdCount()))));
            }
            out.append(String.format(LABEL, "lease left", lease(view.leaseMillis())));
        }
        if (view.waitingClients() >= 0) {
            out.append(String.format(LABEL, "waiting", view.waitingClients() + " client"
                    + (view.waitingClients() == 1 ? "" : "s") + " subscribed to " + LockReader.channel(view.key(),
                            view.type())));
        }
        if (view.type() == LockInfo.Kind.FAIR) {
            out.append(String.format(LABEL, "queue", view.queue().size() + " waiting"
                    + (view.queue().isEmpty() ? "" : ": " + String.join(", ", view.queue()))));
        }
        if (view.fencingToken() != null) {
            out.append(String.format(LABEL, "fencing token", view.fencingToken()
                    + (view.locked() ? "" : " (the last one handed out)")));
        }
        return out.toString();
    }

    private static String holderRow(String clientId, String host, String pid, String thread, String holds) {
        return String.format("%-36s  %-20s  %8s  %8s  %5s", clientId, host, pid, thread, holds).stripTrailing();
    }

    /** The view as a JSON object's fields. */
    static Map<String, Object> json(LockView view) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("name", view.name());
        json.put("key", view.key());
        json.put("locked", view.locked());
        json.put("type", view.type() == LockInfo.Kind.NOT_A_LOCK ? "not-a-lock" : view.type().label());
        json.put("redisType", view.redisType());
        json.put("mode", view.mode());
        List<Object> holders = new ArrayList<>();
        for (LockView.Holder holder : view.holders()) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("owner", holder.owner());
            entry.put("clientId", holder.clientId());
            entry.put("threadId", holder.threadId());
            entry.put("holdCount", holder.holdCount());
            ClientInfo client = holder.client();
            entry.put("host", client == null ? null : client.host());
            entry.put("pid", client == null ? null : client.pid());
            entry.put("clientStartedAt", client == null ? null : client.startedAt().toString());
            entry.put("clientVersion", client == null ? null : client.version());
            holders.add(entry);
        }
        json.put("holders", holders);
        json.put("leaseMillis", view.leaseMillis());
        if (view.waitingClients() >= 0) {
            json.put("waitingClients", view.waitingClients());
        }
        if (view.type() == LockInfo.Kind.FAIR) {
            json.put("queue", view.queue());
        }
        json.put("fencingToken", view.fencingToken());
        return json;
    }
}
