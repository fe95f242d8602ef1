package io.relock.spring;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.ClassFilter;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The advice behind {@link LeaderOnly}: the pointcut reads (and checks) each annotated method's
 * election name once, when its bean is proxied, so that a wrong setting fails the start and
 * {@link RelockLeadership} knows every name before it starts the elections; the interceptor
 * skips the call unless this instance leads.
 */
final class LeaderOnlyInterceptor extends StaticMethodMatcherPointcut implements MethodInterceptor {

    // Optional.empty() marks methods without @LeaderOnly, so that they are not read again.
    private final Map<Method, Optional<String>> names = new ConcurrentHashMap<>();
    private final Set<Class<?>> checkedClasses = ConcurrentHashMap.newKeySet();
    private final ObjectProvider<RelockLeadership> leadership;
    private final ConfigurableBeanFactory beanFactory;

    LeaderOnlyInterceptor(ObjectProvider<RelockLeadership> leadership, ConfigurableBeanFactory beanFactory) {
        this.leadership = leadership;
        this.beanFactory = beanFactory;
    }

    /** Every election name read so far, that is of every proxied bean's {@link LeaderOnly} methods. */
    SortedSet<String> electionNames() {
        SortedSet<String> found = new TreeSet<>();
        names.values().forEach(name -> name.ifPresent(found::add));
        return found;
    }

    @Override
    public ClassFilter getClassFilter() {
        return targetClass -> {
            if (checkedClasses.add(targetClass)) {
                ReflectionUtils.doWithMethods(targetClass, this::name,
                        method -> method.isAnnotationPresent(LeaderOnly.class)
                                || AnnotatedElementUtils.hasAnnotation(method, LeaderOnly.class));
            }
            return true;
        };
    }

    @Override
    public boolean matches(Method method, Class<?> targetClass) {
        return name(AopUtils.getMostSpecificMethod(method, targetClass)) != null;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Method method = target == null ? invocation.getMethod()
                : AopUtils.getMostSpecificMethod(invocation.getMethod(), AopUtils.getTargetClass(target));
        String name = name(method);
        if (name == null) {
            return invocation.proceed();
        }
        RelockLeadership elections = leadership.getIfAvailable();
        if (elections == null) {
            throw new IllegalStateException("@LeaderOnly(\"" + name + "\") on " + describe(method)
                    + ": the context has no RelockLeadership, as it has no Relock client (no Redis connection details)");
        }
        RelockLeadership.Candidate leading = elections.enter(name);
        if (leading == null) {
            return method.getReturnType() == Optional.class ? Optional.empty() : null;
        }
        try {
            return invocation.proceed();
        } finally {
            leading.exit();
        }
    }

    private String name(Method method) {
        return names.computeIfAbsent(method, m -> Optional.ofNullable(read(m))).orElse(null);
    }

    /** The election name of {@code method}, or null if it has no {@link LeaderOnly}. */
    private String read(Method method) {
        LeaderOnly annotation = AnnotatedElementUtils.findMergedAnnotation(method, LeaderOnly.class);
        if (annotation == null) {
            return null;
        }
        int modifiers = method.getModifiers();
        if (Modifier.isPrivate(modifiers) || Modifier.isFinal(modifiers) || Modifier.isStatic(modifiers)) {
            throw invalid(method, "a " + (Modifier.isPrivate(modifiers) ? "private" : Modifier.isFinal(modifiers)
                    ? "final" : "static") + " method cannot be intercepted by a Spring proxy: it would run on every"
                    + " instance");
        }
        Class<?> returns = method.getReturnType();
        if (returns.isPrimitive() && returns != void.class) {
            throw invalid(method, "it returns " + returns.getName() + ": a call skipped on an instance that does"
                    + " not lead has no value to return; return void, an object (null when skipped) or Optional");
        }
        String raw = annotation.name();
        if (raw.isBlank()) {
            throw invalid(method, "the election needs a name: @LeaderOnly(\"billing\")");
        }
        String name;
        try {
            name = beanFactory == null ? raw : beanFactory.resolveEmbeddedValue(raw);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("@LeaderOnly on " + describe(method) + ": name '" + raw + "': "
                    + e.getMessage(), e);
        }
        if (name == null || name.isBlank()) {
            throw invalid(method, "name '" + raw + "' resolves to a blank name");
        }
        return name;
    }

    private static IllegalStateException invalid(Method method, String reason) {
        return new IllegalStateException("@LeaderOnly on " + describe(method) + ": " + reason);
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
