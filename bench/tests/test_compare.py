"""bench compare: per-target changes between two run files, noise within the runs' own spread."""

import json
from pathlib import Path

from bench import cli, compare
from bench.tests.test_report import document


def test_a_change_within_the_spread_is_noise() -> None:
    a = document(svc_cpu=(100e-6, 110e-6))  # spread about 10 %
    b = document(svc_cpu=(104e-6, 112e-6))  # median +4 %
    row = next(r for r in compare.compare(a, b) if r["target"] == "svc")
    f = row["figures"]["cpu_us_per_request"]
    assert f["verdict"] == "noise" and 0.0 < f["change"] < f["threshold"]


def test_a_change_beyond_the_spread_is_better_or_worse() -> None:
    a = document(svc_cpu=(100e-6, 101e-6))
    b = document(svc_cpu=(80e-6, 81e-6))
    f = next(r for r in compare.compare(a, b) if r["target"] == "svc")["figures"]
    assert f["cpu_us_per_request"]["verdict"] == "better"  # less CPU per request
    assert (
        compare.verdict(
            {"median": 10, "n": 2, "spread": 0.01}, {"median": 12, "n": 2, "spread": 0.01}, lower_is_better=True
        )["verdict"]
        == "worse"
    )
    assert (
        compare.verdict(
            {"median": 10, "n": 2, "spread": 0.01}, {"median": 12, "n": 2, "spread": 0.01}, lower_is_better=False
        )["verdict"]
        == "better"
    )


def test_one_repeat_has_no_known_spread_and_failed_targets_have_no_figures() -> None:
    assert (
        compare.verdict(
            {"median": 10, "n": 1, "spread": 0.0}, {"median": 20, "n": 2, "spread": 0.0}, lower_is_better=True
        )["verdict"]
        == "spread unknown"
    )
    rows = {r["target"]: r for r in compare.compare(document(), document())}
    assert rows["broken"]["figures"]["peak_rps"]["verdict"] == "missing"


def test_the_command_prints_and_renders(tmp_path: Path, capsys) -> None:
    for name, cpu in (("a", (100e-6, 101e-6)), ("b", (150e-6, 151e-6))):
        (tmp_path / name).mkdir()
        doc = document(svc_cpu=cpu)
        (tmp_path / name / "run.json").write_text(json.dumps(doc))
    out = tmp_path / "compare.html"
    assert cli.main(["compare", str(tmp_path / "a"), str(tmp_path / "b" / "run.json"), "--html", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "svc" in printed and "worse" in printed
    assert "<table>" in out.read_text() and "svc" in out.read_text()
