"""The observability variants: their environments, their costs against the baseline from a run file, and the
published tables (known inputs, fixed bootstrap seed)."""

from __future__ import annotations

import pytest

from bench import observability, ranking

from .test_ranking import rec


def variant_doc() -> dict:
    """go-kit and a JVM service, each with a baseline and variants: trace-all costs go-kit 20 % more CPU per
    request in every round, log-info nothing; the JVM service's agent costs 50 %."""
    base = [100.0, 101.0, 99.0, 100.0]
    results = []
    for block in (0, 1):
        results += [
            rec("go-kit", "bare", block, base),
            rec("go-kit [trace-all]", "bare", block, [v * 1.2 for v in base]),
            rec("go-kit [log-info]", "bare", block, base),
            rec("java-helidon", "bare", block, [2 * v for v in base]),
            rec("java-helidon [agent]", "bare", block, [3 * v for v in base]),
        ]
    for r in results:
        r["startup_s"] = 1.0 if "[" not in r["target"] else 1.5
        for s in r["steps"]:
            s["successes"] = 1000
            s["backend_cpu_s"] = 0.05 if "trace-all" in r["target"] else 0.0
    meta = {
        "go-kit": {"service": "go-kit", "variant": "baseline", "variant_of": "go-kit", "jvm": False},
        "go-kit [trace-all]": {"service": "go-kit", "variant": "trace-all", "variant_of": "go-kit", "jvm": False},
        "go-kit [log-info]": {"service": "go-kit", "variant": "log-info", "variant_of": "go-kit", "jvm": False},
        "java-helidon": {"service": "java-helidon", "variant": "baseline", "variant_of": "java-helidon", "jvm": True},
        "java-helidon [agent]": {
            "service": "java-helidon",
            "variant": "agent",
            "variant_of": "java-helidon",
            "jvm": True,
        },
    }
    return {
        "profile": {"name": "observability", "blocks": 2, "rounds": 4, "fixed_connections": 64},
        "targets": [{"name": n, "kind": "bare", "meta": m} for n, m in meta.items()],
        "results": results,
    }


def test_variants_are_not_ranked_but_costed_against_their_baseline() -> None:
    doc = variant_doc()
    ranking.apply(doc)
    observability.apply(doc)
    closed = doc["ranking"]["steps"]["closed"]
    assert [r["target"] for r in closed["rows"]] == ["go-kit", "java-helidon"]
    assert {u["target"]: u["why"] for u in closed["unranked"]}["go-kit [trace-all]"] == (
        "observability variant of go-kit"
    )
    obs = doc["ranking"]["observability"]["services"]
    trace = obs["go-kit"]["variants"]["trace-all"]
    assert trace["cpu"]["median"] == pytest.approx(1.2)
    assert trace["startup"]["median"] == pytest.approx(1.5)
    assert trace["backend_cpu_us_per_request"] == pytest.approx(50.0)
    assert obs["go-kit"]["variants"]["log-info"]["cpu"]["median"] == pytest.approx(1.0)
    assert obs["java-helidon"]["variants"]["agent"]["cpu"]["median"] == pytest.approx(1.5)
    # the agent does not apply to go-kit, and the table says so
    assert obs["go-kit"]["variants"]["agent"] == {"not_applicable": "no JVM: the Java agent does not apply"}
    table = observability.markdown(doc["ranking"]["observability"])
    go_row = next(line for line in table.splitlines() if line.startswith("| go-kit |"))
    assert "+20 %" in go_row and "n/a (no JVM)" in go_row
    # a column per variant the run measured somewhere: trace-all is go-kit's only, trace-10 nobody's
    assert "| java-helidon | not run | +50 %" in table
    assert "trace-10" not in table


def test_environments() -> None:
    trace10 = observability.environment("trace-10", "go-kit", "http://127.0.0.1:4318", None)
    assert trace10["OTEL_TRACES_EXPORTER"] == "otlp"
    assert trace10["OTEL_TRACES_SAMPLER"] == "parentbased_traceidratio"
    assert trace10["OTEL_TRACES_SAMPLER_ARG"] == "0.1"
    assert trace10["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://127.0.0.1:4318"
    agent = observability.environment("agent", "java-helidon", "http://127.0.0.1:4318", "/a/agent.jar")
    # the agent is configured by system properties: the service's own tracing stays off
    assert set(agent) == {"JAVA_TOOL_OPTIONS"}
    assert agent["JAVA_TOOL_OPTIONS"].startswith("-javaagent:/a/agent.jar ")
    assert "-Dotel.traces.exporter=otlp" in agent["JAVA_TOOL_OPTIONS"]
    assert observability.environment("log-info", "go-kit", None, None) == {"LOG_LEVEL": "info"}
    assert observability.parse("all") == list(observability.VARIANTS)
    with pytest.raises(SystemExit):
        observability.parse("trace-all,nope")


def test_one_start_gives_a_startup_ratio_without_an_interval() -> None:
    one = [{"repeat": 0, "startup_s": 1.5}]
    assert observability._ratio_of_startups(one, [{"repeat": 0, "startup_s": 1.0}]) == {
        "median": pytest.approx(1.5),
        "interval": None,
        "blocks": 1,
    }
    two = observability._ratio_of_startups(
        one + [{"repeat": 1, "startup_s": 1.2}], [{"repeat": 0, "startup_s": 1.0}, {"repeat": 1, "startup_s": 1.0}]
    )
    assert two["interval"] is not None and two["blocks"] == 2
