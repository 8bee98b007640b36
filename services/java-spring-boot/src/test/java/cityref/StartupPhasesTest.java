package cityref;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The listening line's phases: the application started as {@code main()} starts it (Spring's startup
 * recording on) names every phase, so that a renamed bean cannot silently drop one.
 */
class StartupPhasesTest {
    @Test
    void everyPhaseIsTimed() throws IOException {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        try (var elasticsearch = new ElasticsearchStandIn()) {
            SpringApplication application = new SpringApplication(Application.class);
            application.setApplicationStartup(StartupPhases.begin());
            try (ConfigurableApplicationContext context =
                    application.run("--PORT=" + port, "--ELASTICSEARCH_URL=" + elasticsearch.url())) {
                assertTrue(context.isRunning());
                List<String> keys = StartupPhases.listening().stream()
                        .map(Map.Entry::getKey)
                        .toList();
                assertEquals(
                        List.of("config_ms", "elasticsearch_client_ms", "health_check_ms", "server_ms", "startup_ms"),
                        keys);
            }
        }
    }
}
