package cityref;

/**
 * When the server took a request over, for the deadline of the request's first Elasticsearch
 * request (the spec: from the moment the service needs it, so the wait for a thread to run the
 * request on is included). A server whose requests wait to be run binds one per task where it
 * hands the task over ({@link #run}) and marks the start of each request the task runs
 * ({@link #requestStarts}): a task can run several requests of one connection in turn (pipelined),
 * and only the first of them waited for the hand-over. Unbound, the clock starts at the call.
 */
public final class Arrival {
    private static final ScopedValue<Arrival> TASK = ScopedValue.newInstance();

    private final long handedOver;
    private long nanos;
    private boolean started;

    private Arrival(long handedOver) {
        this.handedOver = handedOver;
        this.nanos = handedOver;
    }

    /** Runs {@code task}, handed over at {@code handedOver} ({@link System#nanoTime()}), with its arrival bound. */
    public static void run(long handedOver, Runnable task) {
        ScopedValue.where(TASK, new Arrival(handedOver)).run(task);
    }

    /**
     * A request of the current task starts: the task's first is due from the hand-over, every
     * later one from now. The requests of one task run one after another on its thread.
     */
    public static void requestStarts() {
        if (TASK.isBound()) {
            Arrival arrival = TASK.get();
            arrival.nanos = arrival.started ? System.nanoTime() : arrival.handedOver;
            arrival.started = true;
        }
    }

    /** The current request's arrival, or now. */
    static long nanos() {
        return TASK.isBound() ? TASK.get().nanos : System.nanoTime();
    }
}
