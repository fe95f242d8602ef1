package com.example.plain;

import io.relock.spring.LeaderOnly;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.stereotype.Service;

@Service
public class ReportJob {

    private final AtomicInteger runs = new AtomicInteger();

    /** Runs on the leader of the "reports" election only; skipped (null) on the others. */
    @LeaderOnly("reports")
    public Integer sendReport() {
        return runs.incrementAndGet();
    }
}
