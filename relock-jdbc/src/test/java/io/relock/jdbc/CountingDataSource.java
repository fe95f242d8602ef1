package io.relock.jdbc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;

/**
 * A data source that notes every statement executed through it, at the JDBC API, in the order
 * they ran, with the values bound to it (an array's elements one by one): what a test counts to
 * pin how many round trips an operation costs.
 */
public final class CountingDataSource {

    private final DataSource target;
    private final List<Executed> executed = new CopyOnWriteArrayList<>();

    /**
     * One execution.
     *
     * @param sql the statement's text
     * @param values the values bound to it, in the order they were set
     */
    public record Executed(String sql, List<Object> values) {}

    /**
     * Counts what runs through {@code target}.
     *
     * @param target the data source the statements go to
     */
    public CountingDataSource(DataSource target) {
        this.target = target;
    }

    /**
     * The statements executed so far.
     *
     * @return them, oldest first
     */
    public List<Executed> executed() {
        return List.copyOf(executed);
    }

    /**
     * The data source to hand to the code under test.
     *
     * @return a data source that notes and passes on
     */
    public DataSource dataSource() {
        return (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    Object result = invoke(target, method, args);
                    return result instanceof Connection c ? connection(c) : result;
                });
    }

    private Connection connection(Connection connection) {
        InvocationHandler handler = (proxy, method, args) -> {
            Object result = invoke(connection, method, args);
            if (result instanceof PreparedStatement p && method.getName().equals("prepareStatement")) {
                return statement(p, (String) args[0]);
            }
            if (result instanceof Statement s && !(result instanceof PreparedStatement)) {
                return plainStatement(s);
            }
            return result;
        };
        return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                handler);
    }

    private PreparedStatement statement(PreparedStatement statement, String sql) {
        List<Object> values = new ArrayList<>();
        InvocationHandler handler = (proxy, method, args) -> {
            String name = method.getName();
            if (name.startsWith("execute")) {
                executed.add(new Executed(sql, List.copyOf(values)));
                values.clear();
            } else if (name.equals("setArray")) {
                values.addAll(Arrays.asList((Object[]) ((Array) args[1]).getArray()));
            } else if (name.startsWith("set") && args != null && args.length == 2 && args[0] instanceof Integer) {
                values.add(args[1]);
            }
            return invoke(statement, method, args);
        };
        return (PreparedStatement) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {PreparedStatement.class}, handler);
    }

    private Statement plainStatement(Statement statement) {
        InvocationHandler handler = (proxy, method, args) -> {
            if (method.getName().startsWith("execute")) {
                executed.add(new Executed(args != null && args.length > 0 ? String.valueOf(args[0]) : method.getName(),
                        List.of()));
            }
            return invoke(statement, method, args);
        };
        return (Statement) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Statement.class},
                handler);
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
