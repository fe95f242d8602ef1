package io.relock.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {

    @Test
    void whatIsWrittenParsesBackToTheSameValues() {
        Map<String, Object> value = new LinkedHashMap<>();
        value.put("text", "quote \" backslash \\ newline \n tab \t µs ×");
        value.put("long", 12_345L);
        value.put("double", 0.125);
        value.put("whole double", 3.0);
        value.put("flags", List.of(true, false));
        value.put("nothing", null);
        value.put("nested", Map.of("list", Arrays.asList(1L, null, "x")));

        assertThat(Json.parse(Json.write(value))).isEqualTo(normalised(value));
        assertThat(Json.parse(Json.pretty(value))).isEqualTo(normalised(value));
    }

    @Test
    void nonFiniteNumbersAreWrittenAsNull() {
        assertThat(Json.write(Arrays.asList(Double.NaN, Double.POSITIVE_INFINITY))).isEqualTo("[null,null]");
    }

    @Test
    void doublesKeepSixSignificantDigits() {
        assertThat(Json.write(12345.6789)).isEqualTo("12345.7");
        assertThat(Json.write(0.000123456789)).isEqualTo("0.000123457");
    }

    @Test
    void malformedTextIsRejectedWithItsOffset() {
        assertThatThrownBy(() -> Json.parse("{\"a\": 1,}")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("offset");
        assertThatThrownBy(() -> Json.parse("[1] 2")).hasMessageContaining("trailing");
    }

    /** Whole doubles are written without a fraction, so they come back as longs. */
    private static Map<String, Object> normalised(Map<String, Object> value) {
        Map<String, Object> copy = new LinkedHashMap<>(value);
        copy.put("whole double", 3L);
        return copy;
    }
}
