package cityref

import cityref.generated.models.Language
import java.nio.ByteBuffer
import java.nio.charset.CharacterCodingException
import java.nio.charset.CodingErrorAction

/** A valid `/city/v1/get` query. */
data class CityQuery(
    val id: Long,
    val language: Language,
)

private const val ID_RULE = "an integer from 1 to 9223372036854775807"
private const val LANGUAGE_RULE = "one of: cs, de, en, pl, sk"

/**
 * Parses the raw query string (`application/x-www-form-urlencoded`, strictly percent-decoded;
 * Ktor's own parameter decoding is lenient) and reports every problem at once: `id` first,
 * then `language`; per parameter the first of missing, given more than once, invalid value.
 */
fun parseCityQuery(rawQuery: String): CityQuery {
    // Each occurrence's decoded value; null when it does not decode.
    val ids = mutableListOf<String?>()
    val languages = mutableListOf<String?>()
    for (pair in rawQuery.split('&')) {
        if (pair.isEmpty()) continue
        val eq = pair.indexOf('=')
        val name = if (eq < 0) pair else pair.substring(0, eq)
        val value = if (eq < 0) "" else pair.substring(eq + 1)
        // A name that does not decode matches no parameter, like any unknown name.
        when (formDecode(name)) {
            "id" -> ids += formDecode(value)
            "language" -> languages += formDecode(value)
        }
    }
    val id = single("id", ids, ID_RULE, ::parseId)
    val language = single("language", languages, LANGUAGE_RULE, ::parseLanguage)
    val problems = listOfNotNull(id.exceptionOrNull()?.message, language.exceptionOrNull()?.message)
    if (problems.isNotEmpty()) throw AppError.BadRequest(problems.joinToString("; "))
    return CityQuery(id.getOrThrow(), language.getOrThrow())
}

private fun <T : Any> single(
    name: String,
    values: List<String?>,
    rule: String,
    parse: (String) -> T?,
): Result<T> =
    when (values.size) {
        0 -> {
            Result.failure(IllegalArgumentException("parameter '$name' is missing"))
        }

        1 -> {
            values[0]?.let(parse)?.let { Result.success(it) }
                ?: Result.failure(IllegalArgumentException("parameter '$name' must be $rule"))
        }

        else -> {
            Result.failure(IllegalArgumentException("parameter '$name' is given more than once"))
        }
    }

/** ASCII digits only (leading zeros allowed), 1 to Long.MAX_VALUE. */
fun parseId(value: String): Long? {
    if (value.isEmpty() || !value.all { it in '0'..'9' }) return null // also rejects `+`/`-`
    val digits = value.trimStart('0')
    if (digits.length > 19) return null
    return digits.toLongOrNull()?.takeIf { it >= 1 }
}

/** Exactly one of the generated [Language] enum's codes. */
fun parseLanguage(value: String): Language? = Language.entries.firstOrNull { it.value == value }

/**
 * `+` → space, then percent-decoding; null for a malformed escape (`%zz`, a lone `%`) or bytes
 * that are not UTF-8 (overlong forms and surrogates included).
 */
fun formDecode(raw: String): String? {
    if ('%' !in raw && '+' !in raw) return raw.takeIf { s -> s.all { it.code < 0x80 } } ?: utf8(raw.toByteArray(Charsets.ISO_8859_1))
    val out = java.io.ByteArrayOutputStream(raw.length)
    var i = 0
    while (i < raw.length) {
        val c = raw[i]
        when (c) {
            '+' -> {
                out.write(' '.code)
            }

            '%' -> {
                val hi = raw.getOrNull(i + 1)?.let(::hexValue) ?: return null
                val lo = raw.getOrNull(i + 2)?.let(::hexValue) ?: return null
                out.write(hi * 16 + lo)
                i += 2
            }

            // The request line arrives as ISO-8859-1 chars, one per byte.
            else -> {
                out.write(c.code and 0xFF)
            }
        }
        i++
    }
    return utf8(out.toByteArray())
}

private fun utf8(bytes: ByteArray): String? =
    try {
        Charsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT)
            .decode(ByteBuffer.wrap(bytes))
            .toString()
    } catch (_: CharacterCodingException) {
        null
    }

private fun hexValue(c: Char): Int? =
    when (c) {
        in '0'..'9' -> c - '0'
        in 'a'..'f' -> c - 'a' + 10
        in 'A'..'F' -> c - 'A' + 10
        else -> null
    }
