package io.relock.spring;

import io.relock.LockNotAcquiredException;
import java.lang.reflect.Array;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;

import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodParameter;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.ResolvableType;
import org.springframework.format.datetime.standard.DurationFormatterUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * One {@link WithLock} method, read and checked once when its bean is created: the resolved
 * name, the parsed key, the durations, and what to do when the lock is not acquired. A mistake
 * in any of them fails the application's start, naming the method.
 */
final class LockPlan {

    private static final SpelExpressionParser PARSER = new SpelExpressionParser();
    private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();

    private static final String PUBLISHER = "org.reactivestreams.Publisher";
    private static final String MONO = "reactor.core.publisher.Mono";
    private static final String FLUX = "reactor.core.publisher.Flux";
    private static final String FLOW = "kotlinx.coroutines.flow.Flow";
    private static final String COROUTINES_REACTOR = "kotlinx.coroutines.reactor.MonoKt";
    private static final String REACTIVE_LOCK = "io.relock.reactor.ReactiveLock";

    private final Method method;
    private final Returns returns;
    private final String name;
    private final Expression key;
    private final String keyText;
    private final WithLock.Type type;
    private final Duration waitTime;
    private final Duration leaseTime;
    private final Duration holdAtLeast;
    private final WithLock.OnNotAcquired onNotAcquired;
    private final Method fallback;
    private final boolean fallbackTakesException;
    private final ConfigurableBeanFactory beanFactory;

    private LockPlan(Method method, WithLock annotation, ConfigurableBeanFactory beanFactory) {
        this.method = method;
        this.beanFactory = beanFactory;
        int modifiers = method.getModifiers();
        if (Modifier.isPrivate(modifiers) || Modifier.isFinal(modifiers) || Modifier.isStatic(modifiers)) {
            throw invalid("a " + (Modifier.isPrivate(modifiers) ? "private" : Modifier.isFinal(modifiers) ? "final"
                    : "static") + " method cannot be intercepted by a Spring proxy: the lock would never be taken");
        }
        this.returns = returnsOf(method);
        String rawName = annotation.name().isEmpty()
                ? method.getDeclaringClass().getName() + "." + method.getName()
                : annotation.name();
        this.name = resolve(rawName, "name");
        if (name.isBlank()) {
            throw invalid("name '" + rawName + "' resolves to a blank name");
        }
        this.keyText = annotation.key();
        this.key = keyText.isBlank() ? null : parse(keyText);
        if (key instanceof SpelExpression spel) {
            checkVariables(spel.getAST());
        }
        this.type = annotation.type();
        this.waitTime = RelockTemplate.oneAttemptIfNegative(duration(annotation.waitTime(), "waitTime", true, true));
        this.leaseTime = duration(annotation.leaseTime(), "leaseTime", false, false);
        Duration minimum = duration(annotation.holdAtLeast(), "holdAtLeast", true, false);
        this.holdAtLeast = minimum == null || minimum.isZero() ? null : minimum;
        if (holdAtLeast != null && leaseTime != null && holdAtLeast.compareTo(leaseTime) > 0) {
            throw invalid("holdAtLeast '" + annotation.holdAtLeast() + "' is longer than leaseTime '"
                    + annotation.leaseTime() + "': the lease ends every hold, so the lock could not be kept that long");
        }
        if (holdAtLeast != null && type == WithLock.Type.READ) {
            throw invalid("holdAtLeast cannot keep a READ lock: a read hold shares its lease with other readers");
        }
        if (returns != Returns.VALUE && type == WithLock.Type.FENCED) {
            throw invalid("a FENCED lock's token is read with RelockLocks.current(), which is per thread and"
                    + " unknown to " + returns.what + "; take the FencedLock's token inside the asynchronous work"
                    + " instead");
        }
        if (returns.reactive() && holdAtLeast != null) {
            throw invalid("holdAtLeast is not supported on " + returns.what + ": its lock is released when the"
                    + " publisher terminates or is cancelled; keep the lock with a RelockTemplate call or a"
                    + " blocking method instead");
        }
        WithLock.OnNotAcquired mode = annotation.onNotAcquired();
        String fallbackName = annotation.fallback();
        if (!fallbackName.isEmpty() && mode == WithLock.OnNotAcquired.THROW) {
            mode = WithLock.OnNotAcquired.FALLBACK;
        }
        this.onNotAcquired = mode;
        if (mode == WithLock.OnNotAcquired.SKIP) {
            if (!fallbackName.isEmpty()) {
                throw invalid("onNotAcquired = SKIP and fallback = '" + fallbackName + "' contradict each other");
            }
            checkSkip();
        }
        if (mode == WithLock.OnNotAcquired.FALLBACK) {
            if (fallbackName.isEmpty()) {
                throw invalid("onNotAcquired = FALLBACK needs fallback = \"<method name>\"");
            }
            if (returns == Returns.SUSPEND) {
                throw invalid("a fallback is not supported on a suspend function; catch LockNotAcquiredException"
                        + " around the call instead");
            }
            Class<?>[] params = method.getParameterTypes();
            Class<?>[] withException = Arrays.copyOf(params, params.length + 1);
            withException[params.length] = LockNotAcquiredException.class;
            Method found = ReflectionUtils.findMethod(method.getDeclaringClass(), fallbackName, withException);
            this.fallbackTakesException = found != null;
            if (found == null) {
                found = ReflectionUtils.findMethod(method.getDeclaringClass(), fallbackName, params);
            }
            if (found == null) {
                throw invalid("fallback method " + fallbackName + " not found in "
                        + method.getDeclaringClass().getName() + ": it must take the same parameters "
                        + Arrays.toString(params) + ", optionally followed by a LockNotAcquiredException");
            }
            if (!ClassUtils.isAssignable(method.getReturnType(), found.getReturnType())) {
                throw invalid("fallback method " + fallbackName + " returns " + found.getReturnType().getName()
                        + ", which is not a " + method.getReturnType().getName());
            }
            ReflectionUtils.makeAccessible(found);
            this.fallback = found;
        } else {
            this.fallback = null;
            this.fallbackTakesException = false;
        }
    }

