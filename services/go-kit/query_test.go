package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/cityref/cityref/services/go-kit/generated/models"
)

const (
	missingID         = "parameter 'id' is missing"
	repeatedID        = "parameter 'id' is given more than once"
	invalidID         = "parameter 'id' must be an integer from 1 to 9223372036854775807"
	missingLanguage   = "parameter 'language' is missing"
	repeatedLanguage  = "parameter 'language' is given more than once"
	invalidLanguage   = "parameter 'language' must be one of: cs, de, en, pl, sk"
	badRequestMessage = "Bad Request: "
)

// problems is the 400 message of query, without its "Bad Request: " prefix ("" when valid).
func problems(t *testing.T, query string) string {
	t.Helper()
	_, err := parseCityQuery(query)
	if err == nil {
		return ""
	}
	var appErr *AppError
	if !errors.As(err, &appErr) || appErr.Status != 400 || !strings.HasPrefix(appErr.Message, badRequestMessage) {
		t.Fatalf("%q: want a 400 AppError, got %#v", query, err)
	}
	return strings.TrimPrefix(appErr.Message, badRequestMessage)
}

func TestValidQueries(t *testing.T) {
	tests := []struct {
		query    string
		id       int64
		language models.Language
	}{
		{"id=1&language=en", 1, models.EN},
		{"language=cs&id=2", 2, models.CS},
		{"id=007&language=de", 7, models.DE},
		{"id=0000000000000000000000000000001&language=pl", 1, models.PL},
		{"id=9223372036854775807&language=sk", 9223372036854775807, models.SK},
		{"id=0009223372036854775807&language=sk", 9223372036854775807, models.SK},
		{"id=%31&l%61nguage=%65n", 1, models.EN},
		{"%69%64=1&%6c%61%6e%67%75%61%67%65=%65%6E", 1, models.EN},
		{"&&id=1&&language=en&", 1, models.EN},
		{"id=1&language=en&other=x&other=y&=z&x", 1, models.EN},
		{"id=1&language=en&ID=2&Language=de", 1, models.EN},
		// A name that does not decode matches no parameter, even if it looks like one.
		{"id=1&language=en&id%zz=2&id%=3&language%FF=de&language%C3%28=de", 1, models.EN},
		{"%zz=1&id=1&language=en", 1, models.EN},
	}
	for _, tt := range tests {
		req, err := parseCityQuery(tt.query)
		if err != nil || req.ID != tt.id || req.Language != tt.language {
			t.Errorf("%q: got %+v, %v; want id %d, language %s", tt.query, req, err, tt.id, tt.language)
		}
	}
}

// Every combination of the id and language problems, in both orders in the query.
func TestEveryCombinationOfProblems(t *testing.T) {
	idCases := []struct{ query, problem string }{
		{"id=1", ""},
		{"", missingID},
		{"id=1&id=1", repeatedID},
		{"id=x", invalidID},
	}
	languageCases := []struct{ query, problem string }{
		{"language=en", ""},
		{"", missingLanguage},
		{"language=en&language=de", repeatedLanguage},
		{"language=EN", invalidLanguage},
	}
	for _, id := range idCases {
		for _, language := range languageCases {
			var want []string
			for _, p := range []string{id.problem, language.problem} {
				if p != "" {
					want = append(want, p)
				}
			}
			for _, query := range []string{id.query + "&" + language.query, language.query + "&" + id.query} {
				if got := problems(t, query); got != strings.Join(want, "; ") {
					t.Errorf("%q: got %q, want %q", query, got, strings.Join(want, "; "))
				}
			}
		}
	}
	for _, query := range []string{"", "&&", "x=1"} {
		if got := problems(t, query); got != missingID+"; "+missingLanguage {
			t.Errorf("%q: got %q", query, got)
		}
	}
}

func TestRepetitionIsCountedAfterDecodingWithAnyValues(t *testing.T) {
	tests := []struct{ query, want string }{
		{"id=1&i%64=2&language=en", repeatedID},
		{"id=1&%69d=1&language=en", repeatedID},
		{"id=x&id=%zz&language=en", repeatedID},
		{"id=abc&id=1&language=en", repeatedID},
		{"id&id&language=en", repeatedID},
		{"id=1&language=en&id", repeatedID},
		{"id=1&language=en&language", repeatedLanguage},
		{"id=1&language=en&%6C%61nguage=de", repeatedLanguage},
		{"id=1&language=en&id=1&language=en", repeatedID + "; " + repeatedLanguage},
		{"language=en&language=xx", missingID + "; " + repeatedLanguage},
	}
	for _, tt := range tests {
		if got := problems(t, tt.query); got != tt.want {
			t.Errorf("%q: got %q, want %q", tt.query, got, tt.want)
		}
	}
}

func TestInvalidIDs(t *testing.T) {
	for _, id := range []string{
		"0", "00", "0000000000000000000000000000000", "-1", "-0",
		"+1",   // '+' decodes to a space: " 1"
		"%2B1", // a literal '+': no sign allowed (strconv.ParseInt would accept it)
		" 1", "%201", "%091", "1+", "1%202", "1e3", "1.0", "0x1", "", "1;language=en",
		"%zz", "%", "1%", "%4", "1%3", "%FF", "1%FF", "1%00",
		"%D9%A1",    // ARABIC-INDIC DIGIT ONE
		"%EF%BC%91", // FULLWIDTH DIGIT ONE
		"%C2%B9",    // SUPERSCRIPT ONE
		"9223372036854775808", "09223372036854775808", "99999999999999999999",
		"18446744073709551615", "18446744073709551617",
	} {
		if got := problems(t, "id="+id+"&language=en"); got != invalidID {
			t.Errorf("id=%s: got %q, want %q", id, got, invalidID)
		}
	}
	// A pair without '=' has an empty value.
	if got := problems(t, "id&language=en"); got != invalidID {
		t.Errorf("id without '=': got %q", got)
	}
}

func TestInvalidLanguages(t *testing.T) {
	for _, language := range []string{
		"", "EN", "En", "en+", "+en", "en%20", "english", "en-US", "cz", "xx", "%zz", "en%", "%",
		"en%FF", "%C1%A5n" /* overlong 'e' */, "%ED%A0%80" /* surrogate */, "\xffen", /* raw byte */
	} {
		if got := problems(t, "id=1&language="+language); got != invalidLanguage {
			t.Errorf("language=%q: got %q, want %q", language, got, invalidLanguage)
		}
	}
	if got := problems(t, "id=1&language"); got != invalidLanguage {
		t.Errorf("language without '=': got %q", got)
	}
	if got := problems(t, "id=%zz&language=%"); got != invalidID+"; "+invalidLanguage {
		t.Errorf("both invalid: got %q", got)
	}
}

// "id+" decodes to "id " (an unknown name), so id is missing.
func TestPlusInName(t *testing.T) {
	if got := problems(t, "id+=1&language=en"); got != missingID {
		t.Errorf("got %q", got)
	}
}

func TestFormDecode(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"plain", "plain", true},
		{"a+b%20c", "a b c", true},
		{"%2B", "+", true},
		{"Plze%C5%88", "Plzeň", true},
		{"%c5%88", "ň", true},
		{"Plzeň", "Plzeň", true},
		{"%", "", false},
		{"%4", "", false},
		{"%zz", "", false},
		{"%+1", "", false},
		{"%C5", "", false}, // truncated UTF-8
		{"%FF%FE", "", false},
		{"\xff", "", false},
	}
	for _, tt := range tests {
		got, ok := formDecode(tt.in)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("formDecode(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
