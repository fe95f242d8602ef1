package com.example.billing;

// tag::recharge-service[]
import io.relock.spring.WithLock;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
class RechargeService {

    @WithLock(name = "recharge", key = "#orderId", waitTime = "5s")
    @Transactional
    public void recharge(String orderId, long amount) {
        // read the order; if it is new, credit the account and mark the order paid
    }
}
// end::recharge-service[]
