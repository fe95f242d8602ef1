package com.example.jobs;

import io.relock.spring.RelockLocks;
import io.relock.spring.WithLock;
import org.springframework.stereotype.Service;

/** A job that one instance of the fleet runs at a time. */
@Service
public class NightlyJob {

    /**
     * Runs the job for one tenant under the lock {@code nightly:<tenant>}.
     *
     * @param tenant the tenant
     * @return whether the lock was held while the job ran
     */
    @WithLock(name = "nightly", key = "#tenant", waitTime = "5s")
    public boolean run(String tenant) {
        return RelockLocks.current().isHeld();
    }
}
