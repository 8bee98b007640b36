"""The before/after tables: each service's image at an earlier commit against its current one, from a run file
(known inputs, fixed bootstrap seed)."""

from __future__ import annotations

import pytest

from bench import beforeafter, ranking

from .test_ranking import rec


def pair_doc() -> dict:
    """go-kit's current image costs 20 % less CPU per request than its earlier one in every round, and starts in
    half the time; its working set is the same."""
    base = [100.0, 101.0, 99.0, 100.0]
    results = []
    for block in (0, 1):
        results += [
            rec("go-kit (image, before)", "image", block, base),
            rec("go-kit (image)", "image", block, [v * 0.8 for v in base]),
        ]
    for r in results:
        r["startup_s"] = 0.2 if r["target"] == "go-kit (image, before)" else 0.1
        for s in r["steps"]:
            s["memory_working_set_bytes"] = 10 * 2**20
    return {
        "run_id": "r1",
        "command": "python -m bench --profile before-after --before-tag before",
        "profile": {"name": "before-after", "blocks": 2, "rounds": 4, "fixed_connections": 64, "rate": 500},
        "limits": {"cpus": 1.5, "memory_bytes": 512 * 2**20},
        "machine": {"git": "abc1234", "cpu_model": "x", "cpus": 2},
        "targets": [
            {
                "name": "go-kit (image, before)",
                "kind": "image",
                "meta": {"service": "go-kit", "before_of": "go-kit (image)", "revision": "d46340a0"},
            },
            {"name": "go-kit (image)", "kind": "image", "meta": {"service": "go-kit"}},
        ],
        "results": results,
    }


def test_the_current_image_against_the_earlier_one() -> None:
    doc = pair_doc()
    ranking.apply(doc)
    row = beforeafter.changes(doc)["go-kit"]
    assert row["revision"] == "d46340a0"
    cpu = row["figures"]["cpu"]
    assert cpu["before"]["median"] == pytest.approx(100.0, rel=0.02)
    assert cpu["ratio"]["median"] == pytest.approx(0.8)
    assert row["figures"]["working_set"]["ratio"]["median"] == pytest.approx(1.0)
    assert row["figures"]["startup"]["ratio"]["median"] == pytest.approx(0.5)
    table = beforeafter.markdown(doc, "go-kit", "run.json")
    assert "| figure | before (d46340a) | after (abc1234) | change |" in table
    cpu_row = next(line for line in table.splitlines() if line.startswith("| CPU per request (64 connections)"))
    assert "-20 %" in cpu_row
    assert "No before/after pair for rust-actix" in beforeafter.markdown(doc, "rust-actix", "run.json")


def test_an_earlier_image_is_gated_on_every_golden_case_but_its_own_spec(monkeypatch, tmp_path) -> None:
    """The gate leaves out only GET and HEAD /api-docs (the image serves its own commit's spec) for an earlier
    image, and nothing for a current one."""
    from bench import runner

    seen = []

    def fake_run(argv, **_):
        seen.append(argv)
        return type("P", (), {"returncode": 0, "stdout": "", "stderr": ""})()

    monkeypatch.setattr(runner.subprocess, "run", fake_run)
    running = type("R", (), {"url": "http://127.0.0.1:1"})()
    runner.verify_gate(running, tmp_path / "a", "go-kit", beforeafter.API_DOCS_CASES)
    runner.verify_gate(running, tmp_path / "b", "go-kit")
    assert "--pytest-arg=not (golden[api-docs] or golden[api-docs.head])" in seen[0]
    assert not any(a.startswith("--pytest-arg") for a in seen[1])
