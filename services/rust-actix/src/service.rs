//! The service: a city and its region, checked in the contract's order and rendered into the
//! generated model. No HTTP here.

use serde::Deserialize;
use serde_json::Value;

use crate::errors::AppError;
use crate::models::{City, Language};
use crate::query::CityQuery;
use crate::repository::{CityLookup, CityRepository};

/// The stored city fields the response needs; any missing or mistyped one makes the city
/// malformed. The name is looked up separately (`name.<language>`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredCity {
    id: i64,
    country_iso: String,
    is_featured: bool,
    region_id: i64,
}

/// The city service over its lookup: the repository when served, a fake in the tests.
pub struct CityService<L = CityRepository> {
    lookup: L,
}

impl<L: CityLookup> CityService<L> {
    pub fn new(lookup: L) -> Self {
        CityService { lookup }
    }

    /// Looks the city and its region up and runs the contract's checks in the contract's order:
    /// city found (404), well-formed (500), name in the language (500), region found (500),
    /// region name in the language (500).
    pub async fn get_city(&self, CityQuery { id, language }: CityQuery) -> Result<City, AppError> {
        let city = self
            .lookup
            .find_city(id, language)
            .await?
            .ok_or(AppError::CityNotFound(id))?;
        let stored = StoredCity::deserialize(&city).map_err(|_| AppError::CityMalformed(id))?;
        let name = name_in(&city, language).ok_or(AppError::CityNameMissing { city_id: id, language })?;
        let region_id = stored.region_id;
        let region = self
            .lookup
            .find_region(region_id)
            .await?
            .ok_or(AppError::RegionNotFound { region_id, city_id: id })?;
        let region_name = name_in(&region, language).ok_or(AppError::RegionNameMissing { region_id, language })?;
        Ok(City::new(
            stored.country_iso,
            stored.id,
            stored.is_featured,
            name.into(),
            region_name.into(),
        ))
    }
}

/// The name in `language` (`"name.<language>"`); absent, `null`, empty or not a string all
/// count as missing.
fn name_in(source: &Value, language: Language) -> Option<&str> {
    source
        .get(format!("name.{language}"))
        .and_then(Value::as_str)
        .filter(|name| !name.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repository::Source;
    use serde_json::json;
    use std::cell::Cell;
    use std::sync::Arc;

    /// A lookup with fixed answers that counts the region lookups.
    struct Fake {
        city: Result<Option<Value>, AppError>,
        region: Result<Option<Value>, AppError>,
        region_lookups: Cell<u32>,
    }

    impl CityLookup for Fake {
        async fn find_city(&self, _: i64, _: Language) -> Result<Option<Source>, AppError> {
            self.city.clone()
        }

        async fn find_region(&self, _: i64) -> Result<Option<Arc<Source>>, AppError> {
            self.region_lookups.set(self.region_lookups.get() + 1);
            self.region.clone().map(|region| region.map(Arc::new))
        }
    }

    /// Each case breaks one check and every check after it, so the earliest must answer; the
    /// region is looked up only once the city passed all of its checks.
    #[actix_web::test]
    async fn checks_run_in_the_contract_order() {
        use AppError::*;
        let city = json!({"id": 5, "countryIso": "CZ", "isFeatured": false, "regionId": 9, "name.en": "Brno"});
        let mut nameless = city.clone();
        nameless.as_object_mut().unwrap().remove("name.en");
        let malformed = json!({"id": 5, "countryIso": "CZ", "regionId": 9}); // no isFeatured, no name
        let region = json!({"name.en": "South Moravian Region"});
        let nameless_region = json!({"name.de": "Südmährische Region"});
        let cases = [
            (Ok(None), Ok(None), Err(CityNotFound(5)), 0),
            (Err(Unavailable), Ok(None), Err(Unavailable), 0),
            (Ok(Some(malformed)), Ok(None), Err(CityMalformed(5)), 0),
            (
                Ok(Some(nameless)),
                Ok(None),
                Err(CityNameMissing {
                    city_id: 5,
                    language: Language::En,
                }),
                0,
            ),
            (Ok(Some(city.clone())), Err(Timeout), Err(Timeout), 1),
            (
                Ok(Some(city.clone())),
                Ok(None),
                Err(RegionNotFound {
                    region_id: 9,
                    city_id: 5,
                }),
                1,
            ),
            (
                Ok(Some(city.clone())),
                Ok(Some(nameless_region)),
                Err(RegionNameMissing {
                    region_id: 9,
                    language: Language::En,
                }),
                1,
            ),
            (
                Ok(Some(city)),
                Ok(Some(region)),
                Ok(City::new(
                    "CZ".into(),
                    5,
                    false,
                    "Brno".into(),
                    "South Moravian Region".into(),
                )),
                1,
            ),
        ];
        for (city, region, expected, region_lookups) in cases {
            let service = CityService::new(Fake {
                city,
                region,
                region_lookups: Cell::new(0),
            });
            let query = CityQuery {
                id: 5,
                language: Language::En,
            };
            assert_eq!(service.get_city(query).await, expected);
            assert_eq!(service.lookup.region_lookups.get(), region_lookups, "{expected:?}");
        }
    }

    #[test]
    fn names() {
        let source = serde_json::json!({"name.en": "Prague", "name.de": "", "name.pl": null, "name.cs": 5});
        assert_eq!(name_in(&source, Language::En), Some("Prague"));
        for language in [Language::De, Language::Pl, Language::Cs, Language::Sk] {
            assert_eq!(name_in(&source, language), None);
        }
    }

    #[test]
    fn stored_city_types() {
        let valid = serde_json::json!({"id": 1, "countryIso": "CZ", "isFeatured": true, "regionId": 1});
        assert!(StoredCity::deserialize(&valid).is_ok());
        for (key, value) in [
            ("isFeatured", serde_json::json!("yes")),
            ("id", serde_json::json!(1.5)),
            ("id", serde_json::json!(9223372036854775808u64)),
            ("regionId", serde_json::json!("1")),
            ("countryIso", serde_json::json!(null)),
        ] {
            let mut city = valid.clone();
            city[key] = value;
            assert!(StoredCity::deserialize(&city).is_err(), "{city}");
            city.as_object_mut().unwrap().remove(key);
            assert!(StoredCity::deserialize(&city).is_err(), "{city}");
        }
    }
}
