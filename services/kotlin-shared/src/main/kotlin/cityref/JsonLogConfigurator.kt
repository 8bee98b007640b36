package cityref

import ch.qos.logback.classic.Level
import ch.qos.logback.classic.LoggerContext
import ch.qos.logback.classic.spi.Configurator
import ch.qos.logback.classic.spi.ILoggingEvent
import ch.qos.logback.core.ConsoleAppender
import ch.qos.logback.core.spi.ContextAwareBase
import ch.qos.logback.core.status.NopStatusListener
import net.logstash.logback.composite.loggingevent.KeyValuePairsJsonProvider
import net.logstash.logback.composite.loggingevent.LoggerNameJsonProvider
import net.logstash.logback.composite.loggingevent.LoggingEventFormattedTimestampJsonProvider
import net.logstash.logback.composite.loggingevent.LoggingEventJsonProviders
import net.logstash.logback.composite.loggingevent.MessageJsonProvider
import net.logstash.logback.composite.loggingevent.StackTraceJsonProvider
import net.logstash.logback.encoder.LoggingEventCompositeJsonEncoder
import net.logstash.logback.stacktrace.ShortenedThrowableConverter
import org.slf4j.Logger
import org.slf4j.LoggerFactory

/**
 * The services' logging, configured in code through logback's Configurator SPI
 * (META-INF/services/ch.qos.logback.classic.spi.Configurator) rather than a logback.xml: one JSON
 * object per line on stdout (logstash-logback-encoder's composite encoder) with the spec's `ts`
 * (RFC 3339, UTC, milliseconds), `level` (lower case), `msg`, the event's SLF4J key-value pairs
 * (numbers and booleans stay JSON numbers and booleans), the logger, and a short stack trace for a
 * throwable. The root level is INFO until main() applies LOG_LEVEL.
 *
 * Why code: parsing and interpreting the XML (Joran) took 70–85 ms of each Kotlin service's
 * startup even with the AOT cache (Dockerfiles/README.md, startup budget). logback asks the
 * Configurators it finds this way before its own XML one, so this one steps aside when an XML
 * configuration is there: a logback.xml or logback-test.xml on the class path (the tests' one),
 * or -Dlogback.configurationFile.
 */
class JsonLogConfigurator :
    ContextAwareBase(),
    Configurator {
    override fun configure(context: LoggerContext): Configurator.ExecutionStatus {
        if (System.getProperty("logback.configurationFile") != null ||
            XML_FILES.any { javaClass.classLoader.getResource(it) != null }
        ) {
            return Configurator.ExecutionStatus.INVOKE_NEXT_IF_ANY
        }
        context.statusManager.add(NopStatusListener())
        val providers =
            LoggingEventJsonProviders().apply {
                addTimestamp(
                    LoggingEventFormattedTimestampJsonProvider().apply {
                        fieldName = "ts"
                        setPattern("yyyy-MM-dd'T'HH:mm:ss.SSSXXX")
                        setTimeZone("UTC")
                    },
                )
                addLogLevel(LowerCaseLevelJsonProvider())
                addMessage(MessageJsonProvider().apply { fieldName = "msg" })
                addKeyValuePairs(KeyValuePairsJsonProvider())
                addLoggerName(LoggerNameJsonProvider().apply { fieldName = "logger" })
                addStackTrace(
                    StackTraceJsonProvider().apply {
                        fieldName = "exception"
                        setThrowableConverter(
                            ShortenedThrowableConverter().apply {
                                maxDepthPerThrowable = 8
                                isRootCauseFirst = true
                            },
                        )
                    },
                )
            }
        val encoder =
            LoggingEventCompositeJsonEncoder().apply {
                this.context = context
                this.providers = providers
                start()
            }
        val stdout =
            ConsoleAppender<ILoggingEvent>().apply {
                this.context = context
                name = "STDOUT"
                this.encoder = encoder
                start()
            }
        context.getLogger(Logger.ROOT_LOGGER_NAME).apply {
            level = Level.INFO
            addAppender(stdout)
        }
        // The libraries' own chatter: warnings and errors only, whatever LOG_LEVEL says.
        for (name in QUIET) context.getLogger(name).level = Level.WARN
        return Configurator.ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY
    }

    private companion object {
        val XML_FILES = listOf("logback-test.xml", "logback.xml")
        val QUIET = listOf("io.netty", "org.eclipse.jetty", "io.helidon", "org.apache.http", "org.elasticsearch.client")
    }
}

/**
 * Applies LOG_LEVEL (`error`, `warn`, `info`, `debug`) to the root logger. The first call into
 * SLF4J is where logback configures itself (through [JsonLogConfigurator]).
 */
fun applyLogLevel(level: String) {
    (LoggerFactory.getILoggerFactory() as LoggerContext).getLogger(Logger.ROOT_LOGGER_NAME).level =
        Level.toLevel(level.uppercase())
}
