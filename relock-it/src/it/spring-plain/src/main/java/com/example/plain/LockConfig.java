package com.example.plain;

// tag::spring-plain-config[]
import io.relock.Relock;
import io.relock.RelockConfig;
import io.relock.spring.EnableRelock;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

@Configuration
@EnableRelock
@ComponentScan
public class LockConfig {

    @Bean(destroyMethod = "close")
    Relock relock(Environment environment) {
        String uri = environment.getProperty("redis.uri", "redis://localhost:6379");
        return Relock.create(RelockConfig.builder().singleServer(uri).build());
    }
}
// end::spring-plain-config[]
