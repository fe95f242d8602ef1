package io.relock.demo;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * What happened when, told by several threads: each event is stamped with the milliseconds
 * since the timeline (re)started, and {@link #printTo} prints them in order. Thread-safe.
 */
final class Timeline {

    private record Event(long atMillis, String who, String what) {}

    private final List<Event> events = new ArrayList<>();
    private volatile long startNanos = System.nanoTime();

    /** Forgets every event and starts counting from now. */
    void restart() {
        synchronized (events) {
            events.clear();
            startNanos = System.nanoTime();
        }
    }

    /** Milliseconds since the timeline started. */
    long now() {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }

    /** Records an event now and returns its time. */
    long add(String who, String what) {
        long at = now();
        synchronized (events) {
            events.add(new Event(at, who, what));
        }
        return at;
    }

    /** Prints the events in time order, one note each. */
    void printTo(Report.Section section) {
        List<Event> sorted;
        synchronized (events) {
            sorted = new ArrayList<>(events);
        }
        sorted.sort(Comparator.comparingLong(Event::atMillis));
        for (Event event : sorted) {
            section.note(String.format(Locale.ROOT, "%+6d ms  %-8s %s", event.atMillis(), event.who(), event.what()));
        }
    }
}
