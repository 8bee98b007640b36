package cityref;

import io.micrometer.observation.transport.ReceiverContext;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.propagation.Propagator;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
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
 * <p>Off, none of Boot's tracing or OpenTelemetry auto-configuration is applied at all: it is
 * excluded in application.properties unless the {@code otlp} profile, which OTEL_TRACES_EXPORTER=otlp
 * includes, lifts the exclusion.
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
}
