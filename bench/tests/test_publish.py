"""bench/publish.py: the published run's tables, charts and files, from a run file."""

import copy
import json
from pathlib import Path

import pytest

from bench import publish, report, runner
from bench.tests.test_report import document, result


def published_doc() -> dict:
    """Two services, each bare and as its image (2 repeats), an image without AOT cache, and the floor."""
    doc = document()
    results = []
    for svc, cpu in (("rust-actix", 40e-6), ("kotlin-ktor", 100e-6)):
        for repeat in (0, 1):
            for name, kind in ((svc, "bare"), (f"{svc} (image)", "bare")):
                r = result(name, kind, 1000, cpu * (1 + 0.01 * repeat), repeat)
                r["kind"] = "image" if "image" in name else "bare"
                r["meta"] = {"service": svc}
                r["info"] = {"image_size_bytes": 5_400_000} if "image" in name else {}
                r["memory_after_startup_working_set_bytes"] = 10 * 2**20
                r["totals"]["overload"]["memory_working_set_bytes"] = 30 * 2**20
                r["totals"]["overload"]["memory_per_connection_bytes"] = 5 * 2**20
                results.append(r)
    no_aot = result("kotlin-ktor (image, no AOT)", "bare", 1000, 110e-6)
    no_aot.update(kind="image", meta={"service": "kotlin-ktor"}, startup_s=0.9)
    results.append(no_aot)
    results += [r for r in doc["results"] if r["kind"] == "floor"]
    doc.update(
        results=results,
        run_id="20261126T060000Z-publish",
        started="2026-11-26T06:00:00+00:00",
        command="python -m bench --profile publish",
    )
    doc["profile"]["open_rates"] = [100]
    doc["summary"] = report.summary(doc)
    return doc


def test_one_row_per_service_from_its_image_ranked_by_cpu() -> None:
    rows = publish.service_rows(published_doc())
    assert [r["service"] for r in rows] == ["rust-actix", "kotlin-ktor"]
    actix, ktor = rows
    assert actix["target"] == "rust-actix (image)" and actix["x_best"] == 1.0
    assert ktor["x_best"] == pytest.approx(2.5, rel=0.01)
    assert actix["x_floor"] == pytest.approx(40 / 25, rel=0.02)
    assert actix["req_per_core_s"] == pytest.approx(1e6 / 40.2, rel=0.01)
    assert ktor["startup_no_aot_s"]["median"] == 0.9 and ktor["image_size_bytes"] == 5_400_000
    assert actix["memory_per_connection_bytes"]["median"] == 5 * 2**20
    assert actix["framework_cpu_us"]["median"] == pytest.approx(0.4 * 40.2, rel=0.01)


def test_glance_table_is_dated_and_has_a_row_per_service() -> None:
    md = publish.glance_markdown(published_doc())
    lines = md.splitlines()
    assert lines[0].startswith("| service | framework | CPU µs/request at 4 | CPU × best |")
    assert lines[1] == "|---" * 15 + "|"
    assert lines[2].startswith("| rust-actix |") and lines[3].startswith("| kotlin-ktor |")
    assert "40.2 (40.0–40.4)" in lines[2]  # median and band of the two repeats
    assert "Run 20261126T060000Z-publish (2026-11-26) at commit abc" in md and "1.5 CPUs / 512 MiB" in md
    assert "`python -m bench --profile publish`" in md


def test_a_failed_service_is_a_row_that_says_so() -> None:
    doc = published_doc()
    for r in doc["results"]:
        if r["target"].startswith("kotlin-ktor"):
            r.update(status="failed", reason="did not start", steps=[])
    md = publish.glance_markdown(doc)
    assert "| kotlin-ktor | failed: did not start" in md


def test_a_service_that_died_in_its_load_steps_shows_the_steps_it_finished() -> None:
    doc = published_doc()
    for r in doc["results"]:
        if r["target"].startswith("kotlin-ktor"):
            r.update(status="failed", reason="during the load steps: wrk exited 1")
            r["steps"] = [s for s in r["steps"] if s["kind"] != "framework"]
    rows = {r["service"]: r for r in publish.service_rows(doc)}
    ktor = rows["kotlin-ktor"]
    assert ktor["died"] == "during the load steps: wrk exited 1" and ktor["target"] == "kotlin-ktor (image)"
    assert ktor["cpu_us"]["median"] == pytest.approx(100.5, rel=0.01) and ktor["startup_image_s"]["median"] == 0.05
    line = next(x for x in publish.glance_markdown(doc).splitlines() if x.startswith("| kotlin-ktor"))
    assert line.startswith("| kotlin-ktor ⚠ died |") and "died (every repeat)" in line


def test_study_table_sets_2020_beside_now() -> None:
    study = {
        "study": {"title": "T", "author": "A", "date": "2020-09-13", "url": "https://example.org/s"},
        "implementations": [
            {"name": "Actix v2", "maps_to": "rust-actix", "cpu_ms_per_request": {"value": 0.17}},
            {"name": "Ktor", "maps_to": "kotlin-ktor", "cpu_ms_per_request": {"value": 0.46}},
            {"name": "Actix v3", "maps_to": None},
        ],
    }
    md = publish.study_markdown(published_doc(), study)
    ktor = next(line for line in md.splitlines() if line.startswith("| kotlin-ktor"))
    assert ktor.startswith("| kotlin-ktor (Ktor in 2020) | 460 → ")
    assert "[T](https://example.org/s)" in md


