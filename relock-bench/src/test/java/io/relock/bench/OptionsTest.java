package io.relock.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

class OptionsTest {

    @Test
    void defaultsAreTheFullRun() {
        Options options = Options.parse();
        assertThat(options.window()).isEqualTo(Duration.ofSeconds(5));
        assertThat(options.warmup()).isEqualTo(Duration.ofSeconds(2));
        assertThat(options.repeats()).isEqualTo(2);
        assertThat(options.scenarios()).containsExactly("S0", "S1", "S2", "S3", "S4", "S5", "S6", "S7");
        assertThat(options.runs("S2/t8x4")).isTrue();
    }

    @Test
    void flagsMayComeAsOneArgumentAsMavenPassesThem() {
        Options options = Options.parse(" --quick --window 1.5s  --scenarios s1,S3 ");
        assertThat(options.quick()).isTrue();
        assertThat(options.window()).isEqualTo(Duration.ofMillis(1500));
        assertThat(options.warmup()).isEqualTo(Duration.ofMillis(500));
        assertThat(options.scenarios()).isEqualTo(Set.of("S1", "S3"));
        assertThat(options.runs("S2/t8x4")).isFalse();
    }

    @Test
    void casesChooseTheirScenarios() {
        Options options = Options.parse("--cases", "S1/t64,S5/footprint");
        assertThat(options.scenarios()).containsExactly("S1", "S5");
        assertThat(options.runs("S1/t64")).isTrue();
        assertThat(options.runs("S1/t1")).isFalse();
    }

    @Test
    void badFlagsAreNamed() {
        assertThatThrownBy(() -> Options.parse("--window", "5")).hasMessageContaining("--window");
        assertThatThrownBy(() -> Options.parse("--repeats", "0")).hasMessageContaining("--repeats");
        assertThatThrownBy(() -> Options.parse("--scenarios", "S9")).hasMessageContaining("S9");
        assertThatThrownBy(() -> Options.parse("--window", "1s", "--window", "2s")).hasMessageContaining("twice");
        assertThatThrownBy(() -> Options.parse("--nope", "1")).hasMessageContaining("unknown flag --nope");
    }
}
