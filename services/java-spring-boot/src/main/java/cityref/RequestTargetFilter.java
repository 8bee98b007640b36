package cityref;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.filter.ServerHttpObservationFilter;
import org.springframework.web.servlet.HandlerExceptionResolver;

/**
 * The contract's rules on the request target, before any controller: a target over 8192 bytes is
 * 414, then the path must be one of the listed paths exactly as sent (404 otherwise, whatever the
 * method). Spring MVC's matching works on the decoded path (its path patterns decode each segment,
 * Tomcat normalises dot segments, double slashes and {@code ;params}), which the contract does not
 * allow; the raw request URI is what was sent. TRACE and OPTIONS on a listed path are 405 here too:
 * Spring MVC's servlet would echo a TRACE after the controller's answer (HttpServlet's doTrace), and
 * Spring MVC answers OPTIONS itself (200 with its own {@code Allow}). Its answers go through
 * {@link ErrorAdvice} like every other error. The listed path is the observation's path pattern (the
 * metric's {@code uri}, the span's {@code http.route}) also for the answers Spring MVC's handler
 * mapping does not match. Each request's start is marked for its Elasticsearch deadline ({@link Arrival}).
 */
@Component
class RequestTargetFilter extends OncePerRequestFilter {
    /** Longest request target (path and query as sent) answered normally. */
    static final int MAX_REQUEST_TARGET = 8192;

    private final HandlerExceptionResolver errors;

    RequestTargetFilter(@Qualifier("handlerExceptionResolver") HandlerExceptionResolver errors) {
        this.errors = errors;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        Arrival.requestStarts();
        String path = request.getRequestURI();
        if (Telemetry.target(request).length() > MAX_REQUEST_TARGET) {
            errors.resolveException(request, response, null, AppError.uriTooLong());
        } else if (!CityController.LISTED_PATHS.contains(path)) {
            errors.resolveException(request, response, null, AppError.noSuchResource());
        } else {
            ServerHttpObservationFilter.findObservationContext(request).ifPresent(c -> c.setPathPattern(path));
            if ("TRACE".equals(request.getMethod()) || "OPTIONS".equals(request.getMethod())) {
                errors.resolveException(request, response, null, AppError.methodNotAllowed());
            } else {
                chain.doFilter(request, response);
            }
        }
    }
}
