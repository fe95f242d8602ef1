package com.example.billing;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/** The application around the reactive recharge of docs/reactive-and-kotlin.md. */
@SpringBootApplication
public class ReactiveBillingApplication {

    public static void main(String[] args) {
        SpringApplication.run(ReactiveBillingApplication.class, args);
    }
}
