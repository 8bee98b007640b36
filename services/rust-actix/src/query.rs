//! Query parsing and validation, exactly as the contract words it (the decoder's work).

use serde::Deserialize;
use serde::de::IntoDeserializer;

use crate::errors::AppError;
use crate::models::Language;

const ID_RULE: &str = "an integer from 1 to 9223372036854775807";
const LANGUAGE_RULE: &str = "one of: cs, de, en, pl, sk";

#[derive(Debug, PartialEq)]
pub struct CityQuery {
    pub id: i64,
    pub language: Language,
}

/// Parses the raw query (`application/x-www-form-urlencoded`, strictly percent-decoded) and
/// reports every problem at once: `id` first, then `language`; per parameter the first of
/// missing, given more than once, invalid value.
pub fn parse_query(query: &str) -> Result<CityQuery, AppError> {
    // Each occurrence's value, `None` when it does not decode.
    let mut ids: Vec<Option<String>> = Vec::new();
    let mut languages: Vec<Option<String>> = Vec::new();
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        // A name that does not decode matches no parameter, like any unknown name.
        match decode(name).as_deref() {
            Some("id") => ids.push(decode(value)),
            Some("language") => languages.push(decode(value)),
            _ => {}
        }
    }
    let id = single("id", &ids, ID_RULE, parse_id);
    let language = single("language", &languages, LANGUAGE_RULE, parse_language);
    match (id, language) {
        (Ok(id), Ok(language)) => Ok(CityQuery { id, language }),
        (id, language) => {
            let problems: Vec<String> = [id.err(), language.err()].into_iter().flatten().collect();
            Err(AppError::BadRequest(problems.join("; ")))
        }
    }
}

/// The one value of a parameter, or its problem.
fn single<T>(name: &str, values: &[Option<String>], rule: &str, parse: fn(&str) -> Option<T>) -> Result<T, String> {
    match values {
        [] => Err(format!("parameter '{name}' is missing")),
        [value] => value
            .as_deref()
            .and_then(parse)
            .ok_or_else(|| format!("parameter '{name}' must be {rule}")),
        _ => Err(format!("parameter '{name}' is given more than once")),
    }
}

/// ASCII digits only (leading zeros allowed), 1 to i64::MAX.
fn parse_id(value: &str) -> Option<i64> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None; // also rejects what `i64::from_str` would take: a leading `+`
    }
    value.parse::<i64>().ok().filter(|&id| id >= 1)
}

/// Exactly one of the generated `Language` enum's codes.
fn parse_language(value: &str) -> Option<Language> {
    Language::deserialize(IntoDeserializer::<serde::de::value::Error>::into_deserializer(value)).ok()
}

