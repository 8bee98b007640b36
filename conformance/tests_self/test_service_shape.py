"""services/README.md's role → file table names every source file of every service, and only files
that exist."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
SERVICES = ROOT / "services"
# Where each ecosystem keeps its (non-test, non-generated) sources, relative to the service.
SOURCES = {
    "go-kit": ("", "*.go"),
    "rust-actix": ("", "src/*.rs"),
    "kotlin-ktor": ("src/main/kotlin/cityref", "*.kt"),
    "kotlin-http4k": ("src/main/kotlin/cityref", "*.kt"),
    "java-helidon": ("src/main/java/cityref", "*.java"),
}


def table() -> dict[str, set[str]]:
    rows = [line for line in (SERVICES / "README.md").read_text().splitlines() if line.startswith("| ")]
    header = next(r for r in rows if r.startswith("| role | go-kit"))
    names = [c.strip() for c in header.strip("|").split("|")][1:]
    files: dict[str, set[str]] = {name: set() for name in names}
    for row in rows[rows.index(header) + 1 :]:  # (the |---| line is not a "| " row)
        for name, cell in zip(names, [c.strip() for c in row.strip("|").split("|")][1:], strict=True):
            files[name] |= set(re.findall(r"`([^`]+)`", cell))
    return files


def test_every_service_is_in_the_table():
    assert set(table()) == {p.name for p in SERVICES.iterdir() if (p / "cityref.yaml").exists()}


def test_the_table_matches_the_tree():
    for name, listed in table().items():
        base, pattern = SOURCES[name]
        root = SERVICES / name / base
        tree = {str(p.relative_to(root)) for p in root.glob(pattern) if not p.name.endswith("_test.go")}
        assert listed == tree, (
            f"{name}: only in the table {sorted(listed - tree)}, only in the tree {sorted(tree - listed)}"
        )


def test_rust_modules_depend_one_way():
    """rust-actix's `crate::` references form no cycle (the roles' one-way dependencies)."""
    src = SERVICES / "rust-actix" / "src"
    modules = {p.stem for p in src.glob("*.rs")}
    edges = {m: set() for m in modules}
    for m in modules:
        text = (src / f"{m}.rs").read_text()
        for group in re.findall(r"crate::\{([^}]*)\}", text):  # use crate::{a, b};
            edges[m] |= {name.strip().split("::")[0] for name in group.split(",")} & modules
        edges[m] |= set(re.findall(r"crate::(\w+)", text)) & modules
        edges[m].discard(m)
    done: set[str] = set()

    def visit(m: str, path: tuple[str, ...]) -> None:
        assert m not in path, "cycle: " + " -> ".join(path + (m,))
        if m not in done:
            for n in edges[m]:
                visit(n, path + (m,))
            done.add(m)

    for m in modules:
        visit(m, ())
