package io.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;

import io.relock.testkit.ChildJvm;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import io.relock.spring.LeaderOnly;
import io.relock.spring.RelockLeadership;

/**
 * {@link LeaderOnly} across instances of one application ({@link LeaderApp}: a job every 100 ms
 * that only the leader of "billing" runs), each a Spring context of its own on one real Redis;
 * one instance is a child JVM where it must crash.
 */
class LeaderOnlyTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perTest();

    private static final Duration PROMPTLY = Duration.ofSeconds(30);
    /** A child JVM with Spring Boot's whole test classpath starts slowly on a loaded machine: setup, not measured. */
    private static final Duration CHILD_START = Duration.ofSeconds(90);
    /** The lease of the crash test, as in core's LeaderElectionTest. */
    private static final long LEASE = 1500;

    private RedisServer server;
    private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();
    /** Each context's history, kept past its close. */
    private static final Map<ConfigurableApplicationContext, LeaderApp.History> HISTORIES = new IdentityHashMap<>();

    @BeforeEach
    void server(RedisServer server) {
        this.server = server;
    }

    @AfterEach
    void closeContexts() {
        contexts.forEach(ConfigurableApplicationContext::close);
        synchronized (HISTORIES) {
            HISTORIES.clear();
        }
    }

    private ConfigurableApplicationContext start(String instance, String... properties) {
        ConfigurableApplicationContext context = LeaderApp.start(server.uri(), instance, properties);
        contexts.add(context);
        synchronized (HISTORIES) {
            HISTORIES.put(context, context.getBean(LeaderApp.History.class));
        }
        return context;
    }

    private static LeaderApp.History history(ConfigurableApplicationContext context) {
        synchronized (HISTORIES) {
            return HISTORIES.get(context);
        }
    }

    private static boolean leads(ConfigurableApplicationContext context) {
        return context.getBean(RelockLeadership.class).isLeader("billing");
    }

    /**
     * History checked: three instances with a 30 s lease. Only one runs the job (the one that
     * leads: the others run it zero times while it runs five); when its context closes, one of
     * the others is granted the election within a second (the release, not the lease, moved it)
     * and runs the job; then again for the third. Over the whole test, all runs sorted by start
     * form one block per instance, in the order they led, each block in one term, terms rising,
     * and no run overlaps another; each closed instance saw exactly GRANTED t, REVOKED t, the last
     * one GRANTED t.
     */
    @Test
    void theJobRunsOnOneInstanceAtATimeAndMovesAtOnceWhenItsContextCloses() {
        String watchdog = "relock.watchdog-timeout=30s";
        List<ConfigurableApplicationContext> open = new ArrayList<>(List.of(start("a", watchdog), start("b", watchdog),
                start("c", watchdog)));
        Eventually.await(PROMPTLY, "one instance ran the job 5 times",
                () -> open.stream().anyMatch(context -> history(context).runs().size() >= 5));
        ConfigurableApplicationContext leader = open.stream().filter(context -> !history(context).runs().isEmpty())
                .findFirst().orElseThrow();
        assertThat(open).filteredOn(context -> !history(context).runs().isEmpty()).containsExactly(leader);
        assertThat(leads(leader)).isTrue();
        List<String> order = new ArrayList<>(List.of(history(leader).instance));

        for (int handOver = 0; handOver < 2; handOver++) {
            open.remove(leader);
            long closing = System.nanoTime();
            leader.close();
            Eventually.await(PROMPTLY, "another instance ran the job",
                    () -> open.stream().anyMatch(context -> !history(context).runs().isEmpty()));
            leader = open.stream().filter(context -> !history(context).runs().isEmpty()).findFirst().orElseThrow();
            LeaderApp.History next = history(leader);
            long grantedMillis = TimeUnit.NANOSECONDS.toMillis(next.events().get(0).nanos() - closing);
            long ranMillis = TimeUnit.NANOSECONDS.toMillis(next.runs().get(0).startNanos() - closing);
            System.out.println("LeaderOnlyTest: context close -> another instance granted after " + grantedMillis
                    + " ms, its first run after " + ranMillis + " ms (lease 30000 ms, job every 100 ms)");
            assertThat(grantedMillis).isLessThan(1000);
            assertThat(ranMillis).isLessThan(1000);
            order.add(next.instance);
        }

        List<LeaderApp.Run> runs = new ArrayList<>();
        contexts.forEach(context -> runs.addAll(history(context).runs()));
        runs.sort(Comparator.comparingLong(LeaderApp.Run::startNanos));
        List<String> blocks = new ArrayList<>();
        List<Long> terms = new ArrayList<>();
        for (int i = 0; i < runs.size(); i++) {
            LeaderApp.Run run = runs.get(i);
            if (blocks.isEmpty() || !blocks.get(blocks.size() - 1).equals(run.instance())) {
                blocks.add(run.instance());
                terms.add(run.term());
            }
            assertThat(run.term()).as("run %s", run).isEqualTo(terms.get(terms.size() - 1));
            if (i > 0) {
                assertThat(run.startNanos()).as("%s starts after %s ended", run, runs.get(i - 1))
                        .isGreaterThanOrEqualTo(runs.get(i - 1).endNanos());
            }
        }
        assertThat(blocks).isEqualTo(order);
        assertThat(terms).isSorted().doesNotHaveDuplicates();
        for (int i = 0; i < 3; i++) {
            String instance = order.get(i);
            List<String> events = contexts.stream().map(LeaderOnlyTest::history)
                    .filter(history -> history.instance.equals(instance)).findFirst().orElseThrow().events().stream()
                    .map(event -> event.kind() + " " + event.term()).toList();
            long term = terms.get(i);
            assertThat(events).as(instance).isEqualTo(i < 2 ? List.of("GRANTED " + term, "REVOKED " + term)
                    : List.of("GRANTED " + term));
        }
    }

    /**
     * History checked: the leader's lock vanishes from Redis (as after a data loss); its next
     * renewal finds it gone, it hears REVOKED t1, runs again and is GRANTED t2 > t1. Every run lies
     * between the GRANTED and the REVOKED of its term: none between the revoke and the new grant.
     */
    @Test
    void aLostLeaseRevokesTheTermBeforeANewOneIsGranted() {
        ConfigurableApplicationContext context = start("solo", "relock.watchdog-timeout=1500ms");
        LeaderApp.History history = history(context);
        Eventually.await(PROMPTLY, "the job ran", () -> !history.runs().isEmpty());
        assertThat(server.command("DEL", "billing")).isEqualTo(1L);
        Eventually.await(PROMPTLY, "granted, revoked, granted again", () -> history.events().size() >= 3);
        Eventually.await(PROMPTLY, "the job ran in the new term",
                () -> history.runs().stream().anyMatch(run -> run.term() == history.events().get(2).term()));
        List<LeaderApp.Event> events = history.events().subList(0, 3);
        assertThat(events).extracting(LeaderApp.Event::kind).containsExactly("GRANTED", "REVOKED", "GRANTED");
        assertThat(events.get(1).term()).isEqualTo(events.get(0).term());
        assertThat(events.get(2).term()).isGreaterThan(events.get(0).term());
        for (LeaderApp.Run run : history.runs()) {
            if (run.term() == events.get(0).term()) {
                assertThat(run.startNanos()).as("%s", run).isBetween(events.get(0).nanos(), events.get(1).nanos());
            } else {
                assertThat(run.term()).as("%s", run).isEqualTo(events.get(2).term());
                assertThat(run.startNanos()).as("%s", run).isGreaterThanOrEqualTo(events.get(2).nanos());
            }
        }
    }

    /**
     * History checked: the child JVM's instance is GRANTED t and runs the job; the two instances
     * here, waiting as candidates, run it zero times. After SIGKILL of the child, exactly one of
     * them is granted a term above t within the lease (plus 500 ms of scheduling slack, as in
     * core's LeaderElectionTest) and runs the job; the other neither runs it nor hears an event.
     */
    @Test
    void aKilledLeaderJvmIsReplacedWithinTheLease() {
        try (ChildJvm child = ChildJvm.start(LeaderApp.class, server.uri(), "child", LEASE + "ms")) {
            long childTerm = Long.parseLong(child.awaitLine("GRANTED", CHILD_START).split(" ")[1]);
            child.awaitLine("RUN " + childTerm, PROMPTLY);
            String watchdog = "relock.watchdog-timeout=" + LEASE + "ms";
            List<ConfigurableApplicationContext> here = List.of(start("b", watchdog), start("c", watchdog));
            Eventually.await(PROMPTLY, "both instances here wait for the election", () -> server
                    .command("PUBSUB", "NUMSUB", "redisson_lock__channel:{billing}").toString().endsWith("2]"));
            child.awaitLine("RUN " + childTerm, PROMPTLY);
            assertThat(here).allSatisfy(context -> assertThat(history(context).runs()).isEmpty());

            long killed = System.nanoTime();
            child.kill();
            Eventually.await(PROMPTLY, "an instance here was granted",
                    () -> here.stream().anyMatch(context -> !history(context).events().isEmpty()));
            ConfigurableApplicationContext leader = here.stream()
                    .filter(context -> !history(context).events().isEmpty()).findFirst().orElseThrow();
            LeaderApp.Event granted = history(leader).events().get(0);
            Eventually.await(PROMPTLY, "the new leader ran the job", () -> !history(leader).runs().isEmpty());
            long grantedMillis = TimeUnit.NANOSECONDS.toMillis(granted.nanos() - killed);
            long ranMillis = TimeUnit.NANOSECONDS.toMillis(history(leader).runs().get(0).startNanos() - killed);
            System.out.println("LeaderOnlyTest: SIGKILLed leader JVM -> another instance granted after "
                    + grantedMillis + " ms, its first run after " + ranMillis + " ms (lease " + LEASE + " ms)");
            assertThat(grantedMillis).isLessThanOrEqualTo(LEASE + 500);
            assertThat(granted.kind()).isEqualTo("GRANTED");
            assertThat(granted.term()).isGreaterThan(childTerm);
            assertThat(history(leader).runs()).allSatisfy(run -> assertThat(run.term()).isEqualTo(granted.term()));
            ConfigurableApplicationContext other = here.get(0) == leader ? here.get(1) : here.get(0);
            assertThat(history(other).runs()).isEmpty();
            assertThat(history(other).events()).isEmpty();
            assertThat(child.output()).doesNotContain("REVOKED");
        }
    }
}
