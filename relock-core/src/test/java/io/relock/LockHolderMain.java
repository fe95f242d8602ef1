package io.relock;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Another process that holds a lock: {@code <redis-uri> <lock-name> <watchdog-ms> [read|fair
 * [thread-wait-ms]]} (with {@code read}, the read lock of a read-write lock; with {@code fair},
 * a fair lock whose waiters are taken for dead after {@code thread-wait-ms}). Prints
 * {@code LOCKED <clientId>} once it holds the lock, releases it when told {@code release} on
 * stdin, then prints {@code RELEASED} and exits.
 */
public final class LockHolderMain {

    private LockHolderMain() {}

    public static void main(String[] args) throws Exception {
        RelockConfig.Builder builder = RelockConfig.builder()
                .singleServer(args[0])
                .watchdogTimeout(Duration.ofMillis(Long.parseLong(args[2])));
        if (args.length > 4) {
            builder.threadWaitTime(Duration.ofMillis(Long.parseLong(args[4])));
        }
        RelockConfig config = builder.build();
        try (Relock relock = Relock.create(config)) {
            String kind = args.length > 3 ? args[3] : "plain";
            DistributedLock lock = switch (kind) {
                case "read" -> relock.getReadWriteLock(args[1]).readLock();
                case "fair" -> relock.getFairLock(args[1]);
                default -> relock.getLock(args[1]);
            };
            lock.lock();
            System.out.println("LOCKED " + relock.clientId());
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.equals("release")) {
                    lock.unlock();
                    System.out.println("RELEASED");
                    System.out.flush();
                    return;
                }
            }
        }
    }
}
