package cityref;

import org.apache.catalina.core.StandardHost;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.stereotype.Component;

/**
 * Tomcat's settings that application.properties cannot hold: the port is the validated
 * {@code PORT} ({@link Config}), TRACE reaches the application ({@link RequestTargetFilter} answers
 * it; Tomcat's connector refuses it with its own 405 by default, before routing, also on unknown
 * paths), and the host's error report is {@link JsonErrorReportValve}.
 */
@Component
class TomcatConfiguration implements WebServerFactoryCustomizer<TomcatServletWebServerFactory> {
    private final Config config;

    TomcatConfiguration(Config config) {
        this.config = config;
    }

    @Override
    public void customize(TomcatServletWebServerFactory factory) {
        factory.setPort(config.port());
        factory.addConnectorCustomizers(connector -> connector.setAllowTrace(true));
        factory.addContextCustomizers(context -> {
            if (context.getParent() instanceof StandardHost host) {
                host.setErrorReportValveClass(JsonErrorReportValve.class.getName());
            }
        });
    }
}
