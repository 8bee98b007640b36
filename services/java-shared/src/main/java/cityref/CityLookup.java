package cityref;

import tools.jackson.databind.node.ObjectNode;

/** What the {@link CityService} needs from the backend: the {@link CityRepository}, or a fake in tests. */
public interface CityLookup {
    /** The city's {@code _source} (flat dotted keys, e.g. {@code "name.en"}); null when not found. */
    ObjectNode findCity(long id, String language);

    /** The region's {@code _source} with its names; null when not found. */
    ObjectNode findRegion(long id);
}
