package io.relock.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The bench's command-line flags. Each flag may be given once; {@code --quick} only changes
 * the defaults of the flags not given.
 *
 * @param count the counting phase with MONITOR after each window (round trips per operation)
 * @param cases case ids to run ({@code S1/t64}, …); empty for all cases of the chosen scenarios
 */
record Options(
        Duration window,
        Duration warmup,
        Duration count,
        int repeats,
        Set<String> scenarios,
        Set<String> cases,
        boolean quick,
        Path out,
        String heap) {

    /** The warm-up before each window unless {@code --warmup} or {@code --quick} says otherwise. */
    static final Duration DEFAULT_WARMUP = Duration.ofSeconds(2);

    static final List<String> ALL_SCENARIOS = List.of("S0", "S1", "S2", "S3", "S4", "S5", "S6", "S7");

    static final String USAGE = String.join("\n",
            "usage: Bench [flags]   (mvn -q -B -Pbench -DskipTests verify -Dbench.args=\"flags\")",
            "  --window 5s          measured window of each case, after the warm-up",
            "  --warmup 2s          warm-up before each window",
            "  --repeats 2          Relock/Redisson pairs per case, alternating which goes first (at least 2 for a spread)",
            "  --scenarios S0,S1,S2,S3,S4,S5,S6,S7",
            "  --cases S1/t64,...   only these cases (ids as printed in the table)",
            "  --quick              a smoke run of a minute or two: --window 1s --warmup 500ms, only the goals' cases",
            "  --out results        where the run's directory and latest.md go",
            "  --heap 512m          -Xms/-Xmx of every worker JVM",
            "durations: 500ms, 2s, 1.5s, 1m");

    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m)");

    /**
     * Parses flags; each argument may itself hold several flags separated by spaces (as
     * {@code -Dbench.args} passes them).
     *
     * @throws IllegalArgumentException naming the flag, for anything not understood
     */
    static Options parse(String... args) {
        List<String> words = new ArrayList<>();
        for (String arg : args) {
            for (String word : arg.trim().split("\\s+")) {
                if (!word.isEmpty()) {
                    words.add(word);
                }
            }
        }
        Duration window = null;
        Duration warmup = null;
        Integer repeats = null;
        Set<String> scenarios = null;
        Set<String> cases = null;
        boolean quick = false;
        Path out = null;
        String heap = null;
        Set<String> seen = new LinkedHashSet<>();
        for (int i = 0; i < words.size(); i++) {
            String flag = words.get(i);
            if (!seen.add(flag)) {
                throw new IllegalArgumentException(flag + " was given twice");
            }
            if (flag.equals("--quick")) {
                quick = true;
                continue;
            }
            if (flag.equals("--help") || flag.equals("-h")) {
                throw new IllegalArgumentException("help");
            }
            if (i + 1 >= words.size()) {
                throw new IllegalArgumentException(flag + " needs a value");
            }
            String value = words.get(++i);
            switch (flag) {
                case "--window" -> window = duration(flag, value);
                case "--warmup" -> warmup = duration(flag, value);
                case "--repeats" -> {
                    repeats = integer(flag, value);
                    if (repeats < 1) {
                        throw new IllegalArgumentException("--repeats must be at least 1: " + value);
                    }
                }
                case "--scenarios" -> scenarios = scenarios(value);
                case "--cases" -> cases = new LinkedHashSet<>(List.of(value.split(",")));
                case "--out" -> out = Path.of(value);
                case "--heap" -> {
                    if (!value.matches("\\d+[mMgG]")) {
                        throw new IllegalArgumentException("--heap must look like 512m or 1g: " + value);
                    }
                    heap = value;
                }
                default -> throw new IllegalArgumentException("unknown flag " + flag);
            }
        }
        if (cases != null && scenarios == null) {
            scenarios = new LinkedHashSet<>();
            for (String id : cases) {
                scenarios.add(id.split("/")[0].toUpperCase(Locale.ROOT));
            }
        }
        return new Options(
                window != null ? window : quick ? Duration.ofSeconds(1) : Duration.ofSeconds(5),
                warmup != null ? warmup : quick ? Duration.ofMillis(500) : DEFAULT_WARMUP,
                quick ? Duration.ofMillis(200) : Duration.ofMillis(300),
                repeats != null ? repeats : 2,
                scenarios != null ? scenarios : new LinkedHashSet<>(ALL_SCENARIOS),
                cases != null ? cases : Set.of(),
                quick,
                out != null ? out : Path.of("results"),
                heap != null ? heap : "512m");
    }

    /** Whether {@code caseId} of a chosen scenario is to run. */
    boolean runs(String caseId) {
        return scenarios.contains(caseId.split("/")[0]) && (cases.isEmpty() || cases.contains(caseId));
    }

    /** The flags as given to a worker, for its phases. */
    Load.Timing timing() {
        return new Load.Timing(warmup, window, count);
    }

    static Duration duration(String flag, String value) {
        Matcher matcher = DURATION.matcher(value.toLowerCase(Locale.ROOT));
        if (!matcher.matches()) {
            throw new IllegalArgumentException(flag + " must be a duration such as 500ms, 5s or 1m: " + value);
        }
        double amount = Double.parseDouble(matcher.group(1));
        double millis = switch (matcher.group(2)) {
            case "ms" -> amount;
            case "s" -> amount * 1000;
            default -> amount * 60_000;
        };
        if (millis < 1) {
            throw new IllegalArgumentException(flag + " must be at least 1ms: " + value);
        }
        return Duration.ofMillis(Math.round(millis));
    }

    private static int integer(String flag, String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + " must be a whole number: " + value, e);
        }
    }

    private static Set<String> scenarios(String value) {
        Set<String> chosen = new LinkedHashSet<>();
        for (String id : value.split(",")) {
            String upper = id.trim().toUpperCase(Locale.ROOT);
            if (!ALL_SCENARIOS.contains(upper)) {
                throw new IllegalArgumentException("--scenarios: no scenario " + id + " (known: " + ALL_SCENARIOS + ")");
            }
            chosen.add(upper);
        }
        return chosen;
    }
}
