package main

import (
	"context"
	"encoding/json"

	"github.com/cityref/cityref/services/go-kit/generated/models"
)

// CityService is the business logic of the contract's getCity operation, free of HTTP: go-kit's
// service layer. Endpoints (endpoints.go) adapt it, transport.go puts it on HTTP.
type CityService interface {
	// GetCity renders the city and its region's name in language. Errors are *AppError.
	GetCity(ctx context.Context, id int64, language models.Language) (models.City, error)
}

// NewCityService returns the CityService reading through lookup (the CityRepository when served).
func NewCityService(lookup CityLookup) CityService {
	return basicService{lookup: lookup}
}

// basicService is the CityService's implementation (go-kit's name for it, as in its addsvc
// example).
type basicService struct {
	lookup CityLookup
}

// storedCity holds the fields of a city document the answer needs; a missing or mistyped one
// makes the city malformed.
type storedCity struct {
	ID         int64
	CountryIso string
	IsFeatured bool
	RegionID   int64
}

// GetCity runs the checks in the contract's order: city found (404), city well-formed (500),
// city name in the language (500), region found (500), region name in the language (500).
func (s basicService) GetCity(ctx context.Context, id int64, language models.Language) (models.City, error) {
	city, err := s.lookup.City(ctx, id, language)
	if err != nil {
		return models.City{}, err
	}
	if city == nil {
		return models.City{}, errCityNotFound(id)
	}
	stored, ok := parseStoredCity(city)
	if !ok {
		return models.City{}, errCityMalformed(id)
	}
	name, ok := nameIn(city, language)
	if !ok {
		return models.City{}, errCityNameMissing(id, language)
	}
	region, err := s.lookup.Region(ctx, stored.RegionID)
	if err != nil {
		return models.City{}, err
	}
	if region == nil {
		return models.City{}, errRegionNotFound(stored.RegionID, id)
	}
	regionName, ok := nameIn(region, language)
	if !ok {
		return models.City{}, errRegionNameMissing(stored.RegionID, language)
	}
	return models.City{
		CountryIso: stored.CountryIso,
		Id:         stored.ID,
		IsFeatured: stored.IsFeatured,
		Name:       name,
		RegionName: regionName,
	}, nil
}

// parseStoredCity: id and regionId JSON integers that fit int64, countryIso a string,
// isFeatured a boolean; keys matched exactly (encoding/json would match struct fields
// case-insensitively).
func parseStoredCity(source Source) (storedCity, bool) {
	var city storedCity
	ok := field(source, "id", &city.ID) &&
		field(source, "countryIso", &city.CountryIso) &&
		field(source, "isFeatured", &city.IsFeatured) &&
		field(source, "regionId", &city.RegionID)
	return city, ok
}

// nameIn: the name in language ("name.<language>"); absent, null, empty or not a string all
// count as missing.
func nameIn(source Source, language models.Language) (string, bool) {
	var name string
	if !field(source, "name."+string(language), &name) || name == "" {
		return "", false
	}
	return name, true
}

// field decodes source[key] into *dst; false when the key is absent, null or of another type.
func field[T any](source Source, key string, dst *T) bool {
	raw, ok := source[key]
	if !ok {
		return false
	}
	var value *T
	if err := json.Unmarshal(raw, &value); err != nil || value == nil {
		return false
	}
	*dst = *value
	return true
}
