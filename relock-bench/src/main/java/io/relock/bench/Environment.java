package io.relock.bench;

import io.lettuce.core.RedisClient;
import io.relock.testkit.RedisBinary;
import io.relock.testkit.RedisServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.springframework.data.redis.core.RedisTemplate;
import org.springframework.integration.redis.util.RedisLockRegistry;
import reactor.core.publisher.Mono;

/**
 * Where and with what a run happened: date, machine, JDK, Redis and library versions, and the
 * command that started it, so that a table can be read (and reproduced) without its author.
 */
record Environment(ZonedDateTime start, String command, Map<String, Object> machine, Map<String, Object> versions) {

    static Environment describe(ZonedDateTime start, String command, RedisServer server) {
        Map<String, Object> machine = new LinkedHashMap<>();
        machine.put("cpus", Runtime.getRuntime().availableProcessors());
        machine.put("cpu_model", cpuModel());
        machine.put("memory_gib", memoryGib());
        machine.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch"));

        Map<String, Object> versions = new LinkedHashMap<>();
        versions.put("jdk", System.getProperty("java.runtime.version") + " (" + System.getProperty("java.vm.name") + ")");
        RedisBinary binary = RedisBinary.locate();
        versions.put("redis", server.version());
        versions.put("redis_binary", binary.source() + ": " + binary.path());
        versions.put("relock", Library.RELOCK.version());
        versions.put("relock_git", git());
        versions.put("redisson", Library.REDISSON.version());
        versions.put("spring_integration", implementationVersion(RedisLockRegistry.class));
        versions.put("spring_data_redis", implementationVersion(RedisTemplate.class));
        // What the classpath has (the jar's manifest), which every library here runs on.
        versions.put("lettuce", implementationVersion(RedisClient.class));
        // S7's pipelines, Relock's reactive face and Redisson's RLockReactive run on this one.
        versions.put("reactor", implementationVersion(Mono.class));
        return new Environment(start, command, machine, versions);
    }

    String dateText() {
        return start.format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm z", Locale.ROOT));
    }

    String machineText() {
        Object memory = machine.get("memory_gib");
        return machine.get("cpus") + " CPUs (" + machine.get("cpu_model") + "), "
                + (memory instanceof Double gib ? String.format(Locale.ROOT, "%.1f GiB RAM", gib) : "RAM unknown")
                + ", " + machine.get("os");
    }

    String versionsText() {
        return "JDK " + versions.get("jdk") + ", Redis " + versions.get("redis") + ", Relock " + versions.get("relock")
                + " (git " + versions.get("relock_git") + ", on Lettuce " + versions.get("lettuce") + "), Redisson "
                + versions.get("redisson") + ", RedisLockRegistry of Spring Integration " + versions.get("spring_integration")
                + " (PUB_SUB_LOCK, on Spring Data Redis " + versions.get("spring_data_redis")
                + " and the same Lettuce), Reactor " + versions.get("reactor");
    }

    /** The version in the manifest of the jar that {@code type} came from, without a build suffix. */
    private static String implementationVersion(Class<?> type) {
        String version = type.getPackage().getImplementationVersion();
        return version == null ? "unknown" : version.split("/")[0];
    }

    private static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"), StandardCharsets.UTF_8)) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or not readable
        }
        return System.getProperty("os.arch");
    }

    private static Object memoryGib() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"), StandardCharsets.UTF_8)) {
                if (line.startsWith("MemTotal:")) {
                    long kib = Long.parseLong(line.replaceAll("\\D+", ""));
                    return kib / 1024.0 / 1024.0;
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or not readable
        }
        return null;
    }

    /** The commit the bench was built from, marked when the working tree has changes. */
    private static String git() {
        String head = run(List.of("git", "rev-parse", "--short", "HEAD"));
        if (head == null) {
            return "unknown";
        }
        String status = run(List.of("git", "status", "--porcelain"));
        return status == null || status.isEmpty() ? head : head + " with uncommitted changes";
    }

    private static String run(List<String> command) {
        try {
            Path output = Files.createTempFile("relock-bench-git-", ".txt");
            try {
                Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile())
                        .start();
                process.getOutputStream().close();
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    return null;
                }
                return process.exitValue() == 0 ? Files.readString(output, StandardCharsets.UTF_8).trim() : null;
            } finally {
                Files.deleteIfExists(output);
            }
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
