package cityref;

import io.micrometer.observation.transport.ReceiverContext;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.propagation.Propagator;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.autoconfigure.AutoConfigurationImportFilter;
import org.springframework.boot.autoconfigure.AutoConfigurationMetadata;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.http.server.observation.DefaultServerRequestObservationConvention;
import org.springframework.http.server.observation.ServerRequestObservationContext;
import org.springframework.http.server.observation.ServerRequestObservationConvention;

/**
 * OpenTelemetry tracing (the spec's "Tracing") through Spring Boot's own integration, on only when
 * OTEL_TRACES_EXPORTER is {@code otlp}: Micrometer Tracing bridged to the OpenTelemetry SDK, Boot's
 * OTLP exporter (spring-boot-starter-opentelemetry; its settings are mapped from the OTEL_*
 * variables in application.properties), one SERVER span per request from Spring MVC's own
 * observation, the one that also feeds the request histogram.
 *
 * <p>Off, none of Boot's tracing or OpenTelemetry auto-configuration is applied at all ({@link
 * Switch}): Boot 4.0 has no property that does that (its tracer, propagators and SDK are configured
 * whenever the starter is on the classpath; {@code management.tracing.export.enabled} only drops the
 * exporters), and the service must then be the untraced one.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "OTEL_TRACES_EXPORTER", havingValue = "otlp")
public class Tracing {
    /**
     * Micrometer's handler that starts the SERVER span from the caller's {@code traceparent} (Boot's
     * own bean of this type steps back for it), with the stable HTTP attributes instead of the metric's
     * {@code method}, {@code uri} and {@code status} labels of Spring MVC's observation.
     */
    @Bean
    @Order(MicrometerTracingAutoConfiguration.RECEIVER_TRACING_OBSERVATION_HANDLER_ORDER)
    PropagatingReceiverTracingObservationHandler<ReceiverContext<?>> serverSpans(Tracer tracer, Propagator propagator) {
        return new PropagatingReceiverTracingObservationHandler<>(tracer, propagator) {
            @Override
            public void tagSpan(ReceiverContext<?> context, Span span) {
                if (!(context instanceof ServerRequestObservationContext server)) {
                    super.tagSpan(context, span);
                    return;
                }
                span.tag("http.request.method", server.getCarrier().getMethod());
                span.tag("http.response.status_code", (long) Telemetry.statusCode(server));
                if (server.getPathPattern() != null) {
                    span.tag("http.route", server.getPathPattern());
                }
            }
        };
    }

    /**
     * The span's name: the spec's {@code <method> <route>}, the bare method where no listed path
     * matched (the metric's name and labels are the default convention's).
     */
    @Bean
    ServerRequestObservationConvention spanNames() {
        return new DefaultServerRequestObservationConvention() {
            @Override
            public String getContextualName(ServerRequestObservationContext context) {
                String method = context.getCarrier().getMethod();
                return context.getPathPattern() == null ? method : method + " " + context.getPathPattern();
            }
        };
    }

    /**
     * Leaves Boot's tracing and OpenTelemetry auto-configuration out unless OTEL_TRACES_EXPORTER is
     * {@code otlp}, before their classes are read (Boot's {@code AutoConfigurationImportFilter},
     * registered in META-INF/spring.factories): the packages of spring-boot-opentelemetry,
     * spring-boot-micrometer-tracing and spring-boot-micrometer-tracing-opentelemetry.
     */
    static final class Switch implements AutoConfigurationImportFilter, EnvironmentAware {
        private static final String[] TRACING_PACKAGES = {
            "org.springframework.boot.opentelemetry.", "org.springframework.boot.micrometer.tracing."
        };

        private boolean tracing;

        @Override
        public void setEnvironment(Environment environment) {
            tracing = "otlp".equals(environment.getProperty("OTEL_TRACES_EXPORTER"));
        }

        @Override
        public boolean[] match(
                @Nullable String[] autoConfigurationClasses, AutoConfigurationMetadata autoConfigurationMetadata) {
            boolean[] match = new boolean[autoConfigurationClasses.length];
            for (int i = 0; i < match.length; i++) {
                String name = autoConfigurationClasses[i];
                match[i] = tracing
                        || name == null
                        || Arrays.stream(TRACING_PACKAGES).noneMatch(name::startsWith);
            }
            return match;
        }
    }
}
