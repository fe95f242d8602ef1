package io.relock.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Child JVM for the no-orphans tests: starts a {@link RedisServer}, prints
 * {@code REDIS_PID <pid>} and never stops it. Then, by argument: {@code exit} calls
 * {@code System.exit(0)}; {@code hold} waits until its stdin closes (or it is killed);
 * {@code park} ignores stdin and waits until it is killed (at most two minutes, so that a
 * failing test cannot leave it behind for long).
 */
public final class RedisHolderMain {

    private RedisHolderMain() {
    }

    public static void main(String[] args) throws IOException {
        RedisServer server = RedisServer.start();
        System.out.println("REDIS_PID " + server.pid());
        System.out.flush();
        String mode = args.length > 0 ? args[0] : "hold";
        if (mode.equals("exit")) {
            System.exit(0);
        }
        if (mode.equals("park")) {
            try {
                new CountDownLatch(1).await(2, TimeUnit.MINUTES);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        // Ends when the parent closes our stdin or dies, so this JVM cannot outlive it either.
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        while (in.readLine() != null) {
            System.out.println("STILL_HOLDING");
        }
    }
}
