package com.example.orders;

// tag::spring-integration-imports[]
import io.relock.Relock;
import io.relock.integration.RelockLockRegistry;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
// end::spring-integration-imports[]

/** The migration guide's one-bean swap from RedisLockRegistry. */
@Configuration
public class LockConfig {

    // tag::spring-integration-bean[]
    @Bean
    RelockLockRegistry lockRegistry(Relock relock) {
        return new RelockLockRegistry(relock, "my-app"); // was: new RedisLockRegistry(connectionFactory, "my-app")
    }
    // end::spring-integration-bean[]
}
