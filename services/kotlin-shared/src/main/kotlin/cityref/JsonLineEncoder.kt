package cityref

import ch.qos.logback.classic.spi.ILoggingEvent
import ch.qos.logback.core.encoder.EncoderBase
import java.time.Instant
import java.time.ZoneOffset
import java.time.format.DateTimeFormatter

/**
 * Logback encoder: one compact JSON object per line with `ts` (RFC 3339, UTC, milliseconds),
 * `level` (lower case), `msg`, the event's SLF4J key-value pairs (numbers and booleans as JSON
 * numbers and booleans) and, for a throwable, `error`.
 */
class JsonLineEncoder : EncoderBase<ILoggingEvent>() {
    override fun headerBytes(): ByteArray? = null
    override fun footerBytes(): ByteArray? = null

    override fun encode(event: ILoggingEvent): ByteArray {
        val out = StringBuilder(256)
        out.append("{\"ts\":\"").append(TS.format(Instant.ofEpochMilli(event.timeStamp))).append('"')
        out.append(",\"level\":\"").append(event.level.toString().lowercase()).append('"')
        out.append(",\"msg\":")
        quote(out, event.formattedMessage ?: "")
        event.keyValuePairs?.forEach { pair ->
            out.append(',')
            quote(out, pair.key)
            out.append(':')
            when (val v = pair.value) {
                null -> out.append("null")
                is Int, is Long, is Short, is Byte -> out.append(v.toString())
                is Double -> if (v.isFinite()) out.append(v.toString()) else quote(out, v.toString())
                is Float -> if (v.isFinite()) out.append(v.toString()) else quote(out, v.toString())
                is Boolean -> out.append(v.toString())
                else -> quote(out, v.toString())
            }
        }
        if (event.loggerName != null && !event.loggerName.startsWith("cityref")) {
            out.append(",\"logger\":")
            quote(out, event.loggerName)
        }
        event.throwableProxy?.let {
            out.append(",\"error\":")
            quote(out, "${it.className}: ${it.message ?: ""}")
        }
        out.append("}\n")
        return out.toString().toByteArray(Charsets.UTF_8)
    }

    private companion object {
        val TS: DateTimeFormatter = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSXXX").withZone(ZoneOffset.UTC)

        fun quote(out: StringBuilder, s: String) {
            out.append('"')
            for (c in s) {
                when {
                    c == '"' -> out.append("\\\"")
                    c == '\\' -> out.append("\\\\")
                    c == '\n' -> out.append("\\n")
                    c == '\r' -> out.append("\\r")
                    c == '\t' -> out.append("\\t")
                    c < ' ' || c in '\u2028'..'\u2029' -> out.append("\\u%04x".format(c.code))
                    c.isSurrogate() -> out.append("\\u%04x".format(c.code)) // lone or paired: always valid JSON
                    else -> out.append(c)
                }
            }
            out.append('"')
        }
    }
}
