package cityref;

import cityref.generated.model.Error;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.HttpMediaTypeNotAcceptableException;
import org.springframework.web.HttpRequestMethodNotSupportedException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.servlet.NoHandlerFoundException;
import org.springframework.web.servlet.resource.NoResourceFoundException;

/**
 * The error contract: every {@link AppError} as {@code {"message":...}} with its status, and the
 * few answers Spring MVC decides itself, mapped onto the spec's rows. What Tomcat refuses before
 * Spring MVC runs is {@link TomcatErrorController}'s.
 */
@RestControllerAdvice
class ErrorAdvice {
    private static final Logger LOG = LoggerFactory.getLogger(ErrorAdvice.class);

    @ExceptionHandler(AppError.class)
    ResponseEntity<Error> appError(AppError error) {
        return render(error);
    }

    @ExceptionHandler(HttpRequestMethodNotSupportedException.class)
    ResponseEntity<Error> methodNotSupported() {
        return render(AppError.methodNotAllowed());
    }

    @ExceptionHandler({NoHandlerFoundException.class, NoResourceFoundException.class})
    ResponseEntity<Error> noHandler() {
        return render(AppError.noSuchResource());
    }

    /**
     * Actuator's endpoints ({@code /health}, {@code /metrics}) negotiate their type from
     * {@code Accept} (the controllers' answers name theirs): a request that accepts none of them gets
     * Spring's 406, with the contract's JSON body.
     */
    @ExceptionHandler(HttpMediaTypeNotAcceptableException.class)
    ResponseEntity<Error> notAcceptable() {
        return ResponseEntity.status(HttpStatus.NOT_ACCEPTABLE)
                .contentType(MediaType.APPLICATION_JSON)
                .body(new Error("Not Acceptable: no answer in an accepted type."));
    }

    @ExceptionHandler(Exception.class)
    ResponseEntity<Error> unexpected(Exception e) {
        LOG.error("unhandled error", e);
        return render(AppError.internal());
    }

    /** An {@link AppError} as the contract's {@code {"message":...}} body (405 with {@code Allow}). */
    static ResponseEntity<Error> render(AppError error) {
        ResponseEntity.BodyBuilder answer =
                ResponseEntity.status(error.status()).contentType(MediaType.APPLICATION_JSON);
        if (error.status() == HttpStatus.METHOD_NOT_ALLOWED.value()) {
            answer.header(HttpHeaders.ALLOW, "GET, HEAD");
        }
        return answer.body(new Error(error.getMessage()));
    }
}
