package cityref;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.ContentCachingResponseWrapper;

/**
 * The first filter: every answer is held in Spring's {@link ContentCachingResponseWrapper} and sent
 * with its {@code Content-Length} once the rest of the chain, Spring MVC's request observation
 * included, has finished. Two rules of the contract need it: HEAD answers carry the GET answer's
 * {@code Content-Length} (Spring's JSON converter flushes as it writes, so Tomcat would otherwise
 * send GET answers chunked and HEAD answers without a length), and a request is counted in
 * {@code /metrics} before its answer is sent. The answers are a few hundred bytes (the contract
 * itself, {@code /api-docs}, is the largest).
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
class ContentLengthFilter extends OncePerRequestFilter {
    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        ContentCachingResponseWrapper buffered = new ContentCachingResponseWrapper(response);
        try {
            chain.doFilter(request, buffered);
        } finally {
            buffered.copyBodyToResponse();
        }
    }
}
