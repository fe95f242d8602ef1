package io.relock;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Another process that takes turns on a lock: {@code <redis-uri> <lock-name> <rounds>}. Prints
 * {@code READY} once connected, waits for {@code go} on stdin, then locks and unlocks
 * {@code rounds} times and prints {@code DONE}; any exception is printed as {@code FAILED <it>}
 * and ends the process with exit code 1.
 */
public final class HandoffLoopMain {

    private HandoffLoopMain() {}

    public static void main(String[] args) throws Exception {
        RelockConfig config = RelockConfig.builder().singleServer(args[0]).watchdogTimeout(Duration.ofSeconds(30))
                .build();
        int rounds = Integer.parseInt(args[2]);
        try (Relock relock = Relock.create(config)) {
            DistributedLock lock = relock.getLock(args[1]);
            System.out.println("READY");
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            if (!"go".equals(in.readLine())) {
                return;
            }
            for (int i = 0; i < rounds; i++) {
                lock.lock();
                lock.unlock();
            }
            System.out.println("DONE");
            System.out.flush();
        } catch (Throwable t) {
            System.out.println("FAILED " + t);
            System.out.flush();
            System.exit(1);
        }
    }
}
