package com.example.quickstart;

// tag::testkit-imports[]
import io.relock.testkit.RedisExtension;
import io.relock.testkit.RedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
// end::testkit-imports[]

/**
 * The relock-testkit example of docs/testing.md, compiled from the same text. Its test method has
 * no body, so this class is not run (the name does not match Surefire's test classes);
 * QuickStartTest uses the same extension and parameter and asserts what they give.
 */
class ReadmeTestkitExample {

    // tag::testkit-example[]
    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    @Test
    void onlyOneWorkerRuns(RedisServer server) { /* server.uri(), server.kill(), server.restart() … */ }
    // end::testkit-example[]
}
