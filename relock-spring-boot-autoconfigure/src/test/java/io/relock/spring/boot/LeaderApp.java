package io.relock.spring.boot;

import java.util.ArrayList;
import java.util.List;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import io.relock.spring.LeaderOnly;
import io.relock.spring.LeadershipEvent;
import io.relock.spring.LeadershipGrantedEvent;
import io.relock.spring.RelockLeadership;

/**
 * The application of the leader-election tests: a {@code @Scheduled(fixedRate = 100)}
 * {@code @LeaderOnly("billing")} job that records each run, and a listener that records the
 * leadership events, in a {@link History} per context. As a {@code main} (a child JVM:
 * {@code <redis-uri> <instance> <watchdog-timeout>}) it prints them instead: {@code GRANTED t},
 * {@code REVOKED t}, {@code RUN t}.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableScheduling
public class LeaderApp {

    /** Starts an instance in this JVM. */
    static ConfigurableApplicationContext start(String redisUri, String instance, String... properties) {
        List<String> all = new ArrayList<>(List.of("spring.data.redis.url=" + redisUri, "test.instance=" + instance,
                "spring.main.banner-mode=off", "spring.datasource.url=jdbc:h2:mem:leader-" + instance));
        all.addAll(List.of(properties));
        return new SpringApplicationBuilder(LeaderApp.class).web(WebApplicationType.NONE)
                .properties(all.toArray(String[]::new)).run();
    }

    public static void main(String[] args) {
        start(args[0], args[1], "relock.watchdog-timeout=" + args[2], "test.print=true", "logging.level.root=warn");
    }

    @Bean
    History history(@Value("${test.instance}") String instance, @Value("${test.print:false}") boolean print) {
        return new History(instance, print);
    }

    @Bean
    Job job(History history, RelockLeadership leadership) {
        return new Job(history, leadership);
    }

    /** The leader-only job. */
    static class Job {

        private final History history;
        private final RelockLeadership leadership;

        Job(History history, RelockLeadership leadership) {
            this.history = history;
            this.leadership = leadership;
        }

        @Scheduled(fixedRate = 100)
        @LeaderOnly("billing")
        public void run() {
            long start = System.nanoTime();
            long term = leadership.leadership("billing").map(io.relock.Leadership::term).orElse(-1L);
            history.ran(term, start, System.nanoTime());
        }
    }

    /** A run of the job, on one instance. */
    record Run(String instance, long term, long startNanos, long endNanos) {
    }

    /** A leadership event, on one instance. */
    record Event(String instance, String kind, long term, long nanos) {
    }

    /** What one instance saw: its runs and its events, in order. */
    static class History {

        final String instance;
        private final boolean print;
        private final List<Run> runs = new ArrayList<>(); // guarded by this
        private final List<Event> events = new ArrayList<>(); // guarded by this

        History(String instance, boolean print) {
            this.instance = instance;
            this.print = print;
        }

        synchronized void ran(long term, long start, long end) {
            runs.add(new Run(instance, term, start, end));
            if (print) {
                System.out.println("RUN " + term);
            }
        }

        @EventListener
        public synchronized void on(LeadershipEvent event) {
            String kind = event instanceof LeadershipGrantedEvent ? "GRANTED" : "REVOKED";
            events.add(new Event(instance, kind, event.getTerm(), System.nanoTime()));
            if (print) {
                System.out.println(kind + " " + event.getTerm());
            }
        }

        synchronized List<Run> runs() {
            return List.copyOf(runs);
        }

        synchronized List<Event> events() {
            return List.copyOf(events);
        }
    }
}
