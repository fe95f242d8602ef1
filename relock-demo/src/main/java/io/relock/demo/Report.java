package io.relock.demo;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The demo's report: a header, one section per scenario, a summary. Every line is printed as
 * soon as it is known, so a reader sees a slow scenario progress.
 *
 * <pre>
 * 1. Title
 *    What this shows: ...
 *    figure ............... value
 *    PASS  what was proved
 * </pre>
 *
 * <p>Not thread-safe: only the thread running the demo writes to it.
 */
final class Report {

    private static final String INDENT = "   ";
    private static final int LABEL_WIDTH = 34;

    private final PrintStream out;
    private final List<Outcome> outcomes = new ArrayList<>();

    /** The verdict of one section. */
    record Outcome(String number, String title, boolean passed, String verdict) {}

    Report(PrintStream out) {
        this.out = out;
    }

    /** Prints a line of the header, such as the report's title. */
    void line(String text) {
        out.println(text);
        out.flush();
    }

    /** Prints a {@code label: value} line of the header. */
    void fact(String label, String value) {
        line(String.format(Locale.ROOT, "%-8s %s", label + ":", value));
    }

    /** Starts a section: prints its title and the one line saying what it shows. */
    Section begin(String number, String title, String whatItShows) {
        out.println();
        line(number + ". " + title);
        line(INDENT + "What this shows: " + whatItShows);
        return new Section(number, title);
    }

    /** The verdicts so far, in order. */
    List<Outcome> outcomes() {
        return List.copyOf(outcomes);
    }

    /** Whether there is at least one section and every one passed. */
    boolean allPassed() {
        return !outcomes.isEmpty() && outcomes.stream().allMatch(Outcome::passed);
    }

    /** Prints the closing lines: how many sections passed, which failed, and how long it took. */
    void summary(Duration elapsed, String cleanup) {
        long passed = outcomes.stream().filter(Outcome::passed).count();
        out.println();
        line(String.format(Locale.ROOT, "Summary: %d of %d scenarios passed in %s.", passed, outcomes.size(),
                seconds(elapsed)));
        for (Outcome outcome : outcomes) {
            if (!outcome.passed()) {
                line(INDENT + "FAILED " + outcome.number() + ". " + outcome.title());
            }
        }
        line(INDENT + cleanup);
    }

    /**
     * The exception and the messages of its causes: the cause says what Redis or the database
     * answered, where the outer exception only says what was being done.
     */
    static String describe(Throwable failure) {
        StringBuilder text = new StringBuilder(failure.toString());
        for (Throwable cause = failure.getCause(); cause != null && cause != cause.getCause(); cause = cause.getCause()) {
            String message = cause.getMessage() != null ? cause.getMessage() : cause.toString();
            if (text.indexOf(message) < 0) {
                text.append(" <- ").append(message);
            }
        }
        return text.toString();
    }

    /** A duration for people: {@code 840 ms}, or {@code 3.2 s} from one second on. */
    static String human(Duration duration) {
        long millis = duration.toMillis();
        return millis < 1000 ? millis + " ms" : seconds(duration);
    }

    /** Milliseconds for people: {@code 840 ms}, or {@code 3.2 s} from one second on. */
    static String millis(long millis) {
        return human(Duration.ofMillis(millis));
    }

    private static String seconds(Duration duration) {
        return String.format(Locale.ROOT, "%.1f s", duration.toMillis() / 1000.0);
    }

    /** One scenario's part of the report; ends with exactly one verdict. */
    final class Section {

        private final String number;
        private final String title;
        private boolean decided;

        private Section(String number, String title) {
            this.number = number;
            this.title = title;
        }

        /** Prints a measured figure, {@code label ....... value}. */
        void figure(String label, Object value) {
            StringBuilder leader = new StringBuilder(label).append(' ');
            while (leader.length() < LABEL_WIDTH) {
                leader.append('.');
            }
            line(INDENT + leader + ' ' + value);
        }

        /** Prints a free line inside the section, such as one event of a timeline. */
        void note(String text) {
            line(INDENT + text);
        }

        /** Ends the section with PASS and what the scenario proved. */
        void pass(String proved) {
            verdict(true, proved);
        }

        /** Ends the section with FAIL and what went wrong. */
        void fail(String why) {
            verdict(false, why);
        }

        /** Ends the section with PASS if {@code passed}, else FAIL. */
        void verdict(boolean passed, String whatPassingProves, String whyItFailed) {
            verdict(passed, passed ? whatPassingProves : whyItFailed);
        }

        /** Whether {@link #pass} or {@link #fail} was called. */
        boolean decided() {
            return decided;
        }

        private void verdict(boolean passed, String text) {
            if (decided) {
                throw new IllegalStateException("section " + number + " already has a verdict");
            }
            decided = true;
            outcomes.add(new Outcome(number, title, passed, text));
            line(INDENT + (passed ? "PASS  " : "FAIL  ") + text);
        }
    }
}
