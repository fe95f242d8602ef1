package com.example.plain;

import io.relock.spring.RelockLocks;
import io.relock.spring.WithLock;
import java.util.List;
import org.springframework.stereotype.Service;

@Service
public class RechargeService {

    /** Recharges an account once at a time per order; returns the locks held while it ran. */
    @WithLock(name = "recharge", key = "#orderId", waitTime = "200ms")
    public List<String> recharge(String orderId, long amount) {
        return RelockLocks.current().lockNames();
    }
}
