package cityref;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.springframework.boot.context.metrics.buffering.BufferingApplicationStartup;
import org.springframework.boot.context.metrics.buffering.StartupTimeline;

/**
 * How long each startup phase took, in milliseconds, for the "listening" log line: {@code <phase>_ms}
 * per phase and {@code startup_ms} from {@code main()} to listening. Bean phases come from Spring's
 * own startup recording ({@link BufferingApplicationStartup}, the data of the startup actuator
 * endpoint, which stays off): {@code config} is the {@link Config} bean, {@code elasticsearch_client}
 * the {@link CityRepository} bean (the client built, and with tracing on the OpenTelemetry SDK it is
 * given, when that is made first). {@code health_check} is timed by {@link StartupCheck}, and {@code server} is
 * Spring's whole start, from {@code main()} to Tomcat listening (the other phases inside it).
 * Dockerfiles/README.md's startup budget is read from these fields.
 */
final class StartupPhases {
    private static final List<String> ORDER = List.of("config", "elasticsearch_client", "health_check", "server");
    /** Bean name (Application's bean methods) → phase. */
    private static final Map<String, String> BEANS = Map.of(
            "config", "config",
            "cityRepository", "elasticsearch_client");

    private static final Map<String, Long> PHASES = new ConcurrentHashMap<>();
    private static final long ORIGIN = System.nanoTime();
    private static BufferingApplicationStartup startup;

    private StartupPhases() {}

    /** The recorder for {@code SpringApplication}, made in {@code main()}. */
    static BufferingApplicationStartup begin() {
        startup = new BufferingApplicationStartup(4096);
        return startup;
    }

    /** Milliseconds since {@code main()} began (this class is initialised there). */
    static long sinceMainMs() {
        return (System.nanoTime() - ORIGIN) / 1_000_000;
    }

    /** Runs {@code block} as the phase {@code name} and records its duration. */
    static <T> T time(String name, Supplier<T> block) {
        long start = System.nanoTime();
        try {
            return block.get();
        } finally {
            PHASES.put(name, (System.nanoTime() - start) / 1_000_000);
        }
    }

    /**
     * The key-value pairs of the log line, Tomcat listening now: each phase, then the whole startup.
     * Spring's recording is drained (and stops growing).
     */
    static List<Map.Entry<String, Long>> listening() {
        long sinceMain = sinceMainMs();
        PHASES.put("server", sinceMain);
        if (startup != null) {
            StartupTimeline timeline = startup.drainBufferedTimeline();
            for (StartupTimeline.TimelineEvent event : timeline.getEvents()) {
                for (var tag : event.getStartupStep().getTags()) {
                    String phase = tag.getKey().equals("beanName") ? BEANS.get(tag.getValue()) : null;
                    if (phase != null) {
                        PHASES.merge(phase, event.getDuration().toMillis(), Math::max);
                    }
                }
            }
            startup.addFilter(step -> false);
        }
        List<Map.Entry<String, Long>> out = new ArrayList<>();
        for (String name : ORDER) {
            Long ms = PHASES.get(name);
            if (ms != null) {
                out.add(Map.entry(name + "_ms", ms));
            }
        }
        out.add(Map.entry("startup_ms", sinceMain));
        return out;
    }
}
