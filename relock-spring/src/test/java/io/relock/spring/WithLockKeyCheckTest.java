package io.relock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Method;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.AliasFor;

import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;

/**
 * A {@code #name} in a {@link WithLock} key that the call could never resolve fails the
 * application's start, not the first call: a name that is not a parameter, a position past the
 * last parameter, and any name at all in a class compiled without {@code -parameters}. The
 * context has a client (@EnableRelock needs one), but no call reaches Redis.
 */
class WithLockKeyCheckTest {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private ApplicationContextRunner runner;

    @BeforeEach
    void runner(RedisServer server) {
        runner = new ApplicationContextRunner().withUserConfiguration(TestRelock.class)
                .withPropertyValues("test.redis.uri=" + server.uri());
    }

    @Test
    void aKeyNamingAParameterTheMethodDoesNotHaveFailsTheStart() {
        runner.withUserConfiguration(MisnamedConfig.class).run(context -> assertThat(context).hasFailed()
                .getFailure().hasStackTraceContaining("Misnamed.charge(String, long)")
                .hasStackTraceContaining("key '#order' refers to #order, which is not a parameter of the method"
                        + " (its parameters: orderId, amount)"));
    }

    @Test
    void aKeyPositionPastTheLastParameterFailsTheStart() {
        runner.withUserConfiguration(PastTheEndConfig.class).run(context -> assertThat(context).hasFailed()
                .getFailure().hasStackTraceContaining("key '#p0 + #p2' refers to #p2, but the method has 2 parameters"));
    }

    @Test
    void parameterNamesPositionsRootAndThisInsideAKeyAreAccepted() {
        runner.withUserConfiguration(WellNamedConfig.class).run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void withoutParameterNamesInTheClassFileANamedKeyFailsTheStartAndAPositionalOneIsFine(@TempDir Path dir)
            throws Exception {
        Class<?> billing = compileWithoutParameterNames(dir, """
                package nonames;

                public class Billing {
                    @io.relock.spring.WithLock(name = "bill", key = "#orderId")
                    public void charge(String orderId) {}

                    @io.relock.spring.WithLock(name = "bill", key = "#p0")
                    public void refund(String orderId) {}
                }
                """);
        Method charge = billing.getMethod("charge", String.class);
        assertThat(charge.getParameters()[0].isNamePresent()).as("compiled without -parameters").isFalse();
        assertThatThrownBy(() -> LockPlan.of(charge, null)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("nonames.Billing.charge(String)")
                .hasMessageContaining("refers to #orderId, but this method's parameter names are not in its class file:"
                        + " compile with -parameters")
                .hasMessageContaining("#p0");
        assertThat(LockPlan.of(billing.getMethod("refund", String.class), null)).isNotNull();
    }

    /** Compiles {@code source} as a build without {@code -parameters} would, and loads the class. */
    private static Class<?> compileWithoutParameterNames(Path dir, String source) throws IOException,
            URISyntaxException, ClassNotFoundException {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertThat(javac).as("a JDK's compiler").isNotNull();
        Path file = dir.resolve("nonames/Billing.java");
        Files.createDirectories(file.getParent());
        Files.writeString(file, source);
        String classpath = String.join(File.pathSeparator, location(WithLock.class), location(AliasFor.class));
        int status = javac.run(null, null, null, "-proc:none", "-classpath", classpath, "-d", dir.toString(),
                file.toString());
        assertThat(status).as("javac's exit status").isZero();
        // Not closed: the class is used after this returns, and the loader goes with the test's JVM.
        URLClassLoader loader = new URLClassLoader(new URL[] {dir.toUri().toURL()}, WithLock.class.getClassLoader());
        return loader.loadClass("nonames.Billing");
    }

    private static String location(Class<?> type) throws URISyntaxException {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }

    @Configuration(proxyBeanMethods = false)
    static class MisnamedConfig {
        @Bean
        Misnamed misnamed() {
            return new Misnamed();
        }
    }

    static class Misnamed {
        @WithLock(name = "bill", key = "#order")
        public void charge(String orderId, long amount) {}
    }

    @Configuration(proxyBeanMethods = false)
    static class PastTheEndConfig {
        @Bean
        PastTheEnd pastTheEnd() {
            return new PastTheEnd();
        }
    }

    static class PastTheEnd {
        @WithLock(name = "bill", key = "#p0 + #p2")
        public void charge(String orderId, long amount) {}
    }

    @Configuration(proxyBeanMethods = false)
    static class WellNamedConfig {
        @Bean
        WellNamed wellNamed() {
            return new WellNamed();
        }
    }

    static class WellNamed {
        @WithLock(name = "bill", key = "#orderId + ':' + #a1 + ':' + #p1")
        public void charge(String orderId, long amount) {}

        @WithLock(name = "bill", key = "#orderIds.?[#this != null]")
        public void chargeAll(List<String> orderIds) {}

        @WithLock(name = "bill", key = "#root.args[0]")
        public void refund(String orderId) {}
    }
}
