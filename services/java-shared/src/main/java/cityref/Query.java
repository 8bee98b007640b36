package cityref;

import cityref.generated.model.Language;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * A valid {@code /city/v1/get} query, parsed from the raw query string: strict
 * {@code application/x-www-form-urlencoded} decoding (Helidon's own query decoding and Spring's
 * {@code @RequestParam} are lenient),
 * every problem reported at once, {@code id} first, then {@code language}; per parameter the first
 * of missing, given more than once, invalid value.
 */
public record Query(long id, Language language) {
    private static final String ID_RULE = "an integer from 1 to 9223372036854775807";
    private static final String LANGUAGE_RULE = "one of: cs, de, en, pl, sk";

    /** Parses {@code rawQuery} (without the {@code ?}); throws a 400 {@link AppError} listing every problem. */
    public static Query parse(String rawQuery) {
        List<String> ids = new ArrayList<>(); // decoded values, null when undecodable
        List<String> languages = new ArrayList<>();
        for (String pair : rawQuery.split("&", -1)) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String name = eq < 0 ? pair : pair.substring(0, eq);
            String value = eq < 0 ? "" : pair.substring(eq + 1);
            // A name that does not decode matches no parameter, like any unknown name.
            String decoded = formDecode(name);
            if ("id".equals(decoded)) {
                ids.add(formDecode(value));
            } else if ("language".equals(decoded)) {
                languages.add(formDecode(value));
            }
        }
        List<String> problems = new ArrayList<>(2);
        Long id = single("id", ids, ID_RULE, Query::parseId, problems);
        Language language = single("language", languages, LANGUAGE_RULE, Query::parseLanguage, problems);
        if (!problems.isEmpty()) {
            throw AppError.badRequest(String.join("; ", problems));
        }
        return new Query(id, language);
    }

    private static <T> T single(
            String name, List<String> values, String rule, Function<String, T> parse, List<String> problems) {
        if (values.isEmpty()) {
            problems.add("parameter '" + name + "' is missing");
            return null;
        }
        if (values.size() > 1) {
            problems.add("parameter '" + name + "' is given more than once");
            return null;
        }
        T value = values.getFirst() == null ? null : parse.apply(values.getFirst());
        if (value == null) {
            problems.add("parameter '" + name + "' must be " + rule);
        }
        return value;
    }

    /** ASCII digits only (leading zeros allowed), 1 to Long.MAX_VALUE; null otherwise. */
    static Long parseId(String value) {
        if (!Config.digitsOnly(value)) {
            return null; // also rejects a sign, spaces and non-ASCII digits
        }
        try {
            long id = Long.parseLong(value); // leading zeros of any length, then the range
            return id >= 1 ? id : null;
        } catch (NumberFormatException e) {
            return null; // above Long.MAX_VALUE
        }
    }

    /** Exactly one of the generated {@link Language} enum's codes; null otherwise. */
    static Language parseLanguage(String value) {
        for (Language language : Language.values()) {
            if (language.getValue().equals(value)) {
                return language;
            }
        }
        return null;
    }

    /**
     * {@code +} to space, then percent-decoding; null for a malformed escape ({@code %zz}, a lone
     * {@code %}) or bytes that are not UTF-8 (overlong forms and surrogates included).
     */
    static String formDecode(String raw) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(raw.length());
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c == '+') {
                out.write(' ');
            } else if (c == '%') {
                int hi = i + 1 < raw.length() ? Character.digit(raw.charAt(i + 1), 16) : -1;
                int lo = i + 2 < raw.length() ? Character.digit(raw.charAt(i + 2), 16) : -1;
                if (hi < 0 || lo < 0 || raw.charAt(i + 1) > 0x7f || raw.charAt(i + 2) > 0x7f) {
                    return null;
                }
                out.write(hi * 16 + lo);
                i += 2;
            } else if (c < 0x80) {
                out.write(c);
            } else {
                // A raw non-ASCII character is not percent-encoding: the value is invalid. (Helidon
                // reads the request line as US-ASCII, so a raw byte >= 0x80 arrives as U+FFFD; Tomcat
                // may let one through as it is.)
                return null;
            }
        }
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(out.toByteArray()))
                    .toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }
}
