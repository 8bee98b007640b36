//! The city service's checks, in the contract's order, over a fake lookup.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

use cityref_rust_actix::errors::AppError::{self, *};
use cityref_rust_actix::models::{City, Language};
use cityref_rust_actix::query::CityQuery;
use cityref_rust_actix::repository::{CityDoc, CityLookup, RegionDoc};
use cityref_rust_actix::service::CityService;
use serde_json::json;

/// A lookup with fixed answers that counts the region lookups.
struct Fake {
    city: Result<Option<CityDoc>, AppError>,
    region: Result<Option<RegionDoc>, AppError>,
    region_lookups: Rc<Cell<u32>>,
}

impl CityLookup for Fake {
    async fn find_city(&self, _: i64, _: Language) -> Result<Option<CityDoc>, AppError> {
        self.city.clone()
    }

    async fn find_region(&self, _: i64) -> Result<Option<Arc<RegionDoc>>, AppError> {
        self.region_lookups.set(self.region_lookups.get() + 1);
        self.region.clone().map(|region| region.map(Arc::new))
    }
}

fn doc<T: serde::de::DeserializeOwned>(source: serde_json::Value) -> Option<T> {
    Some(serde_json::from_value(source).unwrap())
}

/// Each case breaks one check and every check after it, so the earliest must answer; the
/// region is looked up only once the city passed all of its checks (a malformed city is the
/// repository's typed read failing).
#[actix_web::test]
async fn checks_run_in_the_contract_order() {
    let city = doc(json!({"id": 5, "countryIso": "CZ", "isFeatured": false, "regionId": 9, "name.en": "Brno"}));
    let nameless = doc(json!({"id": 5, "countryIso": "CZ", "isFeatured": false, "regionId": 9}));
    let region = doc(json!({"name.en": "South Moravian Region"}));
    let nameless_region = doc(json!({"name.de": "Südmährische Region"}));
    let brno = City::new("CZ".into(), 5, false, "Brno".into(), "South Moravian Region".into());
    let cases = [
        (Ok(None), Ok(None), Err(CityNotFound(5)), 0),
        (Err(Unavailable), Ok(None), Err(Unavailable), 0),
        (Err(CityMalformed(5)), Ok(None), Err(CityMalformed(5)), 0),
        (
            Ok(nameless),
            Ok(None),
            Err(CityNameMissing {
                city_id: 5,
                language: Language::En,
            }),
            0,
        ),
        (Ok(city.clone()), Err(Timeout), Err(Timeout), 1),
        (
            Ok(city.clone()),
            Ok(None),
            Err(RegionNotFound {
                region_id: 9,
                city_id: 5,
            }),
            1,
        ),
        (
            Ok(city.clone()),
            Ok(nameless_region),
            Err(RegionNameMissing {
                region_id: 9,
                language: Language::En,
            }),
            1,
        ),
        (Ok(city), Ok(region), Ok(brno), 1),
    ];
    for (city, region, expected, region_lookups) in cases {
        let lookups = Rc::new(Cell::new(0));
        let service = CityService::new(Fake {
            city,
            region,
            region_lookups: Rc::clone(&lookups),
        });
        let query = CityQuery {
            id: 5,
            language: Language::En,
        };
        assert_eq!(service.get_city(query).await, expected);
        assert_eq!(lookups.get(), region_lookups, "{expected:?}");
    }
}
