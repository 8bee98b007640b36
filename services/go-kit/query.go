package main

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cityref/cityref/services/go-kit/generated/models"
)

const (
	idRule       = "an integer from 1 to 9223372036854775807"
	languageRule = "one of: cs, de, en, pl, sk"
)

// getCityRequest is the decoded query of GET /city/v1/get.
type getCityRequest struct {
	ID       int64
	Language models.Language
}

// parseCityQuery parses the raw query as the contract words it (WHATWG
// application/x-www-form-urlencoded, but strict about percent-encoding and UTF-8) and reports
// every problem at once: id first, then language; per parameter the first of missing, given
// more than once, invalid value. Go's url.ParseQuery is not used: it rejects the whole query
// on a ';' or a bad escape, where the contract makes only that parameter's value invalid.
func parseCityQuery(rawQuery string) (getCityRequest, error) {
	// Each occurrence's decoded value; ok is false when it does not decode.
	type value struct {
		text string
		ok   bool
	}
	var ids, languages []value
	for _, pair := range strings.Split(rawQuery, "&") {
		if pair == "" {
			continue
		}
		rawName, rawValue, _ := strings.Cut(pair, "=")
		name, ok := formDecode(rawName)
		if !ok {
			continue // a name that does not decode matches no parameter
		}
		switch name {
		case "id":
			text, ok := formDecode(rawValue)
			ids = append(ids, value{text, ok})
		case "language":
			text, ok := formDecode(rawValue)
			languages = append(languages, value{text, ok})
		}
	}

	var req getCityRequest
	var problems []string
	switch {
	case len(ids) == 0:
		problems = append(problems, "parameter 'id' is missing")
	case len(ids) > 1:
		problems = append(problems, "parameter 'id' is given more than once")
	default:
		id, ok := parseID(ids[0].text)
		if !ids[0].ok || !ok {
			problems = append(problems, "parameter 'id' must be "+idRule)
		}
		req.ID = id
	}
	switch {
	case len(languages) == 0:
		problems = append(problems, "parameter 'language' is missing")
	case len(languages) > 1:
		problems = append(problems, "parameter 'language' is given more than once")
	default:
		language, err := models.NewLanguageFromValue(languages[0].text)
		if !languages[0].ok || err != nil {
			problems = append(problems, "parameter 'language' must be "+languageRule)
		}
		req.Language = language
	}
	if len(problems) > 0 {
		return getCityRequest{}, errBadRequest(problems)
	}
	return req, nil
}

// parseID accepts ASCII digits only (leading zeros allowed), 1 to 9223372036854775807.
// The digit check also rejects what strconv.ParseInt would take: a leading '+' or '-'.
func parseID(v string) (int64, bool) {
	if !isDigits(v) {
		return 0, false
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id < 1 {
		return 0, false
	}
	return id, true
}

// formDecode: '+' → space, then percent-decoding. False for a malformed escape ("%zz", a lone
// '%', "%4") or a result that is not valid UTF-8 (which also rules out overlong encodings and
// surrogates).
func formDecode(s string) (string, bool) {
	if !strings.ContainsAny(s, "+%") {
		return s, utf8.ValidString(s)
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '+':
			b = append(b, ' ')
		case '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return "", false
			}
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			b = append(b, c)
		}
	}
	return string(b), utf8.Valid(b)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}
