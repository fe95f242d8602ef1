package io.relock.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/**
 * Child JVM for {@link ChildJvmTest}: prints its arguments and {@code READY} on stdout and a
 * line on stderr, then answers each stdin line {@code x} with {@code ECHO x}; the line
 * {@code exit N} makes it exit with code N. Its shutdown hook prints {@code HOOK ran}.
 */
public final class EchoMain {

    private EchoMain() {
    }

    public static void main(String[] args) throws IOException {
        System.err.println("echo starting");
        Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println("HOOK ran")));
        System.out.println("ARGS " + String.join(",", args));
        System.out.println("READY " + ProcessHandle.current().pid());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.startsWith("exit ")) {
                System.exit(Integer.parseInt(line.substring("exit ".length())));
            }
            System.out.println("ECHO " + line);
        }
    }
}
