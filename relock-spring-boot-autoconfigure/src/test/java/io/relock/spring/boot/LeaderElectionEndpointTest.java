package io.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import tools.jackson.databind.JsonNode;

import io.relock.LeaderElection;
import io.relock.Leadership;
import io.relock.LeadershipListener;
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.testkit.Eventually;
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import io.relock.spring.RelockLeadership;

/** The elections in {@code GET /actuator/locks}, over real HTTP against a real Redis. */
class LeaderElectionEndpointTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perTest();

    private static final Duration PROMPTLY = Duration.ofSeconds(30);

    /**
     * History checked: another client is elected leader of "reports" first; the application then
     * runs for "billing" and "reports" and leads "billing" alone. The endpoint lists both, in name
     * order: "billing" led by this client (its term, id, pid), "reports" led by the other client
     * (its term and id, not this client); the fields it had before are all still there.
     */
    @Test
    void theListShowsTheElectionsThisClientRunsForAndWhoLeadsEach(RedisServer server) {
        try (Relock other = Relock.create(RelockConfig.builder().singleServer(server.uri()).build());
                LeaderElection reports = other.getLeaderElection("reports")) {
            CompletableFuture<Long> elected = new CompletableFuture<>();
            reports.start(new LeadershipListener() {
                @Override
                public void onElected(Leadership leadership) {
                    elected.complete(leadership.term());
                }

                @Override
                public void onRevoked(Leadership leadership) {
                }
            });
            long reportsTerm = elected.join();
            try (ActuatorApp app = ActuatorApp.start(server, "relock.leader-election.names=reports,billing")) {
                RelockLeadership leadership = app.bean(RelockLeadership.class);
                Relock relock = app.bean(Relock.class);
                Eventually.await(PROMPTLY, "the application leads billing", () -> leadership.isLeader("billing"));
                long billingTerm = leadership.leadership("billing").orElseThrow().term();

                ActuatorApp.Response response = app.get("/actuator/locks");
                assertThat(response.status()).as(response.body()).isEqualTo(200);
                JsonNode json = response.json();
                assertThat(json.propertyNames()).contains("clientId", "topology", "keyPrefix", "watchdogTimeoutMillis",
                        "client", "heldLocks", "recentLosses", "leaderElections");
                JsonNode elections = json.get("leaderElections");
                assertThat(elections.size()).isEqualTo(2);

                JsonNode billing = elections.get(0);
                assertThat(billing.get("name").asString()).isEqualTo("billing");
                assertThat(billing.get("running").asBoolean()).isTrue();
                assertThat(billing.get("thisClientLeads").asBoolean()).isTrue();
                assertThat(billing.get("leader").get("term").asLong()).isEqualTo(billingTerm);
                assertThat(billing.get("leader").get("clientId").asString()).isEqualTo(relock.clientId());
                assertThat(billing.get("leader").get("thisClient").asBoolean()).isTrue();
                assertThat(billing.get("leader").get("pid").asLong()).isEqualTo(ProcessHandle.current().pid());

                JsonNode reportsView = elections.get(1);
                assertThat(reportsView.get("name").asString()).isEqualTo("reports");
                assertThat(reportsView.get("running").asBoolean()).isTrue();
                assertThat(reportsView.get("thisClientLeads").asBoolean()).isFalse();
                assertThat(reportsView.get("leader").get("term").asLong()).isEqualTo(reportsTerm);
                assertThat(reportsView.get("leader").get("clientId").asString()).isEqualTo(other.clientId());
                assertThat(reportsView.get("leader").get("thisClient").asBoolean()).isFalse();
                assertThat(reportsView.get("leader").get("host").asString()).isEqualTo(other.clientInfo().host());
                assertThat(reportsView.get("error").isNull()).isTrue();
            }
        }
    }
}
