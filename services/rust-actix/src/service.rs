//! The service: a city and its region, checked in the contract's order and rendered into the
//! generated model. No HTTP here.

use serde::Deserialize;
use serde_json::Value;

use crate::errors::AppError;
use crate::models::{City, Language};
use crate::query::CityQuery;
use crate::repository::Repository;

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

/// Looks the city and its region up and runs the contract's checks in the contract's order:
/// city found (404), well-formed (500), name in the language (500), region found (500), region
/// name in the language (500).
pub async fn get_city(repository: &Repository, CityQuery { id, language }: CityQuery) -> Result<City, AppError> {
    let city = repository
        .find_city(id, language)
        .await?
        .ok_or(AppError::CityNotFound(id))?;
    let stored = StoredCity::deserialize(&city).map_err(|_| AppError::CityMalformed(id))?;
    let name = name_in(&city, language).ok_or(AppError::CityNameMissing { city_id: id, language })?;
    let region_id = stored.region_id;
    let region = repository
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
