"""README.md's generated parts (`make readme-table`): the table of services, from services/*/cityref.yaml,
and "Results at a glance", from the published run (docs/results/latest/run.json; bench/publish.py); and
docs/development.md's tables of `make test`'s stages, from the stage tables of a cold and a warm run
(docs/results/ci/{cold,warm}.json: out/results/stages.json of `bash .ci/run` on a fresh clone).

    readme_table.py           rewrite each between its markers
    readme_table.py --check   exit 1 if a document differs from what they give, or if the published run has
                              no ranking or no A/A control (make test)

Columns: name, port (`make up`'s and compose's), language, framework and Elasticsearch client, folder,
and a status built from the
descriptor: its `note`, its known failures (`known_failures`), what its framework's HTTP layer does
natively (`http_layer`, in plain words, required), and its framework's defects against the spec's
safety tier (`differential_known`, each with a reproduction and an upstream report), linked to the
protocol matrix (docs/protocol-matrix.md).
"""

from __future__ import annotations

import json
import pathlib
import sys

from bench import publish
from cityref_tools import descriptors

README = descriptors.ROOT / "README.md"
BEGIN = "<!-- services table: generated from services/*/cityref.yaml by `make readme-table`; do not edit -->"
END = "<!-- end of the generated services table -->"
RESULTS_BEGIN = (
    "<!-- results at a glance: generated from docs/results/latest/run.json by `make readme-table`; do not edit -->"
)
RESULTS_END = "<!-- end of results at a glance -->"


MATRIX = "docs/protocol-matrix.md"
DEVELOPMENT = descriptors.ROOT / "docs" / "development.md"
STAGES = descriptors.ROOT / "docs" / "results" / "ci"
STAGES_BEGIN = "<!-- stage tables: generated from docs/results/ci/*.json by `make readme-table`; do not edit -->"
STAGES_END = "<!-- end of the stage tables -->"
CACHES = {
    "cold": "cold caches (a new machine: no Maven, cargo, Go, pip, npm or tool cache, no image storage)",
    "warm": "warm caches (the caches the cold run left)",
}


def minutes(seconds: int) -> str:
    return f"{seconds // 60}:{seconds % 60:02d}"


def stages_tables() -> str:
    """One table per run in docs/results/ci/ (cold first): each stage's start, wall and CPU time."""

    out = []
    for label in sorted((p.stem for p in STAGES.glob("*.json")), key=lambda k: (k != "cold", k)):
        run = json.loads((STAGES / f"{label}.json").read_text(encoding="utf-8"))
        out += [
            f"**{label.capitalize()}**, {CACHES.get(label, label)}: `bash .ci/run` on a fresh clone at "
            f"{run['commit']}, "
            f"{run['date'][:10]}, {run['machine']}: **{minutes(run['total_s'])}** (min:s) wall, "
            f"{run['cpu_s'] // 60} CPU-minutes. `&`: in the background, beside the stages after it.",
            "",
            "| stage | start | wall (min:s) | CPU (min:s) | result | checks |",
            "|---|---:|---:|---:|---|---|",
        ]
        for r in run["stages"]:
            mark = " &" if r["background"] else ""
            out.append(
                f"| {r['stage']}{mark} | {minutes(r['start_s'])} | {minutes(r['wall_s'])} | {minutes(r['cpu_s'])} "
                f"| {r['result']} | {r['checks']} |"
            )
        out.append("")
    return "\n".join(out) or "(no run recorded yet)"


def status(desc: dict, path: pathlib.Path) -> str:
    known = desc.get("known_failures") or []
    defects = desc.get("differential_known") or []
    if not desc.get("http_layer"):
        raise SystemExit(f"{path}: needs `http_layer`: what the framework's HTTP layer does natively, in plain words")
    parts = [desc["note"]] if desc.get("note") else []
    parts.append(
        "conformance: no known failures"
        if not known
        else f"conformance: {len(known)} known failure(s) ({', '.join(k['check'] for k in known)})"
    )
    parts.append(f"HTTP layer ([natively]({MATRIX})): {desc['http_layer'].rstrip('.')}")
    by_report: dict[str, list[str]] = {}
    intermittent: dict[str, int] = {}
    for d in defects:
        by_report.setdefault(d["upstream"], [])
        if d.get("intermittent"):
            intermittent[d["upstream"]] = intermittent.get(d["upstream"], 0) + 1
        else:
            by_report[d["upstream"]].append(f"`{d['class']}`")
    for report, n in intermittent.items():
        by_report[report].append(f"intermittently {n} more classes")
    parts.append(
        "safety tier: passes"
        if not defects
        else "safety tier: framework defects "
        + "; ".join(f"{', '.join(classes)} ([report]({report}))" for report, classes in by_report.items())
    )
    return "; ".join(parts)


def table() -> str:
    rows = ["| service | port | language | framework | folder | status |", "|---|---|---|---|---|---|"]
    for path in descriptors.paths():
        desc = descriptors.load(path)
        folder = path.parent.relative_to(descriptors.ROOT).as_posix()
        framework = ", ".join(filter(None, [desc["framework"], desc.get("elasticsearch_client")]))
        rows.append(
            f"| {desc['name']} | {desc.get('port', '')} | {desc['language']} | {framework} | [{folder}]({folder})"
            f" | {status(desc, path)} |"
        )
    return "\n".join(rows)


def between(text: str, begin: str, end: str, content: str) -> str:
    start, stop = text.index(begin) + len(begin), text.index(end)
    return text[:start] + "\n" + content.rstrip("\n") + "\n" + text[stop:]


def render(text: str) -> str:
    text = between(text, BEGIN, END, table())
    return between(text, RESULTS_BEGIN, RESULTS_END, publish.readme_block(descriptors.ROOT / publish.PUBLISHED))


def main(argv: list[str]) -> int:
    text = README.read_text(encoding="utf-8")
    new = render(text)
    dev_text = DEVELOPMENT.read_text(encoding="utf-8")
    dev_new = between(dev_text, STAGES_BEGIN, STAGES_END, stages_tables())
    if "--check" in argv:
        if dev_new != dev_text:
            print(
                "docs/development.md's stage tables differ from docs/results/ci/: run `make readme-table`",
                file=sys.stderr,
            )
            return 1
        if new != text:
            print(
                "README.md's services table or results differ from services/*/cityref.yaml and "
                "docs/results/latest: run `make readme-table`",
                file=sys.stderr,
            )
            return 1
        problems = publish.published_problems(descriptors.ROOT / publish.PUBLISHED)
        print("\n".join(problems), file=sys.stderr, end="\n" if problems else "")
        return 1 if problems else 0
    README.write_text(new, encoding="utf-8")
    DEVELOPMENT.write_text(dev_new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
