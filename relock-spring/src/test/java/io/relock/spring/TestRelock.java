package io.relock.spring;

import java.time.Duration;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.format.datetime.standard.DurationFormatterUtils;

import io.relock.Relock;
import io.relock.RelockConfig;

/**
 * A plain Spring setup of the tests, no Boot auto-configuration: {@link EnableRelock} with a
 * client on {@code test.redis.uri}, and, from the environment, {@code relock.watchdog-timeout}
 * for the client and {@code relock.on-lock-lost} ({@code throw} or {@code log}) and
 * {@code relock.default-wait-time} for the {@link RelockConfigurer}.
 */
@Configuration(proxyBeanMethods = false)
@EnableRelock(proxyTargetClass = true)
class TestRelock {

    @Bean(destroyMethod = "close")
    Relock relock(Environment environment) {
        RelockConfig.Builder builder = RelockConfig.builder()
                .singleServer(environment.getRequiredProperty("test.redis.uri"));
        String watchdog = environment.getProperty("relock.watchdog-timeout");
        if (watchdog != null) {
            builder.watchdogTimeout(DurationFormatterUtils.detectAndParse(watchdog));
        }
        return Relock.create(builder.build());
    }

    @Bean
    RelockConfigurer relockConfigurer(Environment environment) {
        boolean throwOnLost = !"log".equalsIgnoreCase(environment.getProperty("relock.on-lock-lost", "throw"));
        String wait = environment.getProperty("relock.default-wait-time");
        Duration defaultWait = wait == null ? null : DurationFormatterUtils.detectAndParse(wait);
        return new RelockConfigurer() {
            @Override
            public boolean throwOnLockLost() {
                return throwOnLost;
            }

            @Override
            public Duration defaultWaitTime() {
                return defaultWait;
            }
        };
    }
}
