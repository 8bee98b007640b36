package cityref

import cityref.generated.models.Language
import org.http4k.core.Request
import org.http4k.lens.Failure
import org.http4k.lens.Invalid
import org.http4k.lens.Lens
import org.http4k.lens.LensFailure
import org.http4k.lens.LensGet
import org.http4k.lens.LensSpec
import org.http4k.lens.Meta
import org.http4k.lens.Missing
import org.http4k.lens.ParamMeta
import org.http4k.lens.Validator
import java.io.ByteArrayOutputStream
import java.nio.ByteBuffer
import java.nio.charset.CharacterCodingException
import java.nio.charset.CodingErrorAction

/**
 * The query as the contract parses it (`application/x-www-form-urlencoded`, strict
 * percent-decoding): every value of a parameter, in order, null where the value does not decode.
 * http4k's own [org.http4k.lens.Query] decodes with `URLDecoder` — it throws on `%zz` anywhere in
 * the query (also in an unknown parameter) and turns invalid UTF-8 into U+FFFD — so this spec
 * reads the raw query instead; the rest is ordinary lens machinery.
 */
val FormQuery =
    LensSpec<Request, String?>(
        "query",
        ParamMeta.StringParam,
        LensGet { name, request ->
            formParameters(request.uri.query).filter { it.first == name }.map { it.second }
        },
    )

/** Marks an [Invalid] failure that is a repeated parameter rather than a bad value. */
private const val REPEATED = "repeated"

/**
 * A required parameter given exactly once whose value [parse]s. Per parameter the first problem
 * of: missing ([Missing]), given more than once, invalid value (both [Invalid]; the rule text is
 * the lens's description).
 */
fun <T : Any> LensSpec<Request, String?>.once(
    name: String,
    rule: String,
    parse: (String) -> T?,
): Lens<Request, T> {
    val meta = Meta(true, location, ParamMeta.StringParam, name, rule, emptyMap())
    val values = multi.optional(name)
    return Lens(meta) { request ->
        val given = values(request) ?: throw LensFailure(Missing(meta), target = request)
        if (given.size > 1) throw LensFailure(Invalid(meta.copy(metadata = mapOf(REPEATED to true))), target = request)
        given.single()?.let(parse) ?: throw LensFailure(Invalid(meta), target = request)
    }
}

val idQuery = FormQuery.once("id", "an integer from 1 to 9223372036854775807", ::parseId)
val languageQuery = FormQuery.once("language", "one of: cs, de, en, pl, sk", ::parseLanguage)

/** A valid `/city/v1/get` query. */
data class CityQuery(
    val id: Long,
    val language: Language,
)

/** Both parameters, or a [LensFailure] listing every problem (`id` first, then `language`). */
fun cityQuery(request: Request): CityQuery {
    Validator.Strict(request, listOf(idQuery, languageQuery))
    return CityQuery(idQuery(request), languageQuery(request))
}

/** The contract's text for each failure, in the lenses' order. */
fun LensFailure.problems(): List<String> = failures.map(Failure::problem)

private fun Failure.problem(): String =
    when {
        this is Missing -> "parameter '${meta.name}' is missing"
        meta.metadata[REPEATED] == true -> "parameter '${meta.name}' is given more than once"
        else -> "parameter '${meta.name}' must be ${meta.description}"
    }

/** ASCII digits only (leading zeros allowed), 1 to Long.MAX_VALUE. */
fun parseId(value: String): Long? {
    if (value.isEmpty() || !value.all { it in '0'..'9' }) return null
    val digits = value.trimStart('0')
    return if (digits.length > 19) null else digits.toLongOrNull()?.takeIf { it >= 1 }
}

/** Exactly one of the generated [Language] codes (case-sensitive, unlike `Language.decode`). */
fun parseLanguage(value: String): Language? = Language.entries.firstOrNull { it.value == value }

/**
 * Splits on `&`, skips empty pairs, splits each at the first `=`; names that do not decode are
 * dropped (they match no parameter), values that do not decode are null.
 */
fun formParameters(rawQuery: String): List<Pair<String, String?>> =
    rawQuery.split('&').filter { it.isNotEmpty() }.mapNotNull { pair ->
        val name = formDecode(pair.substringBefore('='))
        name?.let { it to formDecode(pair.substringAfter('=', "")) }
    }

/**
 * `+` → space, then percent-decoding; null for a malformed escape (`%zz`, a lone `%`) or bytes
 * that are not UTF-8 (overlong forms and surrogates included).
 */
fun formDecode(raw: String): String? {
    val out = ByteArrayOutputStream(raw.length)
    var i = 0
    while (i < raw.length) {
        when (val c = raw[i]) {
            '+' -> {
                out.write(' '.code)
            }

            '%' -> {
                val hi = raw.getOrNull(i + 1)?.let(::hexValue) ?: return null
                val lo = raw.getOrNull(i + 2)?.let(::hexValue) ?: return null
                out.write(hi * 16 + lo)
                i += 2
            }

            else -> {
                out.write(c.toString().toByteArray(Charsets.UTF_8))
            }
        }
        i++
    }
    return try {
        Charsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT)
            .decode(ByteBuffer.wrap(out.toByteArray()))
            .toString()
    } catch (_: CharacterCodingException) {
        null
    }
}

private fun hexValue(c: Char): Int? =
    when (c) {
        in '0'..'9' -> c - '0'
        in 'a'..'f' -> c - 'a' + 10
        in 'A'..'F' -> c - 'A' + 10
        else -> null
    }