    /** What a {@link WithLock} method returns, which decides how long its lock is held. */
    enum Returns {
        /** A value (or nothing): held until the method returns. */
        VALUE("a value"),
        /** A {@code CompletableFuture} or {@code CompletionStage}: held until it completes. */
        FUTURE("a CompletionStage"),
        /** A {@code Mono}: held from subscription until it terminates or is cancelled. */
        MONO("a Mono"),
        /** A {@code Flux} or a {@code Publisher}: held from subscription until it terminates or is cancelled. */
        FLUX("a Flux"),
        /** A Kotlin {@code suspend} function, which Spring's AOP runs as a {@code Mono}. */
        SUSPEND("a suspend function");

        private final String what;

        Returns(String what) {
            this.what = what;
        }

        /** Whether the lock is held by a Reactor pipeline (Mono, Flux, suspend). */
        boolean reactive() {
            return this == MONO || this == FLUX || this == SUSPEND;
        }
    }

    private Returns returnsOf(Method method) {
        if (KotlinDetector.isSuspendingFunction(method)) {
            if (!present(REACTIVE_LOCK) || !present(COROUTINES_REACTOR)) {
                throw invalid("it is a suspend function, which Spring's AOP runs as a Mono: holding its lock needs"
                        + " io.relock:relock-reactor and org.jetbrains.kotlinx:kotlinx-coroutines-reactor on the"
                        + " class path");
            }
            if (MethodParameter.forExecutable(method, -1).getParameterType().getName().equals(FLOW)) {
                throw invalid("it is a suspend function that returns a Flow: the lock would be released before the"
                        + " flow is collected; return the values, or a Flux from a plain method");
            }
            return Returns.SUSPEND;
        }
        Class<?> returnType = method.getReturnType();
        if (returnType == CompletableFuture.class || returnType == CompletionStage.class) {
            return Returns.FUTURE;
        }
        String returned = "it returns " + returnType.getSimpleName();
        if (Future.class.isAssignableFrom(returnType) || CompletionStage.class.isAssignableFrom(returnType)) {
            throw invalid(returned + ": the lock can follow a CompletableFuture or a CompletionStage, which"
                    + " tell when they complete, and no other future; declare one of those");
        }
        if (isPublisher(returnType)) {
            Returns kind = switch (returnType.getName()) {
                case MONO -> Returns.MONO;
                case FLUX, PUBLISHER -> Returns.FLUX;
                default -> throw invalid(returned + ": the lock can follow a Mono, a Flux or a Publisher, and no"
                        + " other reactive type; declare one of those");
            };
            if (!present(MONO) || !present(REACTIVE_LOCK)) {
                throw invalid(returned + ": holding the lock for the publisher's lifetime needs io.relock:relock-reactor"
                        + " (and Project Reactor) on the class path");
            }
            return kind;
        }
        if (returnType.getName().equals(FLOW)) {
            throw invalid(returned + ": the lock would be released before the flow is collected; return a Flux,"
                    + " or make the method a suspend function");
        }
        return Returns.VALUE;
    }

    /**
     * Whether the application has {@code className}: Project Reactor and Relock's Reactor face hold
     * the locks of Mono, Flux and suspend methods, and are optional.
     */
    private boolean present(String className) {
        ClassLoader loader = beanFactory != null && beanFactory.getBeanClassLoader() != null
                ? beanFactory.getBeanClassLoader() : LockPlan.class.getClassLoader();
        return ClassUtils.isPresent(className, loader);
    }

