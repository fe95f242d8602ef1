package io.relock.bench;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Just enough JSON for the bench: workers print their results as one JSON line, the driver
 * reads them and writes {@code results.json}. Values are {@link Map} (insertion-ordered),
 * {@link List}, {@link String}, {@link Long}, {@link Double}, {@link Boolean} and {@code null}.
 * Non-finite doubles are written as {@code null}, as JSON has no NaN.
 */
final class Json {

    private static final MathContext SIGNIFICANT = new MathContext(6);

    private Json() {
    }

    /** Writes {@code value} on one line. */
    static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out, -1, 0);
        return out.toString();
    }

    /** Writes {@code value} indented by two spaces per level, for files people read. */
    static String pretty(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out, 2, 0);
        return out.append('\n').toString();
    }

    /**
     * Parses one JSON value.
     *
     * @throws IllegalArgumentException if {@code text} is not JSON, naming the offset
     */
    static Object parse(String text) {
        Parser parser = new Parser(text);
        Object value = parser.value();
        parser.skipSpace();
        if (parser.at < text.length()) {
            throw parser.error("trailing characters");
        }
        return value;
    }

    /** The JSON object {@code value} as a map; fails if it is something else. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> object(Object value) {
        if (!(value instanceof Map)) {
            throw new IllegalArgumentException("expected a JSON object: " + value);
        }
        return (Map<String, Object>) value;
    }

    /** The JSON array {@code value} as a list; fails if it is something else. */
    @SuppressWarnings("unchecked")
    static List<Object> array(Object value) {
        if (!(value instanceof List)) {
            throw new IllegalArgumentException("expected a JSON array: " + value);
        }
        return (List<Object>) value;
    }

    private static void write(Object value, StringBuilder out, int indent, int level) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String text) {
            quote(text, out);
        } else if (value instanceof Double || value instanceof Float) {
            double number = ((Number) value).doubleValue();
            if (!Double.isFinite(number)) {
                out.append("null");
            } else if (number == Math.rint(number) && Math.abs(number) < 1e15) {
                out.append((long) number);
            } else {
                // Six significant digits: more than any measurement here can claim.
                out.append(new BigDecimal(number).round(SIGNIFICANT).stripTrailingZeros().toPlainString());
            }
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else if (value instanceof Map<?, ?> map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                newline(out, indent, level + 1);
                quote(String.valueOf(entry.getKey()), out);
                out.append(indent >= 0 ? ": " : ":");
                write(entry.getValue(), out, indent, level + 1);
            }
            if (!map.isEmpty()) {
                newline(out, indent, level);
            }
            out.append('}');
        } else if (value instanceof List<?> list) {
            out.append('[');
            boolean scalars = list.stream().noneMatch(element -> element instanceof Map || element instanceof List);
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) {
                    out.append(scalars && indent >= 0 ? ", " : ",");
                }
                if (!scalars) {
                    newline(out, indent, level + 1);
                }
                write(list.get(i), out, indent, level + 1);
            }
            if (!scalars && !list.isEmpty()) {
                newline(out, indent, level);
            }
            out.append(']');
        } else {
            throw new IllegalArgumentException("cannot write " + value.getClass().getName() + " as JSON: " + value);
        }
    }

    private static void newline(StringBuilder out, int indent, int level) {
        if (indent >= 0) {
            out.append('\n').append(" ".repeat(indent * level));
        }
    }

    private static void quote(String text, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    /** A recursive-descent parser over one string. */
    private static final class Parser {

        private final String text;
        private int at;

        Parser(String text) {
            this.text = text;
        }

        Object value() {
            skipSpace();
            if (at >= text.length()) {
                throw error("unexpected end");
            }
            char c = text.charAt(at);
            switch (c) {
                case '{':
                    return object();
                case '[':
                    return array();
                case '"':
                    return string();
                case 't':
                    return literal("true", Boolean.TRUE);
                case 'f':
                    return literal("false", Boolean.FALSE);
                case 'n':
                    return literal("null", null);
                default:
                    if (c == '-' || (c >= '0' && c <= '9')) {
                        return number();
                    }
                    throw error("unexpected character '" + c + "'");
            }
        }

        private Map<String, Object> object() {
            Map<String, Object> map = new LinkedHashMap<>();
            at++;
            skipSpace();
            if (peek() == '}') {
                at++;
                return map;
            }
            while (true) {
                skipSpace();
                if (peek() != '"') {
                    throw error("expected a key");
                }
                String key = string();
                skipSpace();
                expect(':');
                map.put(key, value());
                skipSpace();
                char next = peek();
                at++;
                if (next == '}') {
                    return map;
                }
                if (next != ',') {
                    throw error("expected ',' or '}'");
                }
            }
        }

        private List<Object> array() {
            List<Object> list = new ArrayList<>();
            at++;
            skipSpace();
            if (peek() == ']') {
                at++;
                return list;
            }
            while (true) {
                list.add(value());
                skipSpace();
                char next = peek();
                at++;
                if (next == ']') {
                    return list;
                }
                if (next != ',') {
                    throw error("expected ',' or ']'");
                }
            }
        }

        private String string() {
            StringBuilder out = new StringBuilder();
            at++;
            while (true) {
                if (at >= text.length()) {
                    throw error("unterminated string");
                }
                char c = text.charAt(at++);
                if (c == '"') {
                    return out.toString();
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char escaped = peek();
                at++;
                switch (escaped) {
                    case 'n' -> out.append('\n');
                    case 'r' -> out.append('\r');
                    case 't' -> out.append('\t');
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'u' -> {
                        if (at + 4 > text.length()) {
                            throw error("short \\u escape");
                        }
                        out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                        at += 4;
                    }
                    default -> out.append(escaped);
                }
            }
        }

        private Object number() {
            int start = at;
            while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
                at++;
            }
            String token = text.substring(start, at);
            try {
                if (token.contains(".") || token.contains("e") || token.contains("E")) {
                    return Double.parseDouble(token);
                }
                return Long.parseLong(token);
            } catch (NumberFormatException e) {
                throw error("bad number '" + token + "'");
            }
        }

        private Object literal(String word, Object value) {
            if (!text.startsWith(word, at)) {
                throw error("expected " + word);
            }
            at += word.length();
            return value;
        }

        private void expect(char c) {
            if (peek() != c) {
                throw error("expected '" + c + "'");
            }
            at++;
        }

        private char peek() {
            if (at >= text.length()) {
                throw error("unexpected end");
            }
            return text.charAt(at);
        }

        void skipSpace() {
            while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
                at++;
            }
        }

        IllegalArgumentException error(String problem) {
            return new IllegalArgumentException("bad JSON at offset " + at + ": " + problem);
        }
    }
}
