package cityref;

import cityref.generated.model.City;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.util.Objects;
import java.util.Set;
import org.springframework.core.io.ClassPathResource;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Two of the four listed paths ({@code /health} and {@code /metrics} are Actuator's endpoints).
 * {@code @GetMapping} also answers HEAD (Spring MVC runs the GET handler and Tomcat drops the body);
 * another method on a listed path is Spring MVC's 405 ({@link ErrorAdvice}). Each answer names its
 * Content-Type, so the client's {@code Accept} never changes it.
 */
@RestController
class CityController {
    static final String CITY = "/city/v1/get";
    /** The listed paths; anything else is 404, whatever the method ({@link RequestTargetFilter}). */
    static final Set<String> LISTED_PATHS = Set.of(CITY, "/health", "/api-docs", "/metrics");

    private final CityService service;

    /** The contract, byte for byte (generated/openapi.json, packaged as a resource). */
    private final byte[] openapiJson;

    CityController(CityService service) throws IOException {
        this.service = service;
        this.openapiJson = new ClassPathResource("openapi.json").getContentAsByteArray();
    }

    /** The raw query string, parsed by {@link Query} exactly as the spec words it. */
    @GetMapping(CITY)
    ResponseEntity<City> city(HttpServletRequest request) {
        Query query = Query.parse(Objects.requireNonNullElse(request.getQueryString(), ""));
        return json(service.getCity(query));
    }

    @GetMapping("/api-docs")
    ResponseEntity<byte[]> apiDocs() {
        return json(openapiJson);
    }

    private static <T> ResponseEntity<T> json(T body) {
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(body);
    }
}
