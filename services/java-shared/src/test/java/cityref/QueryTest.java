package cityref;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import cityref.generated.model.Language;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class QueryTest {
    private static String problems(String rawQuery) {
        return assertThrows(AppError.class, () -> Query.parse(rawQuery)).getMessage();
    }

    @Test
    void valid() {
        assertEquals(new Query(1, Language.EN), Query.parse("id=1&language=en"));
        assertEquals(new Query(7, Language.SK), Query.parse("&&language=%73k&%69d=007&x=1&x"));
        assertEquals(new Query(Long.MAX_VALUE, Language.DE), Query.parse("id=0009223372036854775807&language=de"));
    }

    @Test
    void everyProblemIdFirst() {
        assertEquals("Bad Request: parameter 'id' is missing; parameter 'language' is missing", problems(""));
        assertEquals(
                "Bad Request: parameter 'id' must be an integer from 1 to 9223372036854775807; "
                        + "parameter 'language' must be one of: cs, de, en, pl, sk",
                problems("language=xx&id=abc"));
        assertEquals(
                "Bad Request: parameter 'id' is given more than once; parameter 'language' is missing",
                problems("id=abc&id=1"));
        assertEquals(
                "Bad Request: parameter 'language' is given more than once",
                problems("id=1&language=en&%6C%61nguage=de"));
    }

    @Test
    void undecodableNamesAreIgnored() {
        assertEquals(new Query(1, Language.EN), Query.parse("%zz=1&id=1&language=en&id%=2&id%FF=3"));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "0",
                "00",
                "-1",
                "+1",
                " 1",
                "1e3",
                "0x1",
                "9223372036854775808",
                "18446744073709551617",
                "\u0661",
                "\uff11"
            })
    void invalidIds(String value) {
        assertNull(Query.parseId(value));
    }

    @ParameterizedTest
    @CsvSource({"1,1", "007,7", "9223372036854775807,9223372036854775807", "000000000000000000000000042,42"})
    void validIds(String value, long expected) {
        assertEquals(expected, Query.parseId(value));
    }

    @ParameterizedTest
    @ValueSource(strings = {"%zz", "%", "1%", "1%3", "%FF", "%C1%A5", "%ED%A0%80", "\ufffd"})
    void undecodable(String raw) {
        assertNull(Query.formDecode(raw));
    }

    @Test
    void formDecoding() {
        assertEquals(" 1 ", Query.formDecode("+1+"));
        assertEquals("Plzeň", Query.formDecode("Plze%C5%88"));
        assertEquals("en", Query.formDecode("%65%6E"));
    }
}