/// `+` → space, then percent-decoding; `None` for a malformed escape (`%zz`, a lone `%`) or
/// bytes that are not UTF-8. Stricter than WHATWG (which keeps such input literally), as
/// the contract requires.
fn decode(raw: &str) -> Option<String> {
    let raw = raw.as_bytes();
    let mut bytes = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'+' => bytes.push(b' '),
            b'%' => {
                let hex = raw.get(i + 1..i + 3)?;
                let hex = std::str::from_utf8(hex).ok()?;
                if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return None;
                }
                bytes.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            byte => bytes.push(byte),
        }
        i += 1;
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MISSING_ID: &str = "parameter 'id' is missing";
    const REPEATED_ID: &str = "parameter 'id' is given more than once";
    const INVALID_ID: &str = "parameter 'id' must be an integer from 1 to 9223372036854775807";
    const MISSING_LANGUAGE: &str = "parameter 'language' is missing";
    const REPEATED_LANGUAGE: &str = "parameter 'language' is given more than once";
    const INVALID_LANGUAGE: &str = "parameter 'language' must be one of: cs, de, en, pl, sk";

    fn ok(query: &str) -> (i64, Language) {
        let CityQuery { id, language } = parse_query(query).unwrap_or_else(|e| panic!("{query}: {e}"));
        (id, language)
    }

    fn problems(query: &str) -> String {
        match parse_query(query) {
            Err(AppError::BadRequest(problems)) => problems,
            other => panic!("{query}: expected a 400, got {other:?}"),
        }
    }

    #[test]
    fn valid_queries() {
        assert_eq!(ok("id=1&language=en"), (1, Language::En));
        assert_eq!(ok("language=cs&id=2"), (2, Language::Cs));
        assert_eq!(ok("id=007&language=de"), (7, Language::De));
        assert_eq!(ok("id=0000000000000000000000000000001&language=pl"), (1, Language::Pl));
        assert_eq!(ok("id=9223372036854775807&language=sk"), (i64::MAX, Language::Sk));
        assert_eq!(ok("id=%31&l%61nguage=%65n"), (1, Language::En));
        assert_eq!(ok("&&id=1&&language=en&"), (1, Language::En));
        assert_eq!(ok("id=1&language=en&other=x&other=y&=z&x"), (1, Language::En));
        // A name that does not decode is ignored, even if it looks like a parameter.
        assert_eq!(ok("id=1&language=en&id%zz=2&language%FF=de"), (1, Language::En));
    }

    #[test]
    fn every_combination_of_problems() {
        let id_cases = [
            ("id=1", None),
            ("", Some(MISSING_ID)),
            ("id=1&id=1", Some(REPEATED_ID)),
            ("id=x", Some(INVALID_ID)),
        ];
        let language_cases = [
            ("language=en", None),
            ("", Some(MISSING_LANGUAGE)),
            ("language=en&language=de", Some(REPEATED_LANGUAGE)),
            ("language=EN", Some(INVALID_LANGUAGE)),
        ];
        for (id_query, id_problem) in id_cases {
            for (language_query, language_problem) in language_cases {
                // The order in the query must not matter.
                for query in [
                    format!("{id_query}&{language_query}"),
                    format!("{language_query}&{id_query}"),
                ] {
                    let expected: Vec<&str> = [id_problem, language_problem].into_iter().flatten().collect();
                    if expected.is_empty() {
                        ok(&query);
                    } else {
                        assert_eq!(problems(&query), expected.join("; "), "{query}");
                    }
                }
            }
        }
        assert_eq!(problems(""), format!("{MISSING_ID}; {MISSING_LANGUAGE}"));
    }

    #[test]
    fn repetition_is_counted_after_decoding_with_any_values() {
        assert_eq!(problems("id=1&i%64=2&language=en"), REPEATED_ID);
        assert_eq!(problems("id=x&id=%zz&language=en"), REPEATED_ID);
        assert_eq!(problems("id&id&language=en"), REPEATED_ID);
        assert_eq!(problems("id=1&language=en&language"), REPEATED_LANGUAGE);
    }

    #[test]
    fn invalid_ids() {
        for id in [
            "0",
            "000",
            "-1",
            "+1",
            "%2B1",
            " 1",
            "%201",
            "1 ",
            "1e3",
            "1.0",
            "0x10",
            "",
            "%zz",
            "%",
            "%4",
            "%FF",
            "١",
            "%D9%A1",
            "１",
            "9223372036854775808",
            "99999999999999999999999",
            "18446744073709551616",
        ] {
            assert_eq!(problems(&format!("id={id}&language=en")), INVALID_ID, "id={id}");
        }
        // A pair without `=` has an empty value.
        assert_eq!(problems("id&language=en"), INVALID_ID);
    }

    #[test]
    fn invalid_languages() {
        for language in [
            "", "EN", "En", "en ", "+en", "english", "fr", "%zz", "e%", "%C3%28", "%FF",
        ] {
            assert_eq!(
                problems(&format!("id=1&language={language}")),
                INVALID_LANGUAGE,
                "language={language}"
            );
        }
    }

    #[test]
    fn decoding() {
        assert_eq!(decode("a+b%20c").as_deref(), Some("a b c"));
        assert_eq!(decode("%2B").as_deref(), Some("+"));
        assert_eq!(decode("Plze%C5%88").as_deref(), Some("Plzeň"));
        assert_eq!(decode("%c5%88").as_deref(), Some("ň"));
        assert_eq!(decode("%"), None);
        assert_eq!(decode("%4"), None);
        assert_eq!(decode("%zz"), None);
        assert_eq!(decode("%+1"), None);
        assert_eq!(decode("%C5"), None); // truncated UTF-8
        assert_eq!(decode("%FF%FE"), None);
    }
}
