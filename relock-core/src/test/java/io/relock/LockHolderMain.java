package io.relock;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Another process that holds a lock: {@code <redis-uri> <lock-name> <watchdog-ms> [read]}
 * (with {@code read}, the read lock of a read-write lock). Prints
 * {@code LOCKED <clientId>} once it holds the lock, releases it when told {@code release} on
 * stdin, then prints {@code RELEASED} and exits.
 */
public final class LockHolderMain {

    private LockHolderMain() {}

    public static void main(String[] args) throws Exception {
        RelockConfig config = RelockConfig.builder()
                .singleServer(args[0])
                .watchdogTimeout(Duration.ofMillis(Long.parseLong(args[2])))
                .build();
        try (Relock relock = Relock.create(config)) {
            boolean read = args.length > 3 && args[3].equals("read");
            DistributedLock lock = read ? relock.getReadWriteLock(args[1]).readLock() : relock.getLock(args[1]);
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
