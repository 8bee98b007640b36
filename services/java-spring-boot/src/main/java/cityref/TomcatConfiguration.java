package cityref;

import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import org.apache.catalina.core.StandardHost;
import org.springframework.boot.tomcat.autoconfigure.TomcatServerProperties;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.core.Ordered;
import org.springframework.stereotype.Component;

/**
 * Tomcat's settings that application.properties cannot hold: the port is the validated
 * {@code PORT} ({@link Config}), TRACE reaches the application ({@link RequestTargetFilter} answers
 * it; Tomcat's connector refuses it with its own 405 by default, before routing, also on unknown
 * paths), the host's error report is {@link JsonErrorReportValve}, and Tomcat's virtual-thread
 * executor runs at most {@code server.tomcat.threads.max} requests at once ({@link Bounded}).
 * Ordered last, after Boot's own virtual-thread customizer has set that executor.
 */
@Component
class TomcatConfiguration implements WebServerFactoryCustomizer<TomcatServletWebServerFactory>, Ordered {
    private final Config config;
    private final int maxThreads;

    TomcatConfiguration(Config config, TomcatServerProperties tomcat) {
        this.config = config;
        this.maxThreads = tomcat.getThreads().getMax();
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
        factory.addProtocolHandlerCustomizers(handler -> {
            if (handler.getExecutor() != null) { // Boot's virtual-thread executor (spring.threads.virtual.enabled)
                handler.setExecutor(new Bounded(handler.getExecutor(), maxThreads));
            }
        });
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }

    /**
     * Tomcat's executor with at most {@code max} tasks running: each task still gets its own virtual
     * thread from Tomcat's {@code VirtualThreadExecutor}, which first waits for a permit. Tomcat takes
     * a connection's processor and its buffers inside the task, so a waiting request holds only its
     * parked virtual thread, as a queued task of Tomcat's platform-thread pool holds nothing; the
     * semaphore is how the JDK's guide to virtual threads limits concurrency (never a pool of them).
     * The task runs with {@link Arrival} bound to when Tomcat handed it over, so that the wait for a
     * carrier thread and for a permit counts against its first request's Elasticsearch deadline
     * ({@link RequestTargetFilter} marks each request's start; README.md, Late 504s under load).
     */
    static final class Bounded implements Executor {
        private final Executor threads;
        private final Semaphore running;

        Bounded(Executor threads, int max) {
            this.threads = threads;
            this.running = new Semaphore(max);
        }

        @Override
        public void execute(Runnable task) {
            long submitted = System.nanoTime();
            threads.execute(() -> {
                running.acquireUninterruptibly();
                try {
                    Arrival.run(submitted, task);
                } finally {
                    running.release();
                }
            });
        }
    }
}
