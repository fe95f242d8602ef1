package io.relock.spring;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

import io.relock.DistributedLock;
import io.relock.Relock;
import io.relock.RelockConfig;

/**
 * Another process that holds a lock: {@code <redis-uri> <lock-name>}. Prints {@code LOCKED} once
 * it holds the lock and releases it when told {@code release} on stdin, then prints
 * {@code RELEASED} and exits.
 */
public final class HolderMain {

    private HolderMain() {}

    public static void main(String[] args) throws Exception {
        try (Relock relock = Relock.create(RelockConfig.builder().singleServer(args[0]).build())) {
            DistributedLock lock = relock.getLock(args[1]);
            lock.lock();
            System.out.println("LOCKED");
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
