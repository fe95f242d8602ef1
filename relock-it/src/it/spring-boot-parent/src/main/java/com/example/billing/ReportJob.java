package com.example.billing;

// tag::scheduled-job[]
import io.relock.spring.WithLock;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

@Component
@EnableScheduling
class ReportJob {

    @Scheduled(cron = "0 0 2 * * *")
    @WithLock(name = "nightly-report", waitTime = "0", onNotAcquired = WithLock.OnNotAcquired.SKIP,
            holdAtLeast = "50s", leaseTime = "10m")
    public void sendNightlyReport() {
        // build and send the report: once a night, on whichever node fired first
    }
}
// end::scheduled-job[]
