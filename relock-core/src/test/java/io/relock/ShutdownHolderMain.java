package io.relock;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A plain service that never calls {@code close()}: {@code <redis-uri> <lock-name> <election>
 * [keep]}. With the default configuration (only the server given; with {@code keep},
 * {@code releaseOnShutdown(false)}), it takes the lock twice (a re-entry), an async owner's hold on
 * {@code <lock-name>-async}, and wins the election, then prints {@code READY <clientId>} and
 * blocks reading stdin until the JVM is stopped.
 */
public final class ShutdownHolderMain {

    private ShutdownHolderMain() {}

    public static void main(String[] args) throws Exception {
        // Before the first logger: the hook's report is at INFO, the tests' default is WARN.
        System.setProperty("org.slf4j.simpleLogger.log.io.relock", "info");
        RelockConfig.Builder builder = RelockConfig.builder().singleServer(args[0]);
        if (args.length > 3 && args[3].equals("keep")) {
            builder.releaseOnShutdown(false);
        }
        Relock relock = Relock.create(builder.build());
        DistributedLock lock = relock.getLock(args[1]);
        lock.lock();
        lock.lock();
        relock.getLock(args[1] + "-async").lockAsync(Relock.newOwnerId()).toCompletableFuture()
                .get(30, TimeUnit.SECONDS);
        CountDownLatch elected = new CountDownLatch(1);
        relock.getLeaderElection(args[2]).start(new LeadershipListener() {
            @Override
            public void onElected(Leadership leadership) {
                elected.countDown();
            }

            @Override
            public void onRevoked(Leadership leadership) {
                System.out.println("REVOKED " + leadership.term());
                System.out.flush();
            }
        });
        if (!elected.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("not elected within 30 s");
        }
        System.out.println("READY " + relock.clientId());
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        while (in.readLine() != null) {
            // runs until stopped; never closes the client
        }
    }
}
