package io.relock.internal.engine;

import io.relock.internal.model.MemoryStore;
import java.util.List;
import kotlin.Unit;
import kotlin.jvm.functions.Function1;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.lincheck.datastructures.DSLScenarioBuilder;
import org.jetbrains.lincheck.datastructures.DSLThreadScenario;
import org.jetbrains.lincheck.datastructures.ManagedStrategyGuarantee;
import org.jetbrains.lincheck.datastructures.ManagedStrategyGuaranteeKt;

/**
 * Lincheck scenarios written out by operation name, for the races that matter most: a random
 * scenario of a few operations picks a given one only now and then, a written one is explored in
 * every run. (Lincheck's scenario DSL is Kotlin's; this is its Java side.)
 */
public final class ModelScenarios {

    private ModelScenarios() {}

    /**
     * {@code initial} runs first, on one thread; then each of {@code threads} on a thread of its
     * own, in every interleaving the model checker tries.
     */
    public static Function1<DSLScenarioBuilder, Unit> scenario(Class<?> model, List<String> initial,
            List<List<String>> threads) {
        return builder -> {
            builder.initial(thread -> add(thread, model, initial));
            builder.parallel(parallel -> {
                for (List<String> operations : threads) {
                    parallel.thread(thread -> add(thread, model, operations));
                }
                return Unit.INSTANCE;
            });
            return Unit.INSTANCE;
        };
    }

    /**
     * Each of the {@link MemoryStore}'s own methods taken as one step: a script runs atomically on
     * Redis, and every use of the store's monitor is one of them, so no thread ever waits for it.
     * Switching threads inside a script would only repeat interleavings that differ in nothing.
     */
    public static ManagedStrategyGuarantee storeCallsAtomic() {
        return ManagedStrategyGuaranteeKt.forClasses(MemoryStore.class.getName()).allMethods().treatAsAtomic();
    }

    private static Unit add(DSLThreadScenario thread, Class<?> model, List<String> operations) {
        for (String operation : operations) {
            try {
                thread.add(new Actor(model.getMethod(operation), List.of()));
            } catch (NoSuchMethodException e) {
                throw new IllegalArgumentException("no operation " + operation + " in " + model.getSimpleName(), e);
            }
        }
        return Unit.INSTANCE;
    }
}
