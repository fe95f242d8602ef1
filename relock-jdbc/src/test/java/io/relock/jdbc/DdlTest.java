package io.relock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.relock.Relock;
import io.relock.RelockConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The DDL the guide shows is the one the jar ships, and a table made from it by hand (as a
 * migration would) is one the client starts on and locks with.
 */
class DdlTest {

    private static final Path GUIDE = Path.of("..", "docs", "databases.md");

    @ParameterizedTest
    @EnumSource(Database.class)
    void theGuidesDdlIsTheJarsAndAClientRunsOnATableMadeFromIt(Database database) throws Exception {
        String shown = guideDdl(database == Database.POSTGRESQL ? "PostgreSQL" : "MySQL, MariaDB");
        String shipped = RelockJdbc.ddl(database == Database.POSTGRESQL ? "PostgreSQL" : "MariaDB", "relock_lock");
        assertThat(normalized(shown)).as("the guide's DDL for %s", database).isEqualTo(normalized(shipped));

        try (HikariDataSource dataSource = database.freshDataSource()) {
            try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                s.execute(shown);
            }
            try (Relock relock = RelockJdbc.builder(dataSource).config(RelockConfig.builder()
                    .singleServer(RelockJdbc.PLACEHOLDER_SERVER).build()).build()) {
                var lock = relock.getFencedLock("migrated");
                assertThat(lock.lockAndGetToken()).isPositive();
                lock.unlock();
            }
        }
    }

    /** The statement after the {@code -- <heading>} line of the guide's SQL block. */
    private static String guideDdl(String heading) throws Exception {
        String guide = Files.readString(GUIDE);
        Matcher block = Pattern.compile("```sql\n(.*?)```", Pattern.DOTALL).matcher(guide);
        assertThat(block.find()).as("an SQL block in %s", GUIDE).isTrue();
        List<String> statements = new ArrayList<>();
        for (String part : block.group(1).split("(?m)^-- ")) {
            if (part.startsWith(heading + "\n")) {
                statements.add(part.substring(heading.length() + 1).trim());
            }
        }
        assertThat(statements).as("the guide's DDL under '-- %s'", heading).hasSize(1);
        return statements.get(0);
    }

    /** Without comments, and with all white space one space. */
    private static String normalized(String ddl) {
        return ddl.replaceAll("--[^\n]*", " ").replaceAll("\\s+", " ").replaceAll("\\s*([(),;])\\s*", "$1").trim();
    }
}
