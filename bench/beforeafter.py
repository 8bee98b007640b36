"""Each service's image at an earlier commit beside its current image, in one block-method run
(`--before-tag TAG`, profile `before-after`): per service, CPU per request at the closed-loop and the
fixed-rate step, working set under load and startup, before and after, each with its 95 % interval, and
after against before as a ratio formed within each round of each start (bench/ranking.py's paired ratio,
the method the observability tables use).

    python -m bench before-after RUN.json              the tables in Markdown, one per service
    python -m bench before-after RUN.json --publish D  the run file into D/run.json (what readme_table.py reads)

scripts/readme_table.py writes each service's table into its README from docs/results/before-after/run.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from pathlib import Path

from . import observability, ranking, targets

PUBLISHED = Path("docs") / "results" / "before-after" / "run.json"
API_DOCS_CASES = "golden[api-docs] or golden[api-docs.head]"  # GET and HEAD /api-docs (a pytest -k expression)


def target(service: str, before_tag: str) -> targets.Target:
    """The service's image tagged `before_tag`, paired with `<service> (image)`; its meta names the commit the
    image was built at (its org.opencontainers.image.revision label)."""
    ref = f"localhost/cityref/{service}:{before_tag}"
    t = targets.image(f"{service} (image, {before_tag})", ref, service)
    inspect = subprocess.run([targets.PODMAN, "image", "inspect", ref], capture_output=True, text=True, check=False)
    labels = (json.loads(inspect.stdout or "[{}]")[0].get("Labels") or {}) if inspect.returncode == 0 else {}
    t.meta.update(
        before_of=f"{service} (image)",
        revision=labels.get("org.opencontainers.image.revision"),
        # the gate's other golden cases hold at any commit; GET /api-docs serves the image's own
        # spec, which this commit's suite compares byte for byte
        verify_deselect=API_DOCS_CASES,
    )
    return t


def load(path: Path) -> dict:
    """A run file (or its directory), its ranking recomputed by this commit's code."""
    doc = json.loads((path / "run.json" if path.is_dir() else path).read_text())
    ranking.apply(doc)
    return doc


def _startups(recs: list[dict]) -> dict | None:
    groups = [[r["startup_s"]] for r in recs if r.get("startup_s")]
    if not groups:
        return None
    ci = ranking.hierarchical_bootstrap(groups, seed=ranking.SEED)
    return {"median": ranking.median_of_medians(groups), "interval": list(ci) if ci else None}


def changes(doc: dict) -> dict[str, dict]:
    """{service: {before, after, revision, figures: {key: {before, after, ratio}}}} for every pair in the run."""
    metas = {t["name"]: t.get("meta") or {} for t in doc.get("targets", [])}
    recs: dict[str, list[dict]] = {}
    for r in doc["results"]:
        recs.setdefault(r["target"], []).append(r)
    by_block = {t: {r["repeat"]: r for r in rs} for t, rs in recs.items()}
    steps = (doc.get("ranking") or {}).get("steps", {})
    closed, rate = steps.get("closed", {}).get("starts", {}), steps.get("rate", {}).get("starts", {})

    def working_set(name: str) -> list[dict]:
        return [
            observability._like(s, by_block[name][s["block"]], "round", observability._working_set)
            for s in closed.get(name, [])
        ]

    out = {}
    for before, meta in metas.items():
        after = meta.get("before_of")
        if not after or after not in metas:
            continue
        figs = {
            "cpu": (closed.get(before, []), closed.get(after, [])),
            "cpu_rate": (rate.get(before, []), rate.get(after, [])),
            "working_set": (working_set(before), working_set(after)),
        }
        row = {
            key: {
                "before": ranking.target_figure(b),
                "after": ranking.target_figure(a),
                "ratio": ranking.paired_ratio(a, b),
            }
            for key, (b, a) in figs.items()
        }
        row["startup"] = {
            "before": _startups(recs.get(before, [])),
            "after": _startups(recs.get(after, [])),
            "ratio": observability._ratio_of_startups(recs.get(after, []), recs.get(before, [])),
        }
        out[meta["service"]] = {"before": before, "after": after, "revision": meta.get("revision"), "figures": row}
    return out


FIGURES = (  # key, title, unit, scale
    ("cpu", "CPU per request ({closed})", "µs", 1.0),
    ("cpu_rate", "CPU per request ({rate})", "µs", 1.0),
    ("working_set", "working set under load ({closed})", "MiB", 2.0**-20),
    ("startup", "startup (launch → first answer)", "ms", 1000.0),
)


def _value(fig: dict | None, scale: float) -> str:
    if not fig or fig.get("median") is None:
        return "–"
    text = f"{fig['median'] * scale:.0f}"
    if fig.get("interval"):
        lo, hi = (x * scale for x in fig["interval"])
        text += f" [{lo:.0f}, {hi:.0f}]"
    return text


def markdown(doc: dict, service: str, run_link: str) -> str:
    """One service's table: each figure before and after with its interval, and the change."""
    row = changes(doc).get(service)
    if row is None:
        return f"No before/after pair for {service} in run `{doc.get('run_id')}`.\n"
    prof, method = doc.get("profile", {}), (doc.get("ranking") or {}).get("method") or {}
    closed = f"{prof.get('fixed_connections', '?')} connections"
    rate = f"{prof.get('rate', '?')} req/s"
    before_rev = (row["revision"] or "?")[:7]
    after_rev = doc.get("machine", {}).get("git", "?")
    out = [
        f"Run `{doc.get('run_id')}` ([run.json]({run_link})), `{doc.get('command') or 'python -m bench'}`, at "
        f"commit {after_rev}: the image built at {before_rev} (before) and at {after_rev} (after), each started "
        f"{method.get('blocks', '?')} times under {doc['limits']['cpus']} CPUs and "
        f"{doc['limits']['memory_bytes'] // 2**20} MiB, {method.get('rounds', '?')} interleaved rounds per start; "
        f"medians with their 95 % intervals (bench/beforeafter.py). Machine: "
        f"{doc.get('machine', {}).get('cpu_model', '?')}, {doc.get('machine', {}).get('cpus', '?')} CPUs.",
        "",
        f"| figure | before ({before_rev}) | after ({after_rev}) | change |",
        "|---|---:|---:|---:|",
    ]
    for key, title, unit, scale in FIGURES:
        f = row["figures"][key]
        title = title.format(closed=closed, rate=rate)
        out.append(
            f"| {title}, {unit} | {_value(f['before'], scale)} | {_value(f['after'], scale)} "
            f"| {observability._delta(f['ratio'])} |"
        )
    out += [
        "",
        "`–`: the start never settled within its rounds (the harness's steady-state test), so it has no figure. "
        "A change whose interval holds 0 is not one this run can tell from noise.",
    ]
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="python -m bench before-after", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("run", type=Path, help="a run file (run.json) or its directory")
    p.add_argument("--publish", type=Path, metavar="DIR", help="copy the run file to DIR/run.json")
    a = p.parse_args(argv)
    doc = load(a.run)
    if a.publish:
        a.publish.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(a.run / "run.json" if a.run.is_dir() else a.run, a.publish / "run.json")
    for service in sorted(changes(doc)):
        print(f"## {service}\n\n{markdown(doc, service, 'run.json')}")
    return 0
