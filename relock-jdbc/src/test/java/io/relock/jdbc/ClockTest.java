package io.relock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaCall;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.relock.DistributedLock;
import io.relock.FencedLock;
import io.relock.Relock;
import io.relock.RelockConfig;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Whose clock decides: the database's, never the client's. A client whose clock is off (ten
 * minutes, or a day) cannot move a lease, because the back end neither reads the client's wall
 * clock nor sends a time: the first test holds its code to that. The second runs two clients
 * whose sessions are 24 hours apart in time zone (the session zone is what turns a time into a
 * wall time on the database, and what broke other JDBC locks): each sees the other's lease as it is.
 */
class ClockTest {

    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    @Test
    void theBackEndReadsNoClientWallClockAndSendsNoTime() {
        JavaClasses classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.relock.jdbc");
        assertThat(classes).as("the back end's classes").isNotEmpty();
        List<JavaClass> checked = new ArrayList<>(classes);
        // What the back end's client shares with the other stores' clients, from core.
        checked.add(new ClassFileImporter().importClass(io.relock.internal.StoreClient.class));
        List<String> clockReads = new ArrayList<>();
        for (JavaClass type : checked) {
            for (JavaCall<?> call : type.getCodeUnitCallsFromSelf()) {
                if (readsOrSendsATime(call)) {
                    clockReads.add(call.getOrigin().getFullName() + " -> " + call.getTarget().getFullName());
                }
            }
        }
        // The one read: the start time ClientInfo shows to people. No lease ever sees it.
        assertThat(clockReads).as("reads of the client's wall clock, and times bound to statements")
                .containsExactly("io.relock.internal.StoreClient.<init>(io.relock.RelockConfig, java.lang.String,"
                        + " java.lang.String, int) -> java.time.Instant.now()");
    }

    private static boolean readsOrSendsATime(JavaCall<?> call) {
        String owner = call.getTargetOwner().getName();
        String name = call.getName();
        return owner.equals(System.class.getName()) && name.equals("currentTimeMillis")
                || owner.startsWith("java.time.") && (name.equals("now") || owner.equals(Clock.class.getName()))
                || owner.equals(java.util.Date.class.getName()) && name.equals("<init>")
                || name.equals("setTimestamp") || name.equals("setDate") || name.equals("setTime");
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void clientsWhoseSessionsAreADayApartInTimeZoneSeeEachOthersLeases(Database database) throws Exception {
        String url = database.newDatabaseUrl();
        Relock east = client(database, url, "+13:00");
        Relock west = client(database, url, "-11:00");
        FencedLock eastLock = east.getFencedLock("zoned");
        FencedLock westLock = west.getFencedLock("zoned");

        Long first = eastLock.tryLockAndGetToken(0, 2, TimeUnit.SECONDS);
        assertThat(first).isNotNull();
        assertThat(westLock.tryLock()).as("a lease of 2 s, not one a day long or a day gone").isFalse();
        assertThat(westLock.remainTimeToLive()).isBetween(1L, 2_000L);
        Long second = westLock.tryLockAndGetToken(10, 30, TimeUnit.SECONDS);
        assertThat(second).as("taken when the 2 s ran out").isNotNull().isGreaterThan(first);
        assertThat(eastLock.remainTimeToLive()).isBetween(28_000L, 30_000L);
        westLock.unlock();

        DistributedLock eastPlain = east.getLock("zoned-plain");
        assertThat(eastPlain.tryLock(0, 2, TimeUnit.SECONDS)).isTrue();
        assertThat(west.getLock("zoned-plain").remainTimeToLive()).isBetween(1L, 2_000L);
        eastPlain.unlock();
        assertThat(west.getLock("zoned-plain").isLocked()).isFalse();
    }

    /** A client whose connections all run in the session time zone {@code offset}. */
    private Relock client(Database database, String url, String offset) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(4);
        config.setMinimumIdle(0);
        config.setConnectionInitSql(database == Database.POSTGRESQL
                ? "SET TIME ZONE INTERVAL '" + offset + "' HOUR TO MINUTE"
                : "SET time_zone = '" + offset + "'");
        HikariDataSource dataSource = new HikariDataSource(config);
        closing.add(dataSource);
        Relock relock = RelockJdbc.builder(dataSource).createTable(true)
                .config(RelockConfig.builder().singleServer(RelockJdbc.PLACEHOLDER_SERVER).build()).build();
        closing.add(relock);
        return relock;
    }
}
