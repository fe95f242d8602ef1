package io.relock.bench;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The JVM that measures one library in one scenario, started by {@link Bench}:
 * <pre>
 * Worker --library relock --scenario S1 --uri redis://127.0.0.1:PORT --warmup-ms 2000
 *        --window-ms 5000 --count-ms 500 --heap 512m [--masters uri,uri,...] [--cases S1/t1,...] [--quick]
 * </pre>
 * For each case it prints one line {@code RESULT <json>} as soon as the case ends, then
 * {@code DONE}. Everything else it prints (library logs) goes to stderr. It exits when its
 * parent closes its stdin, so it never outlives the bench.
 */
public final class Worker {

    static final String RESULT_PREFIX = "RESULT ";
    static final String DONE = "DONE";

    private Worker() {
    }

    public static void main(String[] args) throws Exception {
        exitWhenParentGoes();
        Map<String, String> flags = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--quick")) {
                flags.put("quick", "true");
            } else {
                flags.put(args[i].substring(2), args[++i]);
            }
        }
        Library library = Library.fromId(flags.get("library"));
        Scenario scenario = Scenario.byId(flags.get("scenario"));
        boolean quick = flags.containsKey("quick");
        Load.Timing timing = new Load.Timing(millis(flags, "warmup-ms"), millis(flags, "window-ms"),
                millis(flags, "count-ms"));
        // --cases also gives the order (Scenario.order); cases the scenario does not have are skipped.
        List<String> cases = flags.containsKey("cases")
                ? List.of(flags.get("cases").split(",")).stream().filter(scenario.cases(quick)::contains).toList()
                : scenario.cases(quick);
        List<String> masters = flags.containsKey("masters") ? List.of(flags.get("masters").split(",")) : List.of();

        List<RedisAdmin> masterAdmins = new ArrayList<>();
        try (RedisAdmin admin = new RedisAdmin(flags.get("uri"))) {
            for (String master : masters) {
                masterAdmins.add(new RedisAdmin(master));
            }
            WorkerContext context = new WorkerContext(library, flags.get("uri"), admin, masters, masterAdmins, timing,
                    flags.get("heap"));
            for (String caseId : cases) {
                admin.flushAll();
                masterAdmins.forEach(RedisAdmin::flushAll);
                CaseResult result;
                try {
                    result = scenario.run(caseId, context);
                } catch (Throwable e) {
                    result = new CaseResult(caseId, caseId).error(Diagnostics.stackTrace(e));
                }
                for (Map<String, Object> json : result.toJsons(library)) {
                    System.out.println(RESULT_PREFIX + Json.write(json));
                }
                System.out.flush();
            }
        } finally {
            masterAdmins.forEach(RedisAdmin::close);
        }
        System.out.println(DONE);
        System.out.flush();
        // A library may leave non-daemon threads behind; the results are out.
        System.exit(0);
    }

    private static Duration millis(Map<String, String> flags, String name) {
        return Duration.ofMillis(Long.parseLong(flags.get(name)));
    }

    /** The bench keeps our stdin open and never writes to it: end of input means it is gone. */
    private static void exitWhenParentGoes() {
        Thread watcher = new Thread(() -> {
            try {
                InputStream in = System.in;
                while (in.read() >= 0) {
                    // nothing is ever sent
                }
            } catch (IOException ignored) {
                // same as end of input
            }
            Runtime.getRuntime().halt(3);
        }, "bench-parent-watcher");
        watcher.setDaemon(true);
        watcher.start();
    }
}
