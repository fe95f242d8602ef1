package io.relock.internal.leader;

import io.relock.internal.ClientRuntime;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The client's worker threads (Lettuce's event executors, which also schedule), the ones lock
 * listeners run on. {@link ClientRuntime} keeps its executor package-private; until it offers a
 * public accessor, it is read reflectively, from within the same module.
 */
final class ClientThreads {

    private ClientThreads() {}

    static ScheduledExecutorService workers(ClientRuntime runtime) {
        for (Class<?> type = runtime.getClass(); type != null; type = type.getSuperclass()) {
            try {
                Method executor = type.getDeclaredMethod("executor");
                executor.setAccessible(true);
                return (ScheduledExecutorService) executor.invoke(runtime);
            } catch (NoSuchMethodException e) {
                // declared further up
            } catch (IllegalAccessException | InvocationTargetException | ClassCastException e) {
                throw new IllegalStateException("cannot reach the client's worker threads", e);
            }
        }
        throw new IllegalStateException("the client has no worker executor");
    }
}
