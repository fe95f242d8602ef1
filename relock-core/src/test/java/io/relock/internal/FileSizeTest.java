package io.relock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * No source file of core grows past {@value #MAX_CODE_LINES} lines of code (blank lines and
 * comments not counted): one that does holds more than one idea.
 */
class FileSizeTest {

    static final int MAX_CODE_LINES = 400;

    private static final Pattern BLOCK_COMMENT = Pattern.compile("/\\*.*?\\*/", Pattern.DOTALL);

    @Test
    void everyMainSourceFileHasAtMostTheLimit() throws IOException {
        Map<Path, Long> tooLong;
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            List<Path> sources = files.filter(file -> file.toString().endsWith(".java")).toList();
            assertThat(sources).as("core's sources, read from the module's directory").hasSizeGreaterThan(50);
            tooLong = sources.stream()
                    .collect(Collectors.toMap(file -> file, FileSizeTest::codeLines))
                    .entrySet().stream().filter(entry -> entry.getValue() > MAX_CODE_LINES)
                    .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
        }
        assertThat(tooLong).as("files over " + MAX_CODE_LINES + " lines of code").isEmpty();
    }

    /** Lines that are neither blank nor comment. */
    private static long codeLines(Path file) {
        try {
            String code = BLOCK_COMMENT.matcher(Files.readString(file)).replaceAll("");
            return code.lines().map(String::strip).filter(line -> !line.isEmpty() && !line.startsWith("//")).count();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
