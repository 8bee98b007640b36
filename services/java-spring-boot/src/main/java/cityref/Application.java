package cityref;

import io.opentelemetry.api.OpenTelemetry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.actuate.endpoint.web.EndpointMediaTypes;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.http.MediaType;

/**
 * The application: Spring Boot's auto-configuration and this package's components; the validated
 * {@link Config} (bound by Boot, {@link Settings}), the {@link CityRepository} and the {@link CityService} (java-shared, so declared
 * here as beans); the spec's health check mode; and SIGTERM/SIGINT ending in exit status 0.
 */
@SpringBootApplication(proxyBeanMethods = false)
@EnableConfigurationProperties(Settings.class)
public class Application {

    public static void main(String[] args) {
        if (args.length == 1 && args[0].equals("healthcheck")) {
            System.exit(HealthCheck.run());
        }
        // SIGTERM/SIGINT become System.exit(0) from the first moment: Spring Boot's own shutdown hook
        // then closes the context (graceful: Tomcat stops accepting and lets requests in flight
        // finish, server.shutdown), and the JVM exits 0 as the spec asks, not 143 or 130 as it does
        // when a signal starts the shutdown hooks itself. Installed before the start, so that a signal
        // that comes as soon as Tomcat listens, before run() returns, is handled the same way.
        ShutdownSignals.onTermOrInt(() -> Thread.ofPlatform().name("shutdown").start(() -> System.exit(0)));
        SpringApplication application = new SpringApplication(Application.class);
        application.setApplicationStartup(StartupPhases.begin());
        try {
            application.run(args);
        } catch (Throwable e) {
            // Spring has logged why (StartupFailureAnalyzer); never linger half-started.
            System.exit(1);
        }
    }

    /** The configuration Boot bound and validated ({@link Settings}). */
    @Bean
    Config config(Settings settings) {
        return settings.config();
    }

    /**
     * Elasticsearch through the official client; Spring closes it on shutdown ({@code close()}). With
     * tracing on, its requests are traced with Boot's {@link OpenTelemetry} (java-shared's README).
     */
    @Bean
    CityRepository cityRepository(Config config, ObjectProvider<OpenTelemetry> openTelemetry) {
        // the city's deadline from the request's Arrival: Tomcat's executor queues tasks
        return new CityRepository(config, config.tracing() ? openTelemetry.getObject() : null, Arrival::nanos);
    }

    /**
     * Actuator's endpoints ({@code /health}) answer {@code application/json} whatever the request's
     * {@code Accept}: the spec's exact type, not Actuator's own {@code application/vnd.spring-boot.actuator.v3+json}.
     */
    @Bean
    EndpointMediaTypes endpointMediaTypes() {
        return new EndpointMediaTypes(MediaType.APPLICATION_JSON_VALUE);
    }

    @Bean
    CityService cityService(CityLookup cityRepository) {
        return new CityService(cityRepository);
    }
}
