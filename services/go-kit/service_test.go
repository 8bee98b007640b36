package main

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/cityref/cityref/services/go-kit/generated/models"
)

// fakeLookup serves sources from maps (JSON text per id); a missing id is a not-found.
type fakeLookup struct {
	cities, regions map[int64]string
	err             error
}

func (f fakeLookup) City(_ context.Context, id int64, _ models.Language) (Source, error) {
	return f.lookup(f.cities, id)
}

func (f fakeLookup) Region(_ context.Context, id int64) (Source, error) {
	return f.lookup(f.regions, id)
}

func (f fakeLookup) lookup(docs map[int64]string, id int64) (Source, error) {
	if f.err != nil {
		return nil, f.err
	}
	doc, ok := docs[id]
	if !ok {
		return nil, nil
	}
	var source Source
	if err := json.Unmarshal([]byte(doc), &source); err != nil {
		panic(err)
	}
	return source, nil
}

func TestGetCityChecksInOrder(t *testing.T) {
	lookup := fakeLookup{
		cities: map[int64]string{
			1:  `{"id":1,"countryIso":"CZ","isFeatured":true,"regionId":1,"name.en":"Prague","name.pl":"Praga"}`,
			10: `{"id":10,"countryIso":"CZ","isFeatured":false,"regionId":2,"name.en":"Klatovy","name.pl":""}`,
			11: `{"id":11,"countryIso":"CZ","isFeatured":false,"regionId":99,"name.en":"Nowhere"}`,
			12: `{"id":12,"countryIso":"CZ","isFeatured":"yes","regionId":1}`, // malformed before name checks
			14: `{"id":14,"countryIso":"SK","isFeatured":true,"regionId":9,"name.sk":"Mesto"}`,
			15: `{"id":15,"countryIso":"CZ","isFeatured":true,"regionId":1,"name.en":null,"name.de":5}`,
		},
		regions: map[int64]string{
			1: `{"name.en":"Prague","name.pl":"Praga"}`,
			2: `{"name.en":"Plzeň Region & <Bohemia>"}`,
			9: `{"name.en":"Region"}`,
		},
	}
	tests := []struct {
		id       int64
		language models.Language
		want     models.City
		err      *AppError
	}{
		{1, models.EN, models.City{CountryIso: "CZ", Id: 1, IsFeatured: true, Name: "Prague", RegionName: "Prague"}, nil},
		{1, models.PL, models.City{CountryIso: "CZ", Id: 1, IsFeatured: true, Name: "Praga", RegionName: "Praga"}, nil},
		{10, models.EN, models.City{CountryIso: "CZ", Id: 10, Name: "Klatovy", RegionName: "Plzeň Region & <Bohemia>"}, nil},
		{7, models.EN, models.City{}, errCityNotFound(7)},
		{12, models.PL, models.City{}, errCityMalformed(12)},
		{10, models.PL, models.City{}, errCityNameMissing(10, models.PL)}, // empty name
		{1, models.CS, models.City{}, errCityNameMissing(1, models.CS)},   // absent name
		{15, models.EN, models.City{}, errCityNameMissing(15, models.EN)}, // null name
		{15, models.DE, models.City{}, errCityNameMissing(15, models.DE)}, // not a string
		{11, models.EN, models.City{}, errRegionNotFound(99, 11)},
		{14, models.SK, models.City{}, errRegionNameMissing(9, models.SK)},
	}
	service := NewCityService(lookup)
	for _, tt := range tests {
		city, err := service.GetCity(context.Background(), tt.id, tt.language)
		if tt.err != nil {
			var appErr *AppError
			if !errors.As(err, &appErr) || *appErr != *tt.err {
				t.Errorf("city %d %s: got %v, want %v", tt.id, tt.language, err, tt.err)
			}
			continue
		}
		if err != nil || city != tt.want {
			t.Errorf("city %d %s: got %+v, %v; want %+v", tt.id, tt.language, city, err, tt.want)
		}
	}
}

func TestBackendErrorsPassThrough(t *testing.T) {
	for _, want := range []error{errUnavailable, errTimeout} {
		_, err := NewCityService(fakeLookup{err: want}).GetCity(context.Background(), 1, models.EN)
		if !errors.Is(err, want) {
			t.Errorf("got %v, want %v", err, want)
		}
	}
}

func TestStoredCityTypes(t *testing.T) {
	valid := map[string]string{"id": "1", "countryIso": `"CZ"`, "isFeatured": "true", "regionId": "1"}
	source := func(changes map[string]string, remove string) Source {
		s := Source{}
		for k, v := range valid {
			s[k] = json.RawMessage(v)
		}
		for k, v := range changes {
			s[k] = json.RawMessage(v)
		}
		delete(s, remove)
		return s
	}
	if city, ok := parseStoredCity(source(nil, "")); !ok || city != (storedCity{1, "CZ", true, 1}) {
		t.Fatalf("valid city: %+v, %v", city, ok)
	}
	for _, change := range []map[string]string{
		{"isFeatured": `"yes"`}, {"isFeatured": "1"}, {"isFeatured": "null"},
		{"id": "1.5"}, {"id": "1e3"}, {"id": "9223372036854775808"}, {"id": `"1"`},
		{"regionId": `"1"`}, {"regionId": "null"},
		{"countryIso": "null"}, {"countryIso": "5"},
	} {
		if _, ok := parseStoredCity(source(change, "")); ok {
			t.Errorf("%v: accepted", change)
		}
	}
	for key := range valid {
		if _, ok := parseStoredCity(source(nil, key)); ok {
			t.Errorf("without %s: accepted", key)
		}
	}
	// Keys match exactly (encoding/json would match a struct field case-insensitively).
	if _, ok := parseStoredCity(source(map[string]string{"ID": "1"}, "id")); ok {
		t.Error("ID accepted as id")
	}
}
