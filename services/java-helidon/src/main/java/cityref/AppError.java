package cityref;

import io.helidon.http.Status;

/**
 * Every non-2xx answer of the service: its status and its fixed message (the spec's table).
 * Thrown from filters and handlers, rendered by the routing's error handler ({@link Transport}).
 */
public final class AppError extends RuntimeException {
    @java.io.Serial
    private static final long serialVersionUID = 1L;

    private final transient Status status;

    private AppError(Status status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    public Status status() {
        return status;
    }

    public static AppError badRequest(String problems) {
        return new AppError(Status.BAD_REQUEST_400, "Bad Request: " + problems);
    }

    public static AppError cityNotFound(long id) {
        return new AppError(Status.NOT_FOUND_404, "Not Found: City#" + id + " not found.");
    }

    public static AppError noSuchResource() {
        return new AppError(Status.NOT_FOUND_404, "Not Found: no such resource.");
    }

    public static AppError methodNotAllowed() {
        return new AppError(Status.METHOD_NOT_ALLOWED_405, "Method Not Allowed: use GET.");
    }

    public static AppError uriTooLong() {
        return new AppError(Status.REQUEST_URI_TOO_LONG_414, "URI Too Long: request target exceeds 8192 bytes.");
    }

    public static AppError cityMalformed(long id) {
        return new AppError(Status.INTERNAL_SERVER_ERROR_500, "Internal Server Error: City#" + id + " is malformed.");
    }

    public static AppError cityNameMissing(long id, String language) {
        return new AppError(
                Status.INTERNAL_SERVER_ERROR_500,
                "Internal Server Error: City#" + id + " has no name in '" + language + "'.");
    }

    public static AppError regionNotFound(long regionId, long cityId) {
        return new AppError(
                Status.INTERNAL_SERVER_ERROR_500,
                "Internal Server Error: Region#" + regionId + " of City#" + cityId + " not found.");
    }

    public static AppError regionNameMissing(long regionId, String language) {
        return new AppError(
                Status.INTERNAL_SERVER_ERROR_500,
                "Internal Server Error: Region#" + regionId + " has no name in '" + language + "'.");
    }

    public static AppError unavailable() {
        return new AppError(Status.SERVICE_UNAVAILABLE_503, "Service Unavailable: search backend unavailable.");
    }

    public static AppError timeout() {
        return new AppError(Status.GATEWAY_TIMEOUT_504, "Gateway Timeout: search backend timed out.");
    }

    /** Not in the contract's table: a bug of this service, never expected. */
    public static AppError internal() {
        return new AppError(Status.INTERNAL_SERVER_ERROR_500, "Internal Server Error: unexpected error.");
    }

    /** The spec's answer to a request the HTTP layer cannot accept (Helidon's own 400s, Transport). */
    public static AppError malformed() {
        return new AppError(Status.BAD_REQUEST_400, "Bad Request: malformed request.");
    }
}
