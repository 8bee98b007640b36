package cityref;

import cityref.generated.model.Error;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.boot.webmvc.error.ErrorController;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Spring Boot's error page for Tomcat ({@code /error}, in place of Boot's BasicErrorController):
 * what Tomcat refuses before Spring MVC runs, rendered as the contract's JSON. Reached only by
 * Tomcat's error dispatch: a client's own {@code GET /error} is an unknown path
 * ({@link RequestTargetFilter}).
 */
@RestController
class TomcatErrorController implements ErrorController {
    /**
     * Tomcat's error page: a request its parser or limits refused (400, 414, 431 and the like) is
     * forwarded here with the status it chose. 400 and 414 get the contract's JSON, 431 too; any
     * other status keeps Tomcat's choice with the closest row's text.
     */
    @RequestMapping("/error")
    ResponseEntity<Error> error(HttpServletRequest request) {
        Object code = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
        int status = code instanceof Integer c && HttpStatus.resolve(c) != null ? c : 500;
        AppError error = forTomcatStatus(status);
        return ResponseEntity.status(status)
                .contentType(MediaType.APPLICATION_JSON)
                .body(new Error(error.getMessage()));
    }

    /**
     * The contract's row for a status Tomcat chose itself before Spring MVC ran (its parser, its
     * limits, its error page): 414, 431, 404 and 405 their own rows, any other 4xx the malformed
     * request, anything else the unexpected error.
     */
    static AppError forTomcatStatus(int status) {
        return switch (HttpStatus.resolve(status)) {
            case URI_TOO_LONG -> AppError.uriTooLong();
            case REQUEST_HEADER_FIELDS_TOO_LARGE -> AppError.headerTooLarge();
            case NOT_FOUND -> AppError.noSuchResource();
            case METHOD_NOT_ALLOWED -> AppError.methodNotAllowed();
            case null, default -> status >= 400 && status < 500 ? AppError.malformed() : AppError.internal();
        };
    }
}
