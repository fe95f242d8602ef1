package io.relock.internal.redis;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The scripts' texts as the client sends them: the constants they share with the client put in. */
class ScriptTest {

    @Test
    void theGrantLeaseIsTheClientsConstantInEveryScriptThatGrants() {
        for (Script script : Script.values()) {
            assertThat(script.source()).as(script.name()).doesNotContain("@GRANT_LEASE_MILLIS@");
        }
        assertThat(Script.LOCK_RELEASE.source())
                .contains("local RELOCK_GRANT_LEASE_MS = '" + Script.GRANT_LEASE_MILLIS + "'");
        assertThat(Script.LOCK_RELEASE.source(true)).contains("'" + Script.GRANT_LEASE_MILLIS + "'");
    }
}
