"""No import cycle among the modules of bench/ or of conformance/ (each package with its tests): every
`import` and `from … import`, at module level or inside a function, since a lazy import only puts the
cycle off until the function runs. Read from the source with ast, nothing is imported."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Each module of `package` (a directory under `root`) and the modules of that package it imports.

    Importing a.b.c runs a, a.b and a.b.c; `from a.b import c` runs a.b.c too when c is a module. Of
    these, the importer's own packages are left out (they are always under way before it runs), unless
    the import takes names from one of them: that waits for the package's __init__ to have run."""
    paths = {module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        own = name if path.name == "__init__.py" else name.rpartition(".")[0]
        ancestors = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [(a.name, None) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = own.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
                targets = [(base, a.name) for a in node.names]
            else:
                continue
            for module, attr in targets:
                if attr and f"{module}.{attr}" in paths:
                    module, attr = f"{module}.{attr}", None
                parts = module.split(".")
                ran = [m for m in (".".join(parts[:i]) for i in range(1, len(parts) + 1)) if m in paths]
                edges.update(m for m in ran if m not in ancestors)
                if attr and ran and ran[-1] == module and module in ancestors and module != name:
                    edges.add(module)  # a name from the importer's own package: its __init__ must have run
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected group of modules (Tarjan), as the path a → … → a from the
    group's first module by name, shortest first found by breadth."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                group.add(w)
                if w == v:
                    break
            if len(group) > 1 or v in graph.get(v, ()):
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    out = []
    for group in groups:
        start = min(group)
        paths = {start: [start]}
        queue = [start]
        while queue:
            v = queue.pop(0)
            nxt = sorted(w for w in graph.get(v, ()) if w in group)
            if start in nxt:
                out.append([*paths[v], start])
                break
            for w in nxt:
                if w not in paths:
                    paths[w] = [*paths[v], w]
                    queue.append(w)
    return sorted(out)


@pytest.mark.parametrize("package", ["bench", "conformance"])
def test_no_import_cycle(package: str) -> None:
    graph = import_graph(ROOT, package)
    assert f"{package}.cli" in graph and graph[f"{package}.cli"], "the graph was not read"
    assert cycles(graph) == [], "import cycles: " + "; ".join(" → ".join(c) for c in cycles(graph))


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return root


def test_a_lazy_import_closes_a_cycle(tmp_path: Path) -> None:
    """The shape the resilience run and its report had: one imports the other at the top, the other
    imports it back inside a function."""
    tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/run.py": "def finish():\n    from . import report\n",
            "pkg/report.py": "from . import run\n",
            "pkg/other.py": "import pkg.run\n",
        },
    )
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.run"] == {"pkg.report"} and graph["pkg.other"] == {"pkg.run"}
    assert cycles(graph) == [["pkg.report", "pkg.run", "pkg.report"]]


def test_relative_imports_resolve_to_modules_and_packages(tmp_path: Path) -> None:
    tree(
        tmp_path,
        {
            "pkg/__init__.py": "from .sub import api\n",
            "pkg/util.py": "import os\nfrom collections import abc\n",
            "pkg/sub/__init__.py": "from .api import f\n",
            "pkg/sub/api.py": "from ..util import g\nfrom . import impl\nfrom .. import util as u\n",
            "pkg/sub/impl.py": "from pkg.sub import deep\n",
            "pkg/sub/deep.py": "",
        },
    )
    graph = import_graph(tmp_path, "pkg")
    assert graph == {
        "pkg": {"pkg.sub", "pkg.sub.api"},
        "pkg.util": set(),
        "pkg.sub": {"pkg.sub.api"},
        "pkg.sub.api": {"pkg.util", "pkg.sub.impl"},
        "pkg.sub.impl": {"pkg.sub.deep"},
        "pkg.sub.deep": set(),
    }
    assert cycles(graph) == []  # a package's __init__ importing its modules is no cycle


def test_a_name_from_the_own_package_waits_for_its_init(tmp_path: Path) -> None:
    """`from . import NAME` where NAME is defined in the package's __init__, which imports this module
    first: the name is not there yet."""
    tree(tmp_path, {"pkg/__init__.py": "from .a import f\nNAME = 1\n", "pkg/a.py": "from . import NAME\n"})
    assert cycles(import_graph(tmp_path, "pkg")) == [["pkg", "pkg.a", "pkg"]]


def test_the_finder_on_a_graph() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}, "f": {"d"}}
    assert cycles(graph) == [["a", "b", "c", "a"], ["e", "e"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