    /** Whether {@code returnType} is a Reactive Streams publisher, without loading the interface where it is absent. */
    private static boolean isPublisher(Class<?> returnType) {
        ClassLoader loader = returnType.getClassLoader();
        if (loader == null || !ClassUtils.isPresent(PUBLISHER, loader)) {
            return false;
        }
        return ClassUtils.resolveClassName(PUBLISHER, loader).isAssignableFrom(returnType);
    }

    /** SKIP returns "nothing": an empty publisher, a future of null or of an empty Optional, null or empty. */
    private void checkSkip() {
        switch (returns) {
            case MONO, FLUX -> { }
            case FUTURE -> {
                Class<?> value = futureValue();
                if (value != Void.class && value != Optional.class) {
                    throw invalid("onNotAcquired = SKIP on a " + method.getReturnType().getSimpleName() + " needs a"
                            + " Void or Optional value, not " + (value == null ? "?" : value.getSimpleName())
                            + ": a skipped call has no value to complete it with");
                }
            }
            case SUSPEND -> {
                MethodParameter result = MethodParameter.forExecutable(method, -1);
                Class<?> value = result.getParameterType(); // the Kotlin return type; Unit is void
                if (value != void.class && value != Void.class && !value.getName().equals("kotlin.Unit")
                        && !result.isOptional()) {
                    throw invalid("onNotAcquired = SKIP needs a suspend function returning Unit or a nullable type,"
                            + " not " + result.getParameterType().getSimpleName()
                            + ": a skipped call has no value to return");
                }
            }
            default -> {
                Class<?> returnType = method.getReturnType();
                if (returnType != void.class && returnType != Void.class && returnType != Optional.class) {
                    throw invalid("onNotAcquired = SKIP needs a void or Optional return type, not "
                            + returnType.getSimpleName() + ": a skipped call has no value to return");
                }
            }
        }
    }

    private Class<?> futureValue() {
        return ResolvableType.forMethodReturnType(method).as(CompletionStage.class).getGeneric(0).resolve();
    }

    /** What a skipped call returns: null stands for an empty publisher on the reactive returns. */
    private Object skipped() {
        return switch (returns) {
            case VALUE -> method.getReturnType() == Optional.class ? Optional.empty() : null;
            case FUTURE -> CompletableFuture.completedFuture(futureValue() == Optional.class ? Optional.empty() : null);
            default -> null;
        };
    }

    /**
     * The plan of {@code method}, or null if it has no {@link WithLock}.
     *
     * @throws IllegalStateException if the annotation's settings are wrong
     */
    static LockPlan of(Method method, ConfigurableBeanFactory beanFactory) {
        if (method.isSynthetic() && !method.isBridge()) {
            // A compiler's copy, e.g. Kotlin's static foo$suspendImpl behind an open suspend fun foo,
            // which carries foo's annotations; the proxy intercepts foo.
            return null;
        }
        WithLock annotation = org.springframework.core.annotation.AnnotatedElementUtils
                .findMergedAnnotation(method, WithLock.class);
        return annotation == null ? null : new LockPlan(method, annotation, beanFactory);
    }

    /** What the method returns, which decides how long its lock is held. */
    Returns returns() {
        return returns;
    }

    LockRunner.Request request(Object target, Object[] args) {
        LockRunner.Request request = RelockTemplate.request(type, names(target, args), waitTime, leaseTime);
        if (holdAtLeast == null) {
            return request;
        }
        return new LockRunner.Request(request.type(), request.names(), waitTime, leaseTime, holdAtLeast);
    }

