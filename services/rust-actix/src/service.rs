//! The service: a city and its region, checked in the contract's order and rendered into the
//! generated model. No HTTP here.

use crate::errors::AppError;
use crate::models::City;
use crate::query::CityQuery;
use crate::repository::{CityLookup, CityRepository};

/// The city service over its lookup: the repository when served, a fake in the tests.
pub struct CityService<L = CityRepository> {
    lookup: L,
}

impl<L: CityLookup> CityService<L> {
    pub fn new(lookup: L) -> Self {
        CityService { lookup }
    }

    /// Looks the city and its region up and runs the contract's checks in the contract's order:
    /// city found (404), well-formed (500, the repository's typed read), name in the language
    /// (500), region found (500), region name in the language (500).
    pub async fn get_city(&self, CityQuery { id, language }: CityQuery) -> Result<City, AppError> {
        let city = self
            .lookup
            .find_city(id, language)
            .await?
            .ok_or(AppError::CityNotFound(id))?;
        let name = city
            .names
            .get(language)
            .ok_or(AppError::CityNameMissing { city_id: id, language })?;
        let region_id = city.region_id;
        let region = self
            .lookup
            .find_region(region_id)
            .await?
            .ok_or(AppError::RegionNotFound { region_id, city_id: id })?;
        let region_name = region
            .names
            .get(language)
            .ok_or(AppError::RegionNameMissing { region_id, language })?;
        Ok(City::new(
            city.country_iso.clone(),
            city.id,
            city.is_featured,
            name.into(),
            region_name.into(),
        ))
    }
}
