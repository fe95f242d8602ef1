package io.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootVersion;

import io.lettuce.core.RedisClient;

/**
 * The Spring tests run on the Spring Boot and Lettuce versions the build says they do: one row of
 * the matrix per module (Boot 4.0 with Lettuce 6.8, Boot 4.1 with Lettuce 7.5).
 */
class VersionsTest {

    @Test
    void theClasspathHasTheSpringBootAndLettuceThisRowOfTheMatrixNames() {
        assertThat(SpringBootVersion.getVersion()).isEqualTo(System.getProperty("relock.expected.spring-boot"));
        // Lettuce writes "<version>/<commit>" into its manifest.
        assertThat(RedisClient.class.getPackage().getImplementationVersion())
                .startsWith(System.getProperty("relock.expected.lettuce") + "/");
    }
}
