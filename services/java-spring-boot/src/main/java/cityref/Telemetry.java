package cityref;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.server.observation.DefaultServerRequestObservationConvention;
import org.springframework.http.server.observation.ServerRequestObservationContext;
import org.springframework.http.server.observation.ServerRequestObservationConvention;

/**
 * Per request, through Spring MVC's own observation of every request (Boot registers its
 * ServerHttpObservationFilter first in the chain): the {@code http_server_request_duration_seconds}
 * histogram with the spec's labels (this convention; buckets in application.properties), and one
 * {@code info} log line when the observation stops.
 */
@Configuration(proxyBeanMethods = false)
public class Telemetry {
    /** Methods of RFC 9110 plus PATCH; any other is counted as {@code _OTHER}. */
    private static final Set<String> KNOWN_METHODS =
            Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH");
    /** The request attribute naming the listed path a request matched (see {@link #matched}). */
    private static final String ROUTE = "cityref.route";
    /** The longest request target logged (the spec: a 414's may be cut to its first 8192 bytes). */
    private static final int MAX_LOGGED_TARGET = 8192;

    /**
     * The transport's word that {@code request} matched the listed path {@code route}: its
     * {@code http_route} label. A request without it (an unknown path, a 414) has the empty route.
     */
    static void matched(HttpServletRequest request, String route) {
        request.setAttribute(ROUTE, route);
    }

    /** The request target as sent: the raw path and the raw query ({@code /health?} loses its {@code ?}). */
    static String target(HttpServletRequest request) {
        String query = request.getQueryString();
        return query == null ? request.getRequestURI() : request.getRequestURI() + "?" + query;
    }

    /**
     * OpenTelemetry's {@code http.server.request.duration} with its attribute names, and the span's
     * name. Not Spring's {@code OpenTelemetryServerRequestObservationConvention}: one convention names
     * both the metric and the span, and its metric labels are not the spec's (it adds
     * {@code exception}, {@code outcome}, {@code url.scheme}, and names an unmatched route
     * {@code NOT_FOUND} or {@code UNKNOWN}); its route is Spring MVC's path pattern, which the
     * requests the transport's target filter answers (414, 404, TRACE) have not got (README.md, Tracing).
     */
    @Bean
    ServerRequestObservationConvention serverRequestObservationConvention() {
        return new DefaultServerRequestObservationConvention("http.server.request.duration") {
            @Override
            public KeyValues getLowCardinalityKeyValues(ServerRequestObservationContext context) {
                HttpServletRequest request = context.getCarrier();
                String method = request.getMethod();
                Object route = request.getAttribute(ROUTE);
                return KeyValues.of(
                        KeyValue.of("http.request.method", KNOWN_METHODS.contains(method) ? method : "_OTHER"),
                        KeyValue.of("http.route", route instanceof String r ? r : ""),
                        KeyValue.of("http.response.status_code", Integer.toString(statusCode(context))));
            }

            @Override
            public KeyValues getHighCardinalityKeyValues(ServerRequestObservationContext context) {
                return KeyValues.empty();
            }

            /**
             * The span's name when tracing is on (the metric's is the name above): the semantic
             * conventions' {@code <method> <route>}, {@code HTTP} for a method outside the known ones,
             * the bare method where no listed path matched.
             */
            @Override
            public String getContextualName(ServerRequestObservationContext context) {
                HttpServletRequest request = context.getCarrier();
                String method = KNOWN_METHODS.contains(request.getMethod()) ? request.getMethod() : "HTTP";
                return request.getAttribute(ROUTE) instanceof String route ? method + " " + route : method;
            }
        };
    }

    /**
     * Only the spec's labels: Micrometer's observation handler adds an {@code error} tag to every timer
     * it records; the status code already tells errors apart.
     */
    @Bean
    MeterFilter onlyTheSpecsLabels() {
        return MeterFilter.ignoreTags("error");
    }

    /** The request's log line, once it is answered. */
    @Bean
    ObservationHandler<ServerRequestObservationContext> requestLog() {
        return new RequestLog();
    }

    static int statusCode(ServerRequestObservationContext context) {
        return context.getResponse() == null ? 500 : context.getResponse().getStatus();
    }

    static final class RequestLog implements ObservationHandler<ServerRequestObservationContext> {
        private static final Logger LOG = LoggerFactory.getLogger("cityref.request");
        private static final String START = "cityref.start";

        @Override
        public void onStart(ServerRequestObservationContext context) {
            context.put(START, System.nanoTime());
        }

        @Override
        public void onStop(ServerRequestObservationContext context) {
            Long start = context.get(START);
            double ms = start == null ? 0 : (System.nanoTime() - start) / 1e6;
            String target = target(context.getCarrier());
            LOG.atInfo()
                    .setMessage("request")
                    .addKeyValue("method", context.getCarrier().getMethod())
                    .addKeyValue(
                            "path",
                            target.length() > MAX_LOGGED_TARGET ? target.substring(0, MAX_LOGGED_TARGET) : target)
                    .addKeyValue("status", statusCode(context))
                    .addKeyValue("duration_ms", ms)
                    .log();
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return context instanceof ServerRequestObservationContext;
        }
    }
}
