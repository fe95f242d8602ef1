package com.example.billing;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/** The application around the README's reactive recharge. */
@SpringBootApplication
public class ReactiveBillingApplication {

    public static void main(String[] args) {
        SpringApplication.run(ReactiveBillingApplication.class, args);
    }
}
