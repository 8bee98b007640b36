package cityref

import ch.qos.logback.classic.Level
import ch.qos.logback.classic.spi.ILoggingEvent
import com.fasterxml.jackson.core.JsonGenerator
import net.logstash.logback.composite.loggingevent.LogLevelJsonProvider

/**
 * logstash-logback-encoder's `level` field in lower case, as the spec's log lines have it
 * (`info`, not `INFO`): the encoder has no option for the case, so this provider, registered in
 * logback.xml, overrides the one method that writes the field. Everything else on the line comes
 * from the encoder's own providers.
 */
class LowerCaseLevelJsonProvider : LogLevelJsonProvider() {
    override fun writeTo(generator: JsonGenerator, event: ILoggingEvent) {
        generator.writeStringField(fieldName, lowerCase(event.level))
    }

    private companion object {
        fun lowerCase(level: Level): String = when (level.levelInt) {
            Level.ERROR_INT -> "error"
            Level.WARN_INT -> "warn"
            Level.INFO_INT -> "info"
            Level.DEBUG_INT -> "debug"
            Level.TRACE_INT -> "trace"
            else -> level.levelStr.lowercase()
        }
    }
}
