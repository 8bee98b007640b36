package cityref;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.servlet.HandlerExceptionResolver;

/**
 * The contract's rules on the request target, before any controller: a target over 8192 bytes is
 * 414, then the path must be one of the listed paths exactly as sent (404 otherwise, whatever the
 * method). Spring MVC's matching works on the decoded path (its path patterns decode each segment,
 * Tomcat normalises dot segments, double slashes and {@code ;params}), which the contract does not
 * allow; the raw request URI is what was sent. TRACE on a listed path is 405 here too: Spring MVC's
 * servlet would echo the request after the controller's answer (HttpServlet's doTrace) unless a
 * handler answers {@code message/http}. Its answers go through {@link ErrorAdvice} like every other
 * error. The listed path is also the request's {@code http_route} ({@link Telemetry}). Each
 * request's start is marked for its Elasticsearch deadline ({@link Arrival}).
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
            Telemetry.matched(request, path);
            if ("TRACE".equals(request.getMethod())) {
                errors.resolveException(request, response, null, AppError.methodNotAllowed());
            } else {
                chain.doFilter(request, response);
            }
        }
    }
}
