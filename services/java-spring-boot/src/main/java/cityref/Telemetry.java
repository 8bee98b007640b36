package cityref;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import jakarta.servlet.http.HttpServletRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.server.observation.ServerRequestObservationContext;
import org.springframework.stereotype.Component;

/**
 * The request's log line, written when Spring MVC's observation of the request stops (Boot registers
 * its ServerHttpObservationFilter first in the chain; the same observation is the
 * {@code http_server_requests_seconds} histogram and, with tracing on, the server span).
 */
@Component
class Telemetry implements ObservationHandler<ServerRequestObservationContext> {
    private static final Logger LOG = LoggerFactory.getLogger("cityref.request");
    private static final String START = "cityref.start";
    /** The longest request target logged (the spec: a 414's may be cut to its first 8192 bytes). */
    private static final int MAX_LOGGED_TARGET = 8192;

    /** The request target as sent: the raw path and the raw query ({@code /health?} loses its {@code ?}). */
    static String target(HttpServletRequest request) {
        String query = request.getQueryString();
        return query == null ? request.getRequestURI() : request.getRequestURI() + "?" + query;
    }

    static int statusCode(ServerRequestObservationContext context) {
        return context.getResponse() == null ? 500 : context.getResponse().getStatus();
    }

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
                        "path", target.length() > MAX_LOGGED_TARGET ? target.substring(0, MAX_LOGGED_TARGET) : target)
                .addKeyValue("status", statusCode(context))
                .addKeyValue("duration_ms", ms)
                .log();
    }

    @Override
    public boolean supportsContext(Observation.Context context) {
        return context instanceof ServerRequestObservationContext;
    }
}
