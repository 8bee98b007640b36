package cityref;

import java.nio.charset.StandardCharsets;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;
import org.springframework.context.annotation.Bean;

/**
 * The application: Spring Boot's auto-configuration and this package's components, the validated
 * {@link Config}, the spec's health check mode, and SIGTERM/SIGINT ending in exit status 0.
 */
@SpringBootApplication(proxyBeanMethods = false)
@ConfigurationPropertiesScan
public class Application {
    public static void main(String[] args) {
        if (args.length == 1 && args[0].equals("healthcheck")) {
            System.exit(healthcheck());
        }
        // SIGTERM/SIGINT become System.exit(0) from the first moment: Spring Boot's own shutdown hook
        // then closes the context (graceful: Tomcat stops accepting and lets requests in flight
        // finish, server.shutdown), and the JVM exits 0 as the spec asks, not 143 or 130 as it does
        // when a signal starts the shutdown hooks itself. Installed before the start, so that a signal
        // that comes as soon as Tomcat listens, before run() returns, is handled the same way.
        ShutdownSignals.onTermOrInt(() -> Thread.ofPlatform().name("shutdown").start(() -> System.exit(0)));
        SpringApplication application = new SpringApplication(Application.class);
        application.setApplicationStartup(StartupPhases.begin());
        try {
            application.run(args);
        } catch (SpringApplication.AbandonedRunException e) {
            throw e; // the build's AOT processing stops the run here on purpose
        } catch (Throwable e) {
            // Spring has logged why (StartupFailureAnalyzer); never linger half-started.
            System.exit(1);
        }
    }

    /** The configuration, validated once; an invalid variable stops the startup (StartupFailureAnalyzer). */
    @Bean
    Config config(Config.Properties properties) {
        return Config.load(properties.asEnvironment());
    }

    /**
     * The spec's health check mode: {@code GET /health} on 127.0.0.1:{@code PORT} (8080 when unset
     * or invalid), 0 for a 200 within 2 s, else 1. For {@code HEALTHCHECK} in an image with no
     * shell or curl; plain sockets, so that it loads almost nothing besides {@code java.base}.
     */
    static int healthcheck() {
        int port = 8080;
        try {
            int p = Integer.parseInt(System.getenv().getOrDefault("PORT", ""));
            if (p >= 1 && p <= 65535) {
                port = p;
            }
        } catch (NumberFormatException e) {
            // the default
        }
        try (java.net.Socket socket = new java.net.Socket()) {
            socket.connect(new java.net.InetSocketAddress("127.0.0.1", port), 2000);
            socket.setSoTimeout(2000);
            socket.getOutputStream()
                    .write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                            .getBytes(StandardCharsets.US_ASCII));
            String head = new String(socket.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
            return head.equals("HTTP/1.1 200") ? 0 : 1;
        } catch (java.io.IOException e) {
            return 1;
        }
    }
}
