package io.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.context.PropertyPlaceholderAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;

import io.relock.Relock;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import io.relock.spring.LeaderOnly;
import io.relock.spring.LeadershipEvent;
import io.relock.spring.LeadershipGrantedEvent;
import io.relock.spring.RelockLeadership;

/** {@link LeaderOnly}'s checks at start-up, its properties, and one instance's calls and events. */
class LeaderOnlyStartupTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perTest();

    private static final java.time.Duration PROMPTLY = java.time.Duration.ofSeconds(30);

    private static ApplicationContextRunner runner(RedisServer server, Class<?> config) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(PropertyPlaceholderAutoConfiguration.class,
                        DataRedisAutoConfiguration.class,
                        RelockAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.url=" + server.uri())
                .withUserConfiguration(config);
    }

    @Test
    void aMethodThatCannotBeSkippedOrHasNoNameFailsTheStartNamingIt(RedisServer server) {
        runner(server, IntJobConfig.class).run(context -> assertThat(context).hasFailed().getFailure()
                .rootCause().hasMessageContaining("@LeaderOnly on " + IntJob.class.getName() + ".count()")
                .hasMessageContaining("returns int"));
        runner(server, NamelessJobConfig.class).run(context -> assertThat(context).hasFailed().getFailure()
                .rootCause().hasMessageContaining("@LeaderOnly on " + NamelessJob.class.getName() + ".run()")
                .hasMessageContaining("needs a name"));
        runner(server, PlaceholderJobConfig.class).withPropertyValues("test.election= ").run(context ->
                assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("@LeaderOnly on " + PlaceholderJob.class.getName() + ".run()")
                        .hasMessageContaining("resolves to a blank name"));
        runner(server, PlaceholderJobConfig.class).run(context -> assertThat(context).hasFailed().getFailure()
                .rootCause().hasMessageContaining("test.election"));
        runner(server, FinalJobConfig.class).run(context -> assertThat(context).hasFailed().getFailure()
                .rootCause().hasMessageContaining("@LeaderOnly on " + FinalJob.class.getName() + ".run()")
                .hasMessageContaining("final method"));
    }

    /**
     * History checked: the only instance is granted "billing" and the election named in the
     * properties ("audit"); its GRANTED event comes before the first call that runs; the methods
     * run and return their values. After the context closes: REVOKED for both, in order after
     * GRANTED, and the elections' locks are free on Redis.
     */
    @Test
    void theOnlyInstanceLeadsRunsTheMethodsAndHearsGrantedThenRevoked(RedisServer server) {
        List<String> events = new ArrayList<>();
        java.util.concurrent.atomic.AtomicLong billingTerm = new java.util.concurrent.atomic.AtomicLong();
        runner(server, JobConfig.class).withPropertyValues("relock.leader-election.names=audit", "test.election=billing")
                .withBean(EventLog.class, () -> new EventLog(events))
                .run(context -> {
                    RelockLeadership leadership = context.getBean(RelockLeadership.class);
                    assertThat(leadership.names()).containsExactly("audit", "billing");
                    Eventually.await(PROMPTLY, "leading both", () -> leadership.isLeader("billing")
                            && leadership.isLeader("audit"));
                    Job job = context.getBean(Job.class);
                    assertThat(job.report()).isEqualTo("report");
                    assertThat(job.optional()).contains("optional");
                    job.run();
                    assertThat(job.runs()).isEqualTo(3);
                    long term = leadership.leadership("billing").orElseThrow().term();
                    billingTerm.set(term);
                    assertThat(leadership.leader("billing")).hasValueSatisfying(info -> {
                        assertThat(info.term()).isEqualTo(term);
                        assertThat(info.clientId()).isEqualTo(context.getBean(Relock.class).clientId());
                    });
                    synchronized (events) {
                        assertThat(events).containsExactlyInAnyOrder("GRANTED audit", "GRANTED billing " + term);
                    }
                });
        assertThat(events).containsSubsequence("GRANTED audit", "REVOKED audit")
                .containsSubsequence("GRANTED billing " + billingTerm.get(), "REVOKED billing " + billingTerm.get())
                .hasSize(4);
        assertThat(redis.server().command("EXISTS", "billing")).isEqualTo(0L);
        assertThat(redis.server().command("EXISTS", "audit")).isEqualTo(0L);
    }

    /**
     * History checked: another client leads "billing"; the instance's calls are all skipped
     * (null, Optional.empty(), nothing) and it hears no event; with
     * relock.leader-election.enabled=false it runs for nothing even when nobody else leads.
     */
    @Test
    void anInstanceThatDoesNotLeadSkipsEveryCall(RedisServer server) {
        List<String> events = new ArrayList<>();
        try (Relock other = Relock.create(io.relock.RelockConfig.builder().singleServer(server.uri()).build());
                io.relock.LeaderElection election = other.getLeaderElection("billing")) {
            java.util.concurrent.CompletableFuture<Long> elected = new java.util.concurrent.CompletableFuture<>();
            election.start(new io.relock.LeadershipListener() {
                @Override
                public void onElected(io.relock.Leadership leadership) {
                    elected.complete(leadership.term());
                }

                @Override
                public void onRevoked(io.relock.Leadership leadership) {
                }
            });
            long term = elected.join();
            runner(server, JobConfig.class).withPropertyValues("test.election=billing")
                    .withBean(EventLog.class, () -> new EventLog(events))
                    .run(context -> {
                        Job job = context.getBean(Job.class);
                        RelockLeadership leadership = context.getBean(RelockLeadership.class);
                        assertThat(leadership.isRunning()).isTrue();
                        assertThat(job.report()).isNull();
                        assertThat(job.optional()).isEmpty();
                        job.run();
                        assertThat(job.runs()).isEqualTo(0);
                        assertThat(leadership.isLeader("billing")).isFalse();
                        assertThat(leadership.leader("billing").orElseThrow().clientId()).isEqualTo(other.clientId());
                        assertThat(leadership.leader("billing").orElseThrow().term()).isEqualTo(term);
                    });
        }
        runner(server, JobConfig.class).withPropertyValues("test.election=billing",
                "relock.leader-election.enabled=false").withBean(EventLog.class, () -> new EventLog(events))
                .run(context -> {
                    Job job = context.getBean(Job.class);
                    assertThat(context.getBean(RelockLeadership.class).names()).isEmpty();
                    assertThat(job.report()).isNull();
                    job.run();
                    assertThat(job.runs()).isEqualTo(0);
                    assertThat(redis.server().command("EXISTS", "billing")).isEqualTo(0L);
                });
        assertThat(events).isEmpty();
    }

    @Configuration(proxyBeanMethods = false)
    static class JobConfig {
        @Bean
        Job job() {
            return new Job();
        }
    }

    static class Job {
        private final AtomicInteger runs = new AtomicInteger();

        /** The runs, read through the proxy (a class proxy's own fields are not the bean's). */
        public int runs() {
            return runs.get();
        }

        @LeaderOnly("${test.election}")
        public String report() {
            runs.incrementAndGet();
            return "report";
        }

        @LeaderOnly(name = "billing")
        public Optional<String> optional() {
            runs.incrementAndGet();
            return Optional.of("optional");
        }

        @LeaderOnly("billing")
        public void run() {
            runs.incrementAndGet();
        }
    }

    static class EventLog {
        private final List<String> events;

        EventLog(List<String> events) {
            this.events = events;
        }

        @EventListener
        public void on(LeadershipEvent event) {
            String kind = event instanceof LeadershipGrantedEvent ? "GRANTED " : "REVOKED ";
            synchronized (events) {
                events.add(kind + event.getName() + (event.getName().equals("billing") ? " " + event.getTerm() : ""));
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class IntJobConfig {
        @Bean
        IntJob job() {
            return new IntJob();
        }
    }

    static class IntJob {
        @LeaderOnly("billing")
        public int count() {
            return 1;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class NamelessJobConfig {
        @Bean
        NamelessJob job() {
            return new NamelessJob();
        }
    }

    static class NamelessJob {
        @LeaderOnly
        public void run() {
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class PlaceholderJobConfig {
        @Bean
        PlaceholderJob job() {
            return new PlaceholderJob();
        }
    }

    static class PlaceholderJob {
        @LeaderOnly("${test.election}")
        public void run() {
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class FinalJobConfig {
        @Bean
        FinalJob job() {
            return new FinalJob();
        }
    }

    static class FinalJob {
        @LeaderOnly("billing")
        public final void run() {
        }
    }
}
