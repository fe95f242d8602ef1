package io.relock.bench;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/** A data source that counts the statements executed and the commits, at the JDBC API. */
final class CountingDataSource {

    private final AtomicLong statements = new AtomicLong();
    private final DataSource target;

    CountingDataSource(DataSource target) {
        this.target = target;
    }

    /** The statements and commits so far. */
    long statements() {
        return statements.get();
    }

    /** The counting view of the target. */
    DataSource dataSource() {
        return (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    Object result = invoke(target, method, args);
                    return result instanceof Connection c ? wrap(c, Connection.class) : result;
                });
    }

    private <T> T wrap(T object, Class<T> type) {
        InvocationHandler handler = (proxy, method, args) -> {
            String name = method.getName();
            if (name.startsWith("execute") || name.equals("commit")) {
                statements.incrementAndGet();
            }
            Object result = invoke(object, method, args);
            if (result instanceof PreparedStatement p) {
                return wrap(p, PreparedStatement.class);
            }
            if (result instanceof Statement s) {
                return wrap(s, Statement.class);
            }
            return result;
        };
        return type.cast(Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {type}, handler));
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
