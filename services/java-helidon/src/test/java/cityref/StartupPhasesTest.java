package cityref;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class StartupPhasesTest {
    private static Map<String, Long> fields(StartupPhases phases) {
        return phases.fields();
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    @Test
    void aPhaseInTwoPartsIsTheirSum() {
        StartupPhases phases = new StartupPhases();
        long built = System.nanoTime();
        sleep(20);
        phases.record("server", built);
        sleep(300); // the wait for the startup check: not the server's
        long listen = System.nanoTime();
        sleep(20);
        phases.record("server", listen);
        long server = fields(phases).get("server_ms");
        assertTrue(server >= 40, "both parts counted: " + server);
        assertTrue(server < 300, "the gap between the parts not counted: " + server);
    }

    @Test
    void sequentialPhasesAddUpToAtMostTheStartup() throws Exception {
        StartupPhases phases = new StartupPhases();
        long config = System.nanoTime();
        sleep(20);
        phases.record("config", config);
        phases.time("elasticsearch_client", () -> {
            sleep(20);
            return null;
        });
        long server = System.nanoTime();
        sleep(20);
        phases.record("server", server);
        Map<String, Long> f = fields(phases);
        long sum = f.get("config_ms") + f.get("elasticsearch_client_ms") + f.get("server_ms");
        assertTrue(sum >= 60, "each phase recorded: " + f);
        assertTrue(sum <= f.get("startup_ms"), "phases in sequence cannot exceed the startup: " + f);
        assertEquals(4, f.size(), "only recorded phases and startup_ms: " + f);
    }
}
