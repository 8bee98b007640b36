package cityref;

import cityref.generated.model.City;
import cityref.generated.model.Health;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.util.Objects;
import java.util.Set;
import org.springframework.core.io.ClassPathResource;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.bind.annotation.RestController;

/**
 * The four listed paths. {@code @GetMapping} also answers HEAD (Spring MVC runs the GET handler
 * and Tomcat drops the body); every other method on a listed path reaches {@link #otherMethod}.
 * Each answer names its Content-Type, so the client's {@code Accept} never changes it.
 */
@RestController
class CityController {
    static final String CITY = "/city/v1/get";
    /** The listed paths; anything else is 404, whatever the method ({@link RequestTargetFilter}). */
    static final Set<String> LISTED_PATHS = Set.of(CITY, "/health", "/api-docs", "/metrics");

    /** Prometheus text format 0.0.4. */
    private static final MediaType METRICS = MediaType.parseMediaType("text/plain; version=0.0.4; charset=utf-8");

    private final CityService service;
    private final PrometheusMeterRegistry registry;

    /** The contract, byte for byte (generated/openapi.json, packaged as a resource). */
    private final byte[] openapiJson;

    CityController(CityService service, PrometheusMeterRegistry registry) throws IOException {
        this.service = service;
        this.registry = registry;
        this.openapiJson = new ClassPathResource("openapi.json").getContentAsByteArray();
    }

    /** The raw query string, parsed by {@link Query} exactly as the spec words it. */
    @GetMapping(CITY)
    ResponseEntity<City> city(HttpServletRequest request) {
        Query query = Query.parse(Objects.requireNonNullElse(request.getQueryString(), ""));
        return json(service.getCity(query));
    }

    @GetMapping("/health")
    ResponseEntity<Health> health() {
        return json(new Health(Health.StatusEnum.UP));
    }

    @GetMapping("/api-docs")
    ResponseEntity<byte[]> apiDocs() {
        return json(openapiJson);
    }

    /** The registry Spring Boot configures (application.properties: the spec's histogram only). */
    @GetMapping("/metrics")
    ResponseEntity<String> metrics() {
        return ResponseEntity.ok().contentType(METRICS).body(registry.scrape());
    }

    /**
     * A listed path, a method other than GET or HEAD: 405 ({@link ErrorAdvice} adds {@code Allow}).
     * A mapping without methods matches every method but OPTIONS, which Spring MVC otherwise answers
     * itself (200 with its own {@code Allow}): that one is named.
     */
    @RequestMapping(
            path = {CITY, "/health", "/api-docs", "/metrics"},
            method = {}) // every method (OPTIONS aside)
    void otherMethod() {
        throw AppError.methodNotAllowed();
    }

    @RequestMapping(
            path = {CITY, "/health", "/api-docs", "/metrics"},
            method = RequestMethod.OPTIONS)
    void options() {
        throw AppError.methodNotAllowed();
    }

    private static <T> ResponseEntity<T> json(T body) {
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(body);
    }
}
