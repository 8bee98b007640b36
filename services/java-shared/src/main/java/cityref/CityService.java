package cityref;

import cityref.generated.model.City;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/** The service: a city and its region, checked in the contract's order. No HTTP here. */
public final class CityService {
    private final CityLookup repository;

    public CityService(CityLookup repository) {
        this.repository = repository;
    }

    /** Looks the city and its region up and runs the contract's checks in the contract's order. */
    public City getCity(Query query) {
        long id = query.id();
        String language = query.language().getValue();
        ObjectNode city = repository.findCity(id, language);
        if (city == null) {
            throw AppError.cityNotFound(id);
        }
        JsonNode countryIso = city.get("countryIso");
        JsonNode isFeatured = city.get("isFeatured");
        Long regionId = longOrNull(city.get("regionId"));
        Long storedId = longOrNull(city.get("id"));
        if (countryIso == null
                || !countryIso.isString()
                || isFeatured == null
                || !isFeatured.isBoolean()
                || regionId == null
                || storedId == null) {
            throw AppError.cityMalformed(id);
        }
        String name = nameIn(city, language);
        if (name == null) {
            throw AppError.cityNameMissing(id, language);
        }
        ObjectNode region = repository.findRegion(regionId);
        if (region == null) {
            throw AppError.regionNotFound(regionId, id);
        }
        String regionName = nameIn(region, language);
        if (regionName == null) {
            throw AppError.regionNameMissing(regionId, language);
        }
        return new City(countryIso.stringValue(), storedId, isFeatured.booleanValue(), name, regionName);
    }

    private static Long longOrNull(JsonNode node) {
        return node != null && node.isIntegralNumber() && node.canConvertToLong() ? node.longValue() : null;
    }

    /** {@code "name.<language>"}; absent, null, empty or not a string all count as missing. */
    private static String nameIn(ObjectNode source, String language) {
        JsonNode name = source.get("name." + language);
        return name != null && name.isString() && !name.stringValue().isEmpty() ? name.stringValue() : null;
    }
}
