"""Lines of each service's own source: every tracked .rs/.go/.kt/.java file under services/<name>/
outside generated/, target/ and the test folders (src/test, src/testFixtures, tests) and Go's
*_test.go files; Rust's inline #[cfg(test)] modules are counted. services/README.md's table
"Source lines" is generated from it by `make readme-table` (scripts/readme_table.py).

BASELINE is the same count at the commit before the services moved to their ecosystems' logging,
metrics and configuration libraries, kept so that the table shows each service against it.
"""

from __future__ import annotations

import subprocess

from cityref_tools import descriptors

EXTENSIONS = (".rs", ".go", ".kt", ".java")
EXCLUDED_DIRS = {"generated", "target", "test", "testFixtures", "tests"}
BASELINE_COMMIT = "d46340a"
BASELINE = {
    "go-kit": 1379,
    "java-helidon": 962,
    "java-shared": 826,
    "java-spring-boot": 961,
    "kotlin-http4k": 814,
    "kotlin-ktor": 517,
    "kotlin-shared": 975,
    "rust-actix": 2744,
}


def counted(path: str) -> bool:
    parts = path.split("/")
    return path.endswith(EXTENSIONS) and not path.endswith("_test.go") and not EXCLUDED_DIRS & set(parts[2:-1])


def lines() -> dict[str, int]:
    """{service directory: lines} over the tracked files of the working tree."""
    files = subprocess.run(
        ["git", "ls-files", "services"], cwd=descriptors.ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    out: dict[str, int] = {}
    for f in files:
        if counted(f):
            out[f.split("/")[1]] = out.get(f.split("/")[1], 0) + (descriptors.ROOT / f).read_bytes().count(b"\n")
    return dict(sorted(out.items()))


def table() -> str:
    rows = [
        "| directory | lines now | at " + BASELINE_COMMIT + " | change |",
        "|---|---:|---:|---:|",
    ]
    for name, now in lines().items():
        before = BASELINE.get(name)
        rows.append(
            f"| {name} | {now:,} | {before:,} | {now - before:+,d} |" if before else f"| {name} | {now:,} | | new |"
        )
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(table(), end="")
