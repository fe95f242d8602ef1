package io.relock.spring;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
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
 * The advice behind {@link WithLock}: the pointcut reads (and checks) each annotated method's
 * plan once, when its bean is proxied, so that a wrong setting fails the start; the interceptor
 * runs the call through the template's {@link LockRunner}: blocking for a method that returns a
 * value, asynchronously for one that returns a {@code CompletionStage}, and through Relock's
 * Reactor face ({@link ReactiveWithLock}, loaded only then) for a {@code Mono}, a {@code Flux} or
 * a Kotlin {@code suspend} function.
 */
final class WithLockInterceptor extends StaticMethodMatcherPointcut implements MethodInterceptor {

    // Optional.empty() marks methods without @WithLock, so that they are not read again.
    private final Map<Method, Optional<LockPlan>> plans = new ConcurrentHashMap<>();
    private final Set<Class<?>> checkedClasses = ConcurrentHashMap.newKeySet();
    private final ObjectProvider<RelockTemplate> template;
    private final ConfigurableBeanFactory beanFactory;

    WithLockInterceptor(ObjectProvider<RelockTemplate> template, ConfigurableBeanFactory beanFactory) {
        this.template = template;
        this.beanFactory = beanFactory;
    }

    /**
     * Reads every {@link WithLock} method of a bean's class when the bean is created, so that each
     * wrong setting fails the start, not only those of the methods the proxy creator happens to
     * ask about before it found one that matches.
     */
    @Override
    public ClassFilter getClassFilter() {
        return targetClass -> {
            if (checkedClasses.add(targetClass)) {
                ReflectionUtils.doWithMethods(targetClass, method -> plan(method),
                        method -> method.isAnnotationPresent(WithLock.class)
                                || AnnotatedElementUtils.hasAnnotation(method, WithLock.class));
            }
            return true;
        };
    }

    @Override
    public boolean matches(Method method, Class<?> targetClass) {
        return plan(AopUtils.getMostSpecificMethod(method, targetClass)) != null;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Method method = target == null ? invocation.getMethod()
                : AopUtils.getMostSpecificMethod(invocation.getMethod(), AopUtils.getTargetClass(target));
        LockPlan plan = plan(method);
        if (plan == null) {
            return invocation.proceed();
        }
        Object[] args = invocation.getArguments();
        LockRunner runner = template.getObject().runner();
        switch (plan.returns()) {
            case VALUE:
                LockRunner.Request request = plan.request(target, args);
                return runner.run(request, invocation::proceed, notAcquired -> plan.notAcquired(notAcquired, target, args));
            case FUTURE:
                // A failure, a bad key's included, completes the future: the caller awaits it, not the call.
                LockRunner.Request asyncRequest;
                try {
                    asyncRequest = plan.request(target, args);
                } catch (RuntimeException e) {
                    return CompletableFuture.failedFuture(e);
                }
                return runner.runAsync(asyncRequest, () -> (CompletionStage<?>) invocation.proceed(),
                        notAcquired -> plan.notAcquired(notAcquired, target, args));
            default:
                return ReactiveWithLock.guard(plan, runner, invocation, target, args);
        }
    }

    private LockPlan plan(Method method) {
        return plans.computeIfAbsent(method, m -> Optional.ofNullable(LockPlan.of(m, beanFactory))).orElse(null);
    }
}
