package io.relock.internal;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The internal packages in their layers, as {@code io.relock.internal}'s package doc lists them:
 * a package uses the ones below it and never one above it, and no two packages use each other.
 * The API package {@code io.relock} is outside the rule: every layer may use its types, and its
 * {@code Relock} is the one class above all of them.
 */
class LayersTest {

    /** Top down; the packages of one entry are peers that do not use each other. */
    private static final List<List<String>> LAYERS = List.of(
            List.of("io.relock.internal.leader..", "io.relock.internal.multi.."),
            List.of("io.relock.internal"),
            List.of("io.relock.internal.types.."),
            List.of("io.relock.internal.engine..", "io.relock.internal.redis.."),
            List.of("io.relock.internal.lease.."),
            List.of("io.relock.internal.backend.."),
            List.of("io.relock.internal.support.."));

    private static JavaClasses classes;

    @BeforeAll
    static void importMainClasses() {
        classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.relock");
    }

    @Test
    void noPackageUsesOneAboveIt() {
        for (int layer = 1; layer < LAYERS.size(); layer++) {
            String[] above = LAYERS.subList(0, layer).stream().flatMap(List::stream).toArray(String[]::new);
            for (String lower : LAYERS.get(layer)) {
                noClasses().that().resideInAPackage(lower)
                        .should().dependOnClassesThat().resideInAnyPackage(above)
                        .because("a layer only uses the layers below it (io.relock.internal's package doc)")
                        .check(classes);
            }
        }
    }

    @Test
    void peersDoNotUseEachOther() {
        for (List<String> peers : LAYERS) {
            for (String one : peers) {
                for (String other : peers) {
                    if (!one.equals(other)) {
                        noClasses().that().resideInAPackage(one)
                                .should().dependOnClassesThat().resideInAPackage(other)
                                .check(classes);
                    }
                }
            }
        }
    }

    @Test
    void theEngineDoesNotUseLettuce() {
        noClasses().that().resideInAnyPackage("io.relock.internal.engine..", "io.relock.internal.lease..",
                        "io.relock.internal.backend..")
                .should().dependOnClassesThat().resideInAPackage("io.lettuce..")
                .because("Redis's client is the redis layer's: scripts go through the drivers (types), the"
                        + " pub/sub connection through PubSubChannels")
                .check(classes);
    }

    @Test
    void internalPackagesFormNoCycle() {
        slices().matching("io.relock.internal.(**)").should().beFreeOfCycles().check(classes);
    }
}
