package cityref;

import org.springframework.http.HttpStatus;

/**
 * Every non-2xx answer of the service: its status and its fixed message (the spec's table). Thrown
 * anywhere below the controller, rendered by {@link ErrorAdvice}.
 */
public final class AppError extends RuntimeException {
    @java.io.Serial
    private static final long serialVersionUID = 1L;

    private final HttpStatus status;

    private AppError(HttpStatus status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    public HttpStatus status() {
        return status;
    }

    public static AppError badRequest(String problems) {
        return new AppError(HttpStatus.BAD_REQUEST, "Bad Request: " + problems);
    }

    public static AppError cityNotFound(long id) {
        return new AppError(HttpStatus.NOT_FOUND, "Not Found: City#" + id + " not found.");
    }

    public static AppError noSuchResource() {
        return new AppError(HttpStatus.NOT_FOUND, "Not Found: no such resource.");
    }

    public static AppError methodNotAllowed() {
        return new AppError(HttpStatus.METHOD_NOT_ALLOWED, "Method Not Allowed: use GET.");
    }

    public static AppError uriTooLong() {
        return new AppError(HttpStatus.URI_TOO_LONG, "URI Too Long: request target exceeds 8192 bytes.");
    }

    public static AppError cityMalformed(long id) {
        return new AppError(HttpStatus.INTERNAL_SERVER_ERROR, "Internal Server Error: City#" + id + " is malformed.");
    }

    public static AppError cityNameMissing(long id, String language) {
        return new AppError(
                HttpStatus.INTERNAL_SERVER_ERROR,
                "Internal Server Error: City#" + id + " has no name in '" + language + "'.");
    }

    public static AppError regionNotFound(long regionId, long cityId) {
        return new AppError(
                HttpStatus.INTERNAL_SERVER_ERROR,
                "Internal Server Error: Region#" + regionId + " of City#" + cityId + " not found.");
    }

    public static AppError regionNameMissing(long regionId, String language) {
        return new AppError(
                HttpStatus.INTERNAL_SERVER_ERROR,
                "Internal Server Error: Region#" + regionId + " has no name in '" + language + "'.");
    }

    public static AppError unavailable() {
        return new AppError(HttpStatus.SERVICE_UNAVAILABLE, "Service Unavailable: search backend unavailable.");
    }

    public static AppError timeout() {
        return new AppError(HttpStatus.GATEWAY_TIMEOUT, "Gateway Timeout: search backend timed out.");
    }

    /** Not in the contract's table: a bug of this service, never expected. */
    public static AppError internal() {
        return new AppError(HttpStatus.INTERNAL_SERVER_ERROR, "Internal Server Error: unexpected error.");
    }

    /** The spec's answer to a request Tomcat's parser refuses (rendered by {@link ErrorAdvice#error}). */
    public static AppError malformed() {
        return new AppError(HttpStatus.BAD_REQUEST, "Bad Request: malformed request.");
    }

    /**
     * The contract's row for a status Tomcat chose itself before Spring MVC ran (its parser, its
     * limits, its error page): 414, 431, 404 and 405 their own rows, any other 4xx the malformed
     * request, anything else the unexpected error.
     */
    public static AppError forTomcatStatus(int status) {
        return switch (HttpStatus.resolve(status)) {
            case URI_TOO_LONG -> uriTooLong();
            case REQUEST_HEADER_FIELDS_TOO_LARGE -> headerTooLarge();
            case NOT_FOUND -> noSuchResource();
            case METHOD_NOT_ALLOWED -> methodNotAllowed();
            case null, default -> status >= 400 && status < 500 ? malformed() : internal();
        };
    }

    /** The spec's answer to a header section over the limit, where Tomcat reports one. */
    public static AppError headerTooLarge() {
        return new AppError(
                HttpStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                "Request Header Fields Too Large: header section exceeds 65536 bytes.");
    }
}
