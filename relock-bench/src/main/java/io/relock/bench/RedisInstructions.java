package io.relock.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.locks.Lock;
import java.util.stream.Stream;

/**
 * Redis CPU per uncontended cycle counted in instructions rather than seconds, so that it does not
 * depend on what else the machine does: {@code relock-bench/redis-instructions.sh} starts a
 * redis-server under valgrind's callgrind and runs this against it. For each library, one thread
 * of one client locks and unlocks one name {@code cycles} times to warm up, callgrind's counters
 * are zeroed, the same again is counted, and the counters are dumped; the instructions of that
 * dump over the cycles is the library's figure. Timers of the server (its cron) run during the
 * count too, a few percent under valgrind, and alike for every library.
 *
 * <p>Arguments: the server's port, its process id, the directory callgrind writes its dumps to,
 * and the number of cycles.
 */
final class RedisInstructions {

    private RedisInstructions() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            throw new IllegalArgumentException("usage: RedisInstructions <port> <server pid> <dump directory> <cycles>");
        }
        String uri = "redis://127.0.0.1:" + Integer.parseInt(args[0]);
        String pid = args[1];
        Path dumps = Path.of(args[2]);
        int cycles = Integer.parseInt(args[3]);
        System.out.printf(Locale.ROOT, "%-18s %14s%n", "library", "instr./cycle");
        for (Library library : Library.values()) {
            try (LockLibrary client = library.connect(uri, Duration.ofSeconds(30))) {
                Lock lock = client.lock("bench:instructions:" + library.id());
                run(lock, cycles);
                callgrind("-z", pid);
                run(lock, cycles);
                callgrind("--dump=" + library.id(), pid);
            }
            System.out.printf(Locale.ROOT, "%-18s %,14d%n", library.displayName(), summary(latestDump(dumps)) / cycles);
        }
    }

    private static void run(Lock lock, int cycles) {
        for (int i = 0; i < cycles; i++) {
            lock.lock();
            lock.unlock();
        }
    }

    private static void callgrind(String what, String pid) throws IOException, InterruptedException {
        Process control = new ProcessBuilder("callgrind_control", what, pid).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (control.waitFor() != 0) {
            throw new IllegalStateException("callgrind_control " + what + " " + pid + " exited " + control.exitValue());
        }
    }

    private static Path latestDump(Path directory) throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            return files.filter(file -> file.getFileName().toString().matches("callgrind\\.out\\.\\d+\\.\\d+"))
                    .max(Comparator.comparingInt(file -> Integer.parseInt(
                            file.getFileName().toString().replaceAll(".*\\.", ""))))
                    .orElseThrow(() -> new IllegalStateException("no callgrind dump in " + directory));
        }
    }

    /** The {@code summary:} line of a dump: every instruction counted in it. */
    private static long summary(Path dump) throws IOException {
        List<String> lines = Files.readAllLines(dump);
        return lines.stream().filter(line -> line.startsWith("summary:"))
                .map(line -> Long.parseLong(line.substring("summary:".length()).trim()))
                .findFirst().orElseThrow(() -> new IllegalStateException("no summary line in " + dump));
    }
}
