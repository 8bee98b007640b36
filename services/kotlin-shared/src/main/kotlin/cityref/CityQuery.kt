package cityref

import cityref.generated.models.Language
import java.io.ByteArrayOutputStream
import java.nio.ByteBuffer
import java.nio.charset.CharacterCodingException
import java.nio.charset.Charset
import java.nio.charset.CodingErrorAction

/**
 * A valid `/city/v1/get` query. This file holds what both services' query parsing shares, whatever
 * hands them the query: the parameters' rules, the strict `application/x-www-form-urlencoded`
 * decoding and the two value parsers. How the query is read and the problems collected is each
 * service's own (`Query.kt`: Ktor's raw target parsed by hand, http4k's lenses).
 */
data class CityQuery(
    val id: Long,
    val language: Language,
)

/** The rule of each parameter, as a 400's text words it (`parameter 'id' must be …`). */
const val ID_RULE = "an integer from 1 to 9223372036854775807"
const val LANGUAGE_RULE = "one of: cs, de, en, pl, sk"

/** ASCII digits only (leading zeros allowed), 1 to Long.MAX_VALUE. */
fun parseId(value: String): Long? {
    if (value.isEmpty() || !value.all { it in '0'..'9' }) return null // also rejects `+`/`-`
    val digits = value.trimStart('0')
    return if (digits.length > 19) null else digits.toLongOrNull()?.takeIf { it >= 1 }
}

/** Exactly one of the generated [Language] codes (case-sensitive, unlike `Language.decode`). */
fun parseLanguage(value: String): Language? = Language.entries.firstOrNull { it.value == value }

/**
 * The raw query's parameters in order: split on `&`, empty pairs skipped, each split at the first
 * `=`, both parts [formDecode]d; a name that does not decode is dropped (it matches no parameter),
 * a value that does not decode is null. [literal] as in [formDecode].
 */
fun formParameters(
    rawQuery: String,
    literal: Charset,
): List<Pair<String, String?>> =
    rawQuery.split('&').filter { it.isNotEmpty() }.mapNotNull { pair ->
        val name = formDecode(pair.substringBefore('='), literal)
        name?.let { it to formDecode(pair.substringAfter('=', ""), literal) }
    }

/**
 * `+` → space, then percent-decoding; null for a malformed escape (`%zz`, a lone `%`) or bytes
 * that are not UTF-8 (overlong forms and surrogates included). [literal] is what the framework's
 * text stands for: the target's bytes one char each (`ISO_8859_1`, Netty) or decoded as UTF-8
 * (`UTF_8`, Jetty); the characters outside escapes are turned back into those bytes.
 */
fun formDecode(
    raw: String,
    literal: Charset,
): String? {
    if (raw.none { it == '%' || it == '+' || it.code >= 0x80 }) return raw
    val out = ByteArrayOutputStream(raw.length)
    var i = 0
    while (i < raw.length) {
        when (raw[i]) {
            '+' -> {
                out.write(' '.code)
                i++
            }

            '%' -> {
                val hi = raw.getOrNull(i + 1)?.let(::hexValue) ?: return null
                val lo = raw.getOrNull(i + 2)?.let(::hexValue) ?: return null
                out.write(hi * 16 + lo)
                i += 3
            }

            else -> {
                val end = raw.indexOfAny(charArrayOf('+', '%'), i).takeIf { it >= 0 } ?: raw.length
                out.write(raw.substring(i, end).toByteArray(literal))
                i = end
            }
        }
    }
    return utf8(out.toByteArray())
}

/** The bytes as UTF-8, or null if they are not (strictly: no replacement characters). */
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
