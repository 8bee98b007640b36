package cityref;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How long each startup phase took, in milliseconds from {@code main()} ({@link System#nanoTime}),
 * for the "listening" log line: {@code <phase>_ms} per phase and {@code startup_ms} from
 * {@code main()} to listening. Phases may overlap, so they need not add up to {@code startup_ms}.
 * Dockerfiles/README.md's startup budget is read from these fields.
 */
final class StartupPhases {
    private static final List<String> ORDER = List.of("config", "elasticsearch_client", "health_check", "server");
    private final long origin = System.nanoTime();
    private final Map<String, Long> phases = new ConcurrentHashMap<>();

    /** Runs {@code block} as the phase {@code name} and records its duration. */
    <T> T time(String name, Callable<T> block) throws Exception {
        long start = System.nanoTime();
        try {
            return block.call();
        } finally {
            record(name, start);
        }
    }

    /**
     * Adds the time from {@code start} (a {@link System#nanoTime}) to now to the phase {@code name}: a
     * phase may come in parts ({@code server}: built, then listening, with the startup check's result
     * awaited between them), as in the Kotlin services' StartupPhases.
     */
    void record(String name, long start) {
        phases.merge(name, (System.nanoTime() - start) / 1_000_000, Long::sum);
    }

    /** The fields of the log line, in order: each recorded phase, then the whole startup so far. */
    Map<String, Long> fields() {
        Map<String, Long> out = new LinkedHashMap<>();
        for (String name : ORDER) {
            Long ms = phases.get(name);
            if (ms != null) {
                out.put(name + "_ms", ms);
            }
        }
        out.put("startup_ms", (System.nanoTime() - origin) / 1_000_000);
        return out;
    }
}
