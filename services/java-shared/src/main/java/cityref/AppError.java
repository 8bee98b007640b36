package cityref;

/**
 * Every non-2xx answer of the service: its status code and its fixed message (the spec's table).
 * Thrown anywhere below the transport, which renders it with its framework's own status type.
 */
public final class AppError extends RuntimeException {
    @java.io.Serial
    private static final long serialVersionUID = 1L;

    private final int status;

    private AppError(int status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    /** The status code. */
    public int status() {
        return status;
    }

    public static AppError badRequest(String problems) {
        return new AppError(400, "Bad Request: " + problems);
    }

    public static AppError cityNotFound(long id) {
        return new AppError(404, "Not Found: City#" + id + " not found.");
    }

    public static AppError noSuchResource() {
        return new AppError(404, "Not Found: no such resource.");
    }

    public static AppError methodNotAllowed() {
        return new AppError(405, "Method Not Allowed: use GET.");
    }

    public static AppError uriTooLong() {
        return new AppError(414, "URI Too Long: request target exceeds 8192 bytes.");
    }

    public static AppError cityMalformed(long id) {
        return new AppError(500, "Internal Server Error: City#" + id + " is malformed.");
    }

    public static AppError cityNameMissing(long id, String language) {
        return new AppError(
                500,
                "Internal Server Error: City#" + id + " has no name in '" + language + "'.");
    }

    public static AppError regionNotFound(long regionId, long cityId) {
        return new AppError(
                500,
                "Internal Server Error: Region#" + regionId + " of City#" + cityId + " not found.");
    }

    public static AppError regionNameMissing(long regionId, String language) {
        return new AppError(
                500,
                "Internal Server Error: Region#" + regionId + " has no name in '" + language + "'.");
    }

    public static AppError unavailable() {
        return new AppError(503, "Service Unavailable: search backend unavailable.");
    }

    public static AppError timeout() {
        return new AppError(504, "Gateway Timeout: search backend timed out.");
    }

    /** Not in the contract's table: a bug of this service, never expected. */
    public static AppError internal() {
        return new AppError(500, "Internal Server Error: unexpected error.");
    }

    /** The spec's *framework* row: a request the framework's own parser refuses. */
    public static AppError malformed() {
        return new AppError(400, "Bad Request: malformed request.");
    }

    /** The spec's answer to a header section over the limit, where the framework reports one. */
    public static AppError headerTooLarge() {
        return new AppError(
                431,
                "Request Header Fields Too Large: header section exceeds 65536 bytes.");
    }
}
