package io.relock.testkit;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Child JVM for the no-orphans tests, standing in for a test JVM: starts a grandchild JVM
 * ({@link RedisHolderMain} {@code park}, which ignores its stdin), prints
 * {@code CHILD_PID <pid>} and {@code REDIS_PID <pid>}, and waits to be killed (at most two
 * minutes).
 */
public final class ChildHolderMain {

    private ChildHolderMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        ChildJvm grandchild = ChildJvm.start(RedisHolderMain.class, "park");
        String redisLine = grandchild.awaitLine("REDIS_PID ", Duration.ofSeconds(30));
        System.out.println("CHILD_PID " + grandchild.pid());
        System.out.println(redisLine);
        System.out.flush();
        new CountDownLatch(1).await(2, TimeUnit.MINUTES);
    }
}
