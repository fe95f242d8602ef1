package io.relock.demo;

import io.relock.DistributedLock;
import io.relock.LeaderElection;
import io.relock.Leadership;
import io.relock.LeadershipListener;
import io.relock.Relock;
import io.relock.RelockConfig;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One instance of scenario 4, run in a child JVM: a scheduled job that must run once per period.
 *
 * <p>Arguments: {@code <key-prefix> <mode> <offset-ms> <period-ms> <periods> <job-ms> <watchdog-ms>
 * <hold-ms>}, where mode is {@code plain} (a lock taken with {@code tryLock(0)}, released at once),
 * {@code hold} (the same, released with {@code unlock(holdAtLeast)}) or {@code leader} (only the
 * leader of an election runs the job, checking {@code currentLeadership()} before each run). The
 * Redis URI comes on the first line of stdin, then {@code start <epoch-ms>}: the first period's
 * start on the wall clock, shared by every instance on this machine.
 *
 * <p>Prints {@code READY <client-id>}, {@code ELECTED <term>} and {@code REVOKED <term>} (leader
 * mode), {@code RUN <period> <term>} for each run of the job (term 0 outside leader mode), and
 * {@code DONE} after the last period; then it waits for a line on stdin (or its end) and exits.
 */
public final class OneNodeJobMain {

    private OneNodeJobMain() {}

    /**
     * Runs the instance.
     *
     * @param args see the class documentation
     * @throws Exception on any failure; the parent sees it in the child's output
     */
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String redisUri = in.readLine();
        String keyPrefix = args[0];
        String mode = args[1];
        long offset = Long.parseLong(args[2]);
        long period = Long.parseLong(args[3]);
        int periods = Integer.parseInt(args[4]);
        long job = Long.parseLong(args[5]);
        Duration watchdog = Duration.ofMillis(Long.parseLong(args[6]));
        Duration holdAtLeast = Duration.ofMillis(Long.parseLong(args[7]));

        RelockConfig config = RelockConfig.builder()
                .singleServer(redisUri)
                .keyPrefix(keyPrefix)
                .watchdogTimeout(watchdog)
                .build();
        try (Relock relock = Relock.create(config);
                LeaderElection election = relock.getLeaderElection("one-node-job")) {
            DistributedLock lock = relock.getLock("one-node-job:" + mode);
            if (mode.equals("leader")) {
                election.start(new LeadershipListener() {
                    @Override
                    public void onElected(Leadership leadership) {
                        say("ELECTED " + leadership.term());
                    }

                    @Override
                    public void onRevoked(Leadership leadership) {
                        say("REVOKED " + leadership.term());
                    }
                });
            }
            say("READY " + relock.clientId());
            long start = Long.parseLong(in.readLine().substring("start ".length()));
            for (int p = 0; p < periods; p++) {
                // A fixed-rate trigger: after a pause, the missed triggers fire at once, as a scheduler's would.
                long wait = start + p * period + offset - System.currentTimeMillis();
                if (wait > 0) {
                    Thread.sleep(wait);
                }
                switch (mode) {
                    case "plain", "hold" -> {
                        if (lock.tryLock(0, TimeUnit.MILLISECONDS)) {
                            runJob(p, 0, job);
                            if (mode.equals("hold")) {
                                lock.unlock(holdAtLeast);
                            } else {
                                lock.unlock();
                            }
                        }
                    }
                    default -> {
                        Optional<Leadership> leadership = election.currentLeadership();
                        if (leadership.isPresent()) {
                            runJob(p, leadership.get().term(), job);
                        }
                    }
                }
            }
            say("DONE");
            // Stays in the election until every instance is done: a leader that leaves hands over at once.
            in.readLine();
        }
    }

    private static void runJob(int period, long term, long millis) throws InterruptedException {
        say("RUN " + period + " " + term);
        SimulatedWork.takes(Duration.ofMillis(millis));
    }

    private static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
