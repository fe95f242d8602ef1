package io.relock.testkit;

import java.lang.reflect.Constructor;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit 5 extension that gives tests a real {@link RedisServer}.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final RedisExtension redis = RedisExtension.perClass();
 *
 * @Test
 * void somethingAboutLocks(RedisServer server) { ... server.uri() ... server.kill() ... }
 * }</pre>
 *
 * <ul>
 *   <li>{@link #perClass()}: one server for the test class (register it on a {@code static}
 *       field). Before each test the server is brought back if a previous test killed or
 *       stopped it (a restart, on the same port), resumed if paused, and emptied with
 *       {@code FLUSHALL} — so tests may inject faults freely. Stopped after the last test,
 *       including those of {@code @Nested} classes.</li>
 *   <li>{@link #perTest()}: a fresh server for each test, stopped after it.</li>
 * </ul>
 *
 * <p>{@code RedisServer} parameters of test methods, constructors, {@code @BeforeEach} and
 * {@code @AfterEach} methods (and, with {@code perClass()}, {@code @BeforeAll} and
 * {@code @AfterAll} methods) are resolved to the current server; so is {@link #server()}.
 * Register at most one {@code RedisExtension} per class if you use parameters (with more,
 * JUnit cannot tell which to use; call {@link #server()} on each instead).
 *
 * <p>The extension holds one current server, so it does not support concurrent execution of
 * the tests that share an instance (parallel methods, or parallel classes inheriting one static
 * field). With {@link #perTest()} and {@code @TestInstance(Lifecycle.PER_CLASS)}, inject the
 * server into methods rather than the constructor, which then runs only once.
 */
public final class RedisExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback,
        ParameterResolver {

    private enum Scope { PER_CLASS, PER_TEST }

    private final Scope scope;
    private volatile RedisServer server; // written under this object's lock
    private String ownerId; // unique id of the class context that started the per-class server; guarded by this

    private RedisExtension(Scope scope) {
        this.scope = scope;
    }

    /**
     * Returns an extension with one server for the whole test class; register it on a static field.
     *
     * @return a new extension
     */
    public static RedisExtension perClass() {
        return new RedisExtension(Scope.PER_CLASS);
    }

    /**
     * Returns an extension with a fresh server for each test.
     *
     * @return a new extension
     */
    public static RedisExtension perTest() {
        return new RedisExtension(Scope.PER_TEST);
    }

    /**
     * Returns the current server.
     *
     * @return the server of the running test or test class
     * @throws IllegalStateException outside the tests and lifecycle methods the extension covers
     *     (for example in {@code @BeforeAll} with {@link #perTest()})
     */
    public RedisServer server() {
        RedisServer current = server;
        if (current == null) {
            throw new IllegalStateException("no Redis server at this point: a " + describe()
                    + " server exists only " + (scope == Scope.PER_CLASS ? "while the test class runs" : "during each test"));
        }
        return current;
    }

    /**
     * Starts the per-class server (only the outermost class starts it; {@code @Nested} classes
     * share it).
     *
     * @throws IllegalStateException if the server cannot be started
     */
    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        if (scope == Scope.PER_CLASS && server == null) {
            server = RedisServer.start();
            ownerId = context.getUniqueId();
        }
    }

    /** Stops the per-class server after the class that started it. */
    @Override
    public synchronized void afterAll(ExtensionContext context) {
        if (scope == Scope.PER_CLASS && context.getUniqueId().equals(ownerId)) {
            try {
                server.stop();
            } finally {
                server = null;
                ownerId = null;
            }
        }
    }

    /**
     * Per class: makes sure the server is running and not paused, and empties it. Per test:
     * starts the test's server (unless a constructor parameter already did).
     *
     * @throws ExtensionConfigurationException if {@link #perClass()} was registered so that
     *     JUnit never called {@link #beforeAll} (a non-static field with a per-method lifecycle)
     * @throws IllegalStateException if the server cannot be (re)started
     */
    @Override
    public synchronized void beforeEach(ExtensionContext context) {
        if (scope == Scope.PER_TEST) {
            if (server == null) {
                server = RedisServer.start();
            }
            return;
        }
        RedisServer current = server;
        if (current == null) {
            throw new ExtensionConfigurationException("RedisExtension.perClass() must be registered on a static field "
                    + "(or the class must use @TestInstance(Lifecycle.PER_CLASS))");
        }
        if (!current.isRunning()) {
            current.restart();
        } else if (current.isPaused()) {
            current.resume();
        }
        current.flushAll();
    }

    /** Stops the test's server (per test only). */
    @Override
    public synchronized void afterEach(ExtensionContext context) {
        if (scope == Scope.PER_TEST && server != null) {
            try {
                server.stop();
            } finally {
                server = null;
            }
        }
    }

    /** Supports parameters of type {@link RedisServer}. */
    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == RedisServer.class;
    }

    /**
     * Returns the current server; for a constructor parameter with {@link #perTest()}, which
     * JUnit resolves before {@link #beforeEach}, it starts the test's server.
     *
     * @throws ParameterResolutionException where no server exists, e.g. in {@code @BeforeAll}
     *     with {@link #perTest()}
     */
    @Override
    public synchronized Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        if (server == null && scope == Scope.PER_TEST && parameterContext.getDeclaringExecutable() instanceof Constructor) {
            server = RedisServer.start();
        }
        if (server == null) {
            throw new ParameterResolutionException("no Redis server for " + parameterContext.getDeclaringExecutable()
                    + ": a " + describe() + " server exists only "
                    + (scope == Scope.PER_CLASS ? "while the test class runs" : "during each test (not in @BeforeAll/@AfterAll)"));
        }
        return server;
    }

    private String describe() {
        return scope == Scope.PER_CLASS ? "RedisExtension.perClass()" : "RedisExtension.perTest()";
    }
}