    Object notAcquired(LockNotAcquiredException notAcquired, Object target, Object[] args) throws Throwable {
        switch (onNotAcquired) {
            case SKIP:
                return skipped();
            case FALLBACK:
                Object[] fallbackArgs = args;
                if (fallbackTakesException) {
                    fallbackArgs = Arrays.copyOf(args, args.length + 1);
                    fallbackArgs[args.length] = notAcquired;
                }
                try {
                    return fallback.invoke(target, fallbackArgs);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
            default:
                throw notAcquired;
        }
    }

    private List<String> names(Object target, Object[] args) {
        if (key == null) {
            return List.of(name);
        }
        MethodBasedEvaluationContext context =
                new MethodBasedEvaluationContext(target, method, args, PARAMETER_NAMES);
        if (beanFactory != null) {
            context.setBeanResolver(new BeanFactoryResolver(beanFactory));
        }
        Object value = key.getValue(context);
        List<Object> parts = new ArrayList<>();
        if (value instanceof Collection<?> collection) {
            parts.addAll(collection);
        } else if (value != null && value.getClass().isArray()) {
            for (int i = 0; i < Array.getLength(value); i++) {
                parts.add(Array.get(value, i));
            }
        } else {
            parts.add(value);
        }
        if (parts.isEmpty()) {
            throw badKey("is an empty " + (value instanceof Collection ? "collection" : "array"));
        }
        List<String> names = new ArrayList<>(parts.size());
        for (Object part : parts) {
            if (part == null) {
                throw badKey(parts.size() == 1 ? "is null" : "has a null element");
            }
            String text = part.toString();
            if (text.isBlank()) {
                throw badKey("is blank");
            }
            names.add(name + ":" + text);
        }
        return names;
    }

    private IllegalArgumentException badKey(String what) {
        String hint = PARAMETER_NAMES.getParameterNames(method) == null
                ? " (this method's parameter names are not in its class file: compile with -parameters,"
                        + " or refer to parameters by position, #p0, #p1, ...)"
                : "";
        return new IllegalArgumentException("@WithLock key '" + keyText + "' of " + describe(method) + " " + what
                + ": no lock was taken and the method did not run" + hint);
    }

    private Expression parse(String text) {
        try {
            return PARSER.parseExpression(text);
        } catch (ParseException e) {
            throw new IllegalStateException("@WithLock on " + describe(method) + ": key '" + text
                    + "' is not a SpEL expression: " + e.getMessage(), e);
        }
    }

    /**
     * Every {@code #name} of the key must be one the evaluation will know: a parameter's name,
     * {@code #p0}/{@code #a0} by position, {@code #root} or {@code #this}. Otherwise it would be
     * null at every call, and the mistake would show only then.
     */
    private void checkVariables(SpelNode node) {
        if (node instanceof VariableReference) {
            checkVariable(node.toStringAST().substring(1));
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            checkVariables(node.getChild(i));
        }
    }

    private void checkVariable(String variable) {
        if (variable.equals("root") || variable.equals("this")) {
            return;
        }
        String[] names = PARAMETER_NAMES.getParameterNames(method);
        if (names != null && Arrays.asList(names).contains(variable)) {
            return;
        }
        int count = method.getParameterCount();
        if (variable.matches("[pa][0-9]{1,9}")) {
            if (Integer.parseInt(variable.substring(1)) < count) {
                return;
            }
            throw invalid("key '" + keyText + "' refers to #" + variable + ", but the method has " + count
                    + " parameter" + (count == 1 ? "" : "s"));
        }
        if (names == null) {
            throw invalid("key '" + keyText + "' refers to #" + variable + ", but this method's parameter names are"
                    + " not in its class file: compile with -parameters (as spring-boot-starter-parent and Boot's"
                    + " Gradle plugin do), or refer to parameters by position, #p0, #p1, ...");
        }
        throw invalid("key '" + keyText + "' refers to #" + variable + ", which is not a parameter of the method"
                + (count == 0 ? " (it has none)" : " (its parameters: " + String.join(", ", names) + ")"));
    }

    private String resolve(String text, String attribute) {
        if (beanFactory == null || !text.contains("${")) {
            return text;
        }
        try {
            return beanFactory.resolveEmbeddedValue(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("@WithLock on " + describe(method) + ": " + attribute + " '" + text
                    + "': " + e.getMessage(), e);
        }
    }

    /** {@code negativeAllowed}: a wait, where a negative value is one attempt as zero is. */
    private Duration duration(String text, String attribute, boolean zeroAllowed, boolean negativeAllowed) {
        if (text.isBlank()) {
            return null;
        }
        String resolved = resolve(text, attribute).trim();
        if (resolved.isEmpty()) {
            return null;
        }
        Duration duration;
        try {
            duration = DurationFormatterUtils.detectAndParse(resolved);
        } catch (IllegalArgumentException e) {
            throw invalid(attribute + " '" + text + "' is not a duration (\"200ms\", \"5s\", \"PT1M\")");
        }
        if ((duration.isNegative() && !negativeAllowed) || (!zeroAllowed && duration.toMillis() == 0)) {
            throw invalid(attribute + " '" + text + "' must be " + (zeroAllowed ? "zero or more" : "at least 1ms"));
        }
        return duration;
    }

    private IllegalStateException invalid(String reason) {
        return new IllegalStateException("@WithLock on " + describe(method) + ": " + reason);
    }

    private static String describe(Method method) {
        StringBuilder text = new StringBuilder(method.getDeclaringClass().getName()).append('.')
                .append(method.getName()).append('(');
        Class<?>[] params = method.getParameterTypes();
        for (int i = 0; i < params.length; i++) {
            text.append(i == 0 ? "" : ", ").append(params[i].getSimpleName());
        }
        return text.append(')').toString();
    }
}
