package cityref;

/**
 * When the server took the request over from its connection, for the deadline of the request's
 * first Elasticsearch request (the spec: from the moment the service needs it, so the wait for a
 * thread to run the request on is included). A server whose requests wait to be run binds it
 * where it hands them over (java-spring-boot's Tomcat executor); elsewhere the clock starts at
 * the call.
 */
public final class Arrival {
    /** {@link System#nanoTime()} when the request was handed to the thread that runs it. */
    public static final ScopedValue<Long> NANOS = ScopedValue.newInstance();

    private Arrival() {}

    /** The bound arrival, or now. */
    static long nanos() {
        return NANOS.isBound() ? NANOS.get() : System.nanoTime();
    }
}
