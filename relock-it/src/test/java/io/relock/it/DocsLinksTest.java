package io.relock.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every relative link in README.md and the guides under docs/ leads somewhere: to a file or folder
 * of the repository and, when it names an anchor in a Markdown file, to a heading of that file
 * (anchors as GitHub makes them from headings). Links in code are not links; web links are not
 * followed.
 */
class DocsLinksTest {

    private static final Path ROOT = Path.of(System.getProperty("basedir", "")).toAbsolutePath().getParent();

    private static final Pattern LINK = Pattern.compile("!?\\[[^\\]]*\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern INLINE_CODE = Pattern.compile("`+[^`]*`+");
    private static final Pattern HTML_COMMENT = Pattern.compile("<!--.*?-->", Pattern.DOTALL);

    @Test
    void everyRelativeLinkOfTheDocumentsLeadsToAFileAndAHeading() {
        List<String> broken = new ArrayList<>();
        for (Path document : ReadmeSnippetsTest.documents()) {
            broken.addAll(brokenLinks(document, ROOT));
        }

        assertThat(broken).as("broken links").isEmpty();
    }

    @Test
    void theDocumentsAreLinked() {
        String readme = read(ROOT.resolve("README.md"));
        for (Path guide : ReadmeSnippetsTest.documents()) {
            if (!guide.getFileName().toString().equals("README.md")) {
                assertThat(readme).as("README.md links to %s", guide.getFileName())
                        .contains("(docs/" + guide.getFileName() + ")");
            }
        }
    }

    @Test
    void anchorsAreMadeAsGitHubMakesThem() {
        assertThat(anchors(List.of(
                "# Relock",
                "### Reentrant lock — `getLock(name)`",
                "### WebFlux / reactive: `@WithLock` on `Mono`, `Flux`, `suspend` and `CompletableFuture`",
                "## Spring: `@LeaderOnly`",
                "## Metrics and tracing (relock-micrometer)",
                "```",
                "# not a heading, a comment in code",
                "```",
                "## Relock")))
                .containsExactly("relock", "reentrant-lock--getlockname",
                        "webflux--reactive-withlock-on-mono-flux-suspend-and-completablefuture",
                        "spring-leaderonly", "metrics-and-tracing-relock-micrometer", "relock-1");
    }

    @Test
    void aMissingFileOrHeadingIsReportedAndCodeIsNotALink(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("other.md"), "# Other\n\n## Some part\n");
        Path document = dir.resolve("doc.md");
        Files.writeString(document, String.join("\n",
                "# Doc",
                "[fine](other.md#some-part), [also fine](#doc), [web](https://example.com/x.md)",
                "[no file](missing.md), [no heading](other.md#no-part), ![no image](img/chart.png)",
                "`[in code](missing.md)`",
                "```",
                "[in a block](missing.md)",
                "```",
                "<!-- [in a comment](missing.md) -->"));

        assertThat(brokenLinks(document, dir)).containsExactly(
                "doc.md: missing.md (no such file)",
                "doc.md: other.md#no-part (no such heading)",
                "doc.md: img/chart.png (no such file)");
    }

    /** The links of {@code document} that lead nowhere, as "file: target (why)". */
    private static List<String> brokenLinks(Path document, Path root) {
        List<String> broken = new ArrayList<>();
        String name = root.relativize(document).toString();
        for (String target : links(read(document))) {
            if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
                continue; // https:, mailto: and the like
            }
            int hash = target.indexOf('#');
            String path = URLDecoder.decode(hash < 0 ? target : target.substring(0, hash), StandardCharsets.UTF_8);
            String anchor = hash < 0 ? null : target.substring(hash + 1);
            Path file = path.isEmpty() ? document : document.getParent().resolve(path).normalize();
            if (!file.startsWith(root) || !Files.exists(file)) {
                broken.add(name + ": " + target + " (no such file)");
            } else if (anchor != null && file.toString().endsWith(".md")
                    && !anchors(read(file).lines().toList()).contains(anchor)) {
                broken.add(name + ": " + target + " (no such heading)");
            }
        }
        return broken;
    }

    /** Link targets outside code blocks, inline code and HTML comments. */
    private static List<String> links(String markdown) {
        List<String> targets = new ArrayList<>();
        boolean inCode = false;
        for (String line : HTML_COMMENT.matcher(markdown).replaceAll("").lines().toList()) {
            if (line.stripLeading().startsWith("```")) {
                inCode = !inCode;
                continue;
            }
            if (!inCode) {
                Matcher link = LINK.matcher(INLINE_CODE.matcher(line).replaceAll(""));
                while (link.find()) {
                    targets.add(link.group(1));
                }
            }
        }
        return targets;
    }

    /** The anchors GitHub gives a Markdown file's headings, in order; a repeated one gets -1, -2, … */
    private static Set<String> anchors(List<String> lines) {
        Set<String> anchors = new LinkedHashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        boolean inCode = false;
        for (String line : lines) {
            if (line.stripLeading().startsWith("```")) {
                inCode = !inCode;
                continue;
            }
            Matcher heading = HEADING.matcher(line);
            if (!inCode && heading.matches()) {
                String slug = heading.group(1).replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1")
                        .toLowerCase(Locale.ROOT)
                        .replaceAll("[^\\p{L}\\p{N}\\p{M} _-]", "")
                        .replace(' ', '-');
                int count = seen.merge(slug, 1, Integer::sum);
                anchors.add(count == 1 ? slug : slug + "-" + (count - 1));
            }
        }
        return anchors;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
