package io.relock;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A process running for leadership: {@code <redis-uri> <election> <watchdog-ms>}. Prints
 * {@code ELECTED <term> <pid>} and {@code REVOKED <term> <nanoTime>} from its listener. A job
 * thread asks {@code isLeader()} every few milliseconds and prints {@code LEADER <answer>} when
 * the answer changes, {@code WOKE <gap-ms> <nanoTime>} when it ran again after a gap longer than
 * the lease (the process was paused), and {@code STALE} if {@code isLeader()} answered true right
 * after such a gap. Exits when stdin closes.
 */
public final class LeaderMain {

    private LeaderMain() {}

    public static void main(String[] args) throws Exception {
        long leaseMillis = Long.parseLong(args[2]);
        RelockConfig config = RelockConfig.builder()
                .singleServer(args[0])
                .watchdogTimeout(Duration.ofMillis(leaseMillis))
                .build();
        try (Relock relock = Relock.create(config)) {
            LeaderElection election = relock.getLeaderElection(args[1]);
            election.start(new LeadershipListener() {
                @Override
                public void onElected(Leadership leadership) {
                    print("ELECTED " + leadership.term() + " " + leadership.leader().pid());
                }

                @Override
                public void onRevoked(Leadership leadership) {
                    print("REVOKED " + leadership.term() + " " + System.nanoTime());
                }
            });
            Thread job = new Thread(() -> job(election, TimeUnit.MILLISECONDS.toNanos(leaseMillis)), "job");
            job.setDaemon(true);
            job.start();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            while (in.readLine() != null) {
                // runs until the parent closes stdin
            }
            election.close();
        }
    }

    private static void job(LeaderElection election, long leaseNanos) {
        long last = System.nanoTime();
        Boolean was = null;
        while (true) {
            long now = System.nanoTime();
            boolean woke = now - last > leaseNanos;
            boolean leader = election.isLeader();
            if (woke) {
                print("WOKE " + TimeUnit.NANOSECONDS.toMillis(now - last) + " " + now);
                if (leader) {
                    print("STALE");
                }
            }
            if (was == null || leader != was) {
                print("LEADER " + leader);
                was = leader;
            }
            last = now;
            try {
                Thread.sleep(2); // the job's cadence, not a synchronisation
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private static synchronized void print(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
