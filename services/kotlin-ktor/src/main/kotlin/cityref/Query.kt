package cityref

/**
 * Parses the raw query string (`application/x-www-form-urlencoded`, strictly percent-decoded by
 * kotlin-shared's [formParameters]; Ktor's own parameter decoding is lenient) and reports every
 * problem at once: `id` first, then `language`; per parameter the first of missing, given more than
 * once, invalid value. Netty hands the target over one char per byte, hence ISO-8859-1.
 */
fun parseCityQuery(rawQuery: String): CityQuery {
    val parameters = formParameters(rawQuery, Charsets.ISO_8859_1)
    val id = single("id", parameters, ID_RULE, ::parseId)
    val language = single("language", parameters, LANGUAGE_RULE, ::parseLanguage)
    val problems = listOfNotNull(id.exceptionOrNull()?.message, language.exceptionOrNull()?.message)
    if (problems.isNotEmpty()) throw AppError.BadRequest(problems)
    return CityQuery(id.getOrThrow(), language.getOrThrow())
}

/** The parameter [name] given exactly once with a value that [parse]s, or its problem's text. */
private fun <T : Any> single(
    name: String,
    parameters: List<Pair<String, String?>>,
    rule: String,
    parse: (String) -> T?,
): Result<T> {
    val values = parameters.filter { it.first == name }
    return when (values.size) {
        0 -> {
            Result.failure(IllegalArgumentException("parameter '$name' is missing"))
        }

        1 -> {
            values[0].second?.let(parse)?.let { Result.success(it) }
                ?: Result.failure(IllegalArgumentException("parameter '$name' must be $rule"))
        }

        else -> {
            Result.failure(IllegalArgumentException("parameter '$name' is given more than once"))
        }
    }
}
