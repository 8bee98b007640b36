package cityref

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

/**
 * The query as the contract parses it (`application/x-www-form-urlencoded`, strict
 * percent-decoding): every value of a parameter, in order, null where the value does not decode.
 * http4k's own [org.http4k.lens.Query] decodes with `URLDecoder` — it throws on `%zz` anywhere in
 * the query (also in an unknown parameter) and turns invalid UTF-8 into U+FFFD — so this spec
 * reads the raw query instead (kotlin-shared's [formParameters]; Jetty hands the target over as
 * UTF-8 text); the rest is ordinary lens machinery.
 */
val FormQuery =
    LensSpec<Request, String?>(
        "query",
        ParamMeta.StringParam,
        LensGet { name, request ->
            formParameters(request.uri.query, Charsets.UTF_8).filter { it.first == name }.map { it.second }
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

val idQuery = FormQuery.once("id", ID_RULE, ::parseId)
val languageQuery = FormQuery.once("language", LANGUAGE_RULE, ::parseLanguage)

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