def test_the_repository_study_file_maps_to_our_services() -> None:
    md = publish.study_markdown(published_doc())
    assert "| rust-actix (Actix v2 in 2020) | 170 → " in md and "| kotlin-ktor (Ktor in 2020) | 460 → " in md


def test_publish_writes_the_dated_directory_and_latest(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    doc = published_doc()
    (run / "run.json").write_text(json.dumps(doc))
    (run / "report.html").write_text("<html></html>")
    dest = publish.publish(run, tmp_path / "results")
    assert dest.name == "2026-11-26-abc"
    assert sorted(p.name for p in dest.iterdir()) == ["charts", "report.html", "results.md", "run.json"]
    svg = (dest / "charts" / "cpu-per-request.svg").read_text()
    assert svg.startswith("<?xml") and 'xmlns="http://www.w3.org/2000/svg"' in svg and "rust-actix (image)" in svg
    assert (tmp_path / "results" / "latest").resolve() == dest.resolve()
    assert "## Beside the 2020 study" in (dest / "results.md").read_text()
    again = publish.publish(run, tmp_path / "results")  # a second publish of the same run replaces it
    assert again == dest and (tmp_path / "results" / "latest").resolve() == dest.resolve()


def test_the_publish_profile_fits_its_hour() -> None:
    p = runner.PROFILES["publish"]
    targets = 6 + 1 + 2  # every service's image, the A/A twin, floor, ceiling (bare runs are make bench's)
    per_target = runner.planned_target_s(p, open_loop=True, verify=True) + 8  # + startup
    assert p.blocks == 3 and p.rounds >= 5 and not p.bare and not p.aot_variants
    assert targets * p.blocks * per_target < 55 * 60  # + setup, within the hour
    assert copy.deepcopy(p).connections == [64, 2048]


def test_readme_block_comes_from_latest(tmp_path: Path) -> None:
    assert "No run is published yet: `make bench-publish`" in publish.readme_block(tmp_path / "none")
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps(published_doc()))
    (run / "report.html").write_text("<html></html>")
    publish.publish(run, tmp_path / "results")
    block = publish.readme_block(tmp_path / "results")
    where = "docs/results/2026-11-26-abc"
    assert block.startswith(f"From the published run, [{where}/]({where}/results.md)")
    assert "![CPU per request](docs/results/2026-11-26-abc/charts/cpu-per-request.svg)" in block
    assert "| rust-actix |" in block and "Beside the 2020 study" in block


def test_a_resilience_run_is_published_beside_it_dated_by_its_own_commit(tmp_path: Path) -> None:
    from bench.tests.test_resilience import result as resilience_result

    run, res_dir = tmp_path / "run", tmp_path / "res"
    run.mkdir()
    res_dir.mkdir()
    (run / "run.json").write_text(json.dumps(published_doc()))
    (run / "report.html").write_text("<html></html>")
    rec = resilience_result()
    rec["samples (straight to Elasticsearch)"] = [[0, 1]] * 1000
    res = {
        "run_id": "20261126T023027Z-resilience-quick",
        "started": "2026-11-26T02:30:27+00:00",
        "machine": dict(published_doc()["machine"], git="96fc6c0"),
        "limits": {"cpus": 1.5, "memory_bytes": 2**29},
        "profile": {
            "name": "quick",
            "outage_connections": [64, 2048],
            "hostile_bytes": 64 * 2**20,
            "soak_connections": 2048,
            "load_connections": 64,
        },
        "resilience": [rec],
    }
    (res_dir / "run.json").write_text(json.dumps(res))
    dest = publish.publish(run, tmp_path / "results", res_dir)
    md = (dest / "results.md").read_text()
    assert "## Resilience\n\nRun 20261126T023027Z-resilience-quick (2026-11-26) at commit 96fc6c0" in md
    assert "`python -m bench resilience --profile quick`" in md and "| svc | 503×10 (2 ms)" in md
    kept = json.loads((dest / "resilience.json").read_text())["resilience"][0]
    assert not [k for k in kept if k.startswith("samples")]  # the raw samples stay out of the repository


def test_the_readme_needs_a_published_ranking_with_its_aa_control(tmp_path: Path) -> None:
    latest = tmp_path / "latest"
    latest.mkdir()
    assert publish.published_problems(tmp_path) == []  # nothing published yet: nothing to hold
    (latest / "run.json").write_text(json.dumps({"results": []}))
    assert "no ranking" in publish.published_problems(tmp_path)[0]
    (latest / "run.json").write_text(json.dumps({"ranking": {"aa": None, "steps": {}}}))
    assert "no A/A control" in publish.published_problems(tmp_path)[0]
    (latest / "run.json").write_text(json.dumps({"ranking": {"aa": {"targets": ["a", "b"]}, "steps": {}}}))
    assert publish.published_problems(tmp_path) == []
