"""services/README.md's role → file table names every source file of every service, and only files
that exist."""

from __future__ import annotations

import pathlib
import re

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
SERVICES = ROOT / "services"
# Where each ecosystem keeps its (non-test, non-generated) sources, relative to the service, by the
# first word of its descriptor's language (a new service in one of these languages needs no edit here).
LAYOUTS = {
    "Go": ("", "*.go"),
    "Rust": ("", "src/*.rs"),
    "Kotlin": ("src/main/kotlin/cityref", "*.kt"),
    "Java": ("src/main/java/cityref", "*.java"),
}


def _sources() -> dict[str, tuple[str, str]]:
    out = {}
    for path in sorted(SERVICES.glob("*/cityref.yaml")):
        language = str(yaml.safe_load(path.read_text(encoding="utf-8")).get("language", "")).split(" ")[0]
        assert language in LAYOUTS, f"{path}: no source layout for the language {language!r} (LAYOUTS)"
        out[path.parent.name] = LAYOUTS[language]
    return out


SOURCES = _sources()


def role_rows() -> list[str]:
    """The role table of services/README.md: its header and body rows (the |---| line left out)."""
    lines = (SERVICES / "README.md").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| role | go-kit"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return [line for line in lines[start:end] if line.startswith("| ")]


def table() -> dict[str, set[str]]:
    rows = role_rows()
    header = rows[0]
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


# The dependency direction of services/README.md: which roles each role may use. `main` wires
# everything; `errors`, `config` and `telemetry` are leaves that anything may use (and that use
# only each other).
LEAVES = {"errors", "config", "telemetry"}
MAY_USE = {
    "main": {"transport", "service", "repository", "query"} | LEAVES,
    "transport": {"service", "query"} | LEAVES,
    "service": {"repository", "query"} | LEAVES,
    "repository": LEAVES,
    "query": LEAVES,
    **dict.fromkeys(LEAVES, LEAVES),
}
DECLARATIONS = {  # top-level names a file declares that other files of the same package can use
    ".go": [
        r"^func (\w+)",
        r"^type (\w+)",
        r"^(?:var|const) (\w+)",
    ],
    ".kt": [
        r"^(?:public |internal )?(?:data |sealed |enum |abstract |open |value |inline |const |annotation )*"
        r"(?:class|object|interface|fun|val|var|typealias) (?:<[^>]*> )?(?:\w+\.)?(\w+)"
    ],
    ".java": [r"^(?:public |final |abstract |sealed |non-sealed )*(?:class|interface|record|enum) (\w+)"],
}


def roles(name: str) -> dict[str, str]:
    """{file: role} of one service from the table; a shared file ("(java-shared's Query.java)") by its
    absolute path, so that the code both services compile is checked in each of them."""
    out = {}
    base, _ = SOURCES[name]
    for role, files in role_files(name).items():
        for f in files:
            own = SERVICES / name / base / f
            shared = [p for p in SERVICES.glob(f"*-shared/{base}/{f}") if not own.exists()]
            out[str(shared[0]) if shared else f] = role
    return out


GENERATED = {"models"}  # rust-actix's include of the generated models: like a leaf, anyone may use it


def go_blocks(text: str) -> set[str]:
    """Names declared in Go's top-level `var ( ... )` and `const ( ... )` blocks."""
    names = set()
    for block in re.findall(r"^(?:var|const) \(\n(.*?)^\)", text, flags=re.M | re.S):
        names |= set(re.findall(r"^\t(\w+)", block, flags=re.M))
    return names


def code_only(text: str) -> str:
    """Source without comments, string literals, package and import lines (so that a word in prose,
    or the package's own name, is no reference)."""
    text = re.sub(r"^(?:package|import) [^\n(]*$", " ", text, flags=re.M)
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r'"""(?:.|\n)*?"""', '""', text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"`[^`]*`", "``", text)  # Go raw strings
    return re.sub(r"//[^\n]*", " ", text)


def role_edges(name: str) -> set[tuple[str, str, str]]:
    """(role, used role, the name that shows it) for every reference between roles of a service."""
    base, _ = SOURCES[name]
    root = SERVICES / name / base
    by_file = roles(name)
    texts = {f: (root / f).read_text() for f in by_file}
    edges = set()
    if name == "rust-actix":
        module_role = {pathlib.Path(f).stem: r for f, r in by_file.items()}
        for f, text in texts.items():
            used = set(re.findall(r"crate::(\w+)", text))
            for group in re.findall(r"crate::\{([^}]*)\}", text):
                used |= {n.strip().split("::")[0] for n in group.split(",")}
            for m in (used & set(module_role)) - GENERATED:
                edges.add((by_file[f], module_role[m], f"crate::{m}"))
        return edges
    declared: dict[str, str] = {}  # name -> role
    for f, text in texts.items():
        names = go_blocks(code_only(text)) if f.endswith(".go") else set()
        for pattern in DECLARATIONS[pathlib.Path(f).suffix]:
            names |= set(re.findall(pattern, code_only(text), flags=re.M))
        for n in names - {"main", "init", "_"}:
            declared.setdefault(n, by_file[f])
    for f, text in texts.items():
        code = code_only(text)
        # A capitalised name (a type, an exported function or constant), or any name called: a lower-case
        # name alone is as likely a parameter or local that shadows it.
        words = set(re.findall(r"\b[A-Z]\w*\b", code)) | set(re.findall(r"\b([a-z_]\w*)\s*\(", code))
        words |= set(re.findall(r"\.([a-z_]\w*)\s*\(", code))  # Kotlin extension calls: x.problems()
        words -= set(re.findall(r"^import [\w.]*\.(\w+);", text, flags=re.M))  # Java: a class of that name imported
        for n in words & set(declared):
            if declared[n] != by_file[f]:
                edges.add((by_file[f], declared[n], n))
    return edges


def test_every_service_depends_one_way():
    """Every reference from one role's file to a name another role declares follows MAY_USE."""
    bad = []
    for name in SOURCES:
        for role, used, via in sorted(role_edges(name)):
            if used not in MAY_USE.get(role, set()):
                bad.append(f"{name}: {role} uses {used} ({via})")
    assert not bad, "\n".join(bad)


# A role's file is named for the role in every language (language conventions aside: Go and Rust
# name a file for its module, Java and Kotlin for its class, `City`/`App` prefixed). Spring's own
# conventions are the two exceptions: the `@RestController` is the first file of its transport, and
# Spring Boot's main class is `Application`.
FRAMEWORK_NAMES = {("java-spring-boot", "transport"): "CityController", ("java-spring-boot", "main"): "Application"}
# The service and the lookup seam have one name in every language.
SHARED_TYPES = ("CityService", "CityLookup", "CityRepository")


def role_files(name: str) -> dict[str, list[str]]:
    """{role: file names in the order the table lists them}, shared files ("(kotlin-shared's X.kt)") included."""
    rows = role_rows()
    header = rows[0]
    names = [c.strip() for c in header.strip("|").split("|")][1:]
    out = {}
    for row in rows[rows.index(header) + 1 :]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        cell = cells[1 + names.index(name)]
        files = []
        for ticked, _owner, shared in re.findall(r"`([^`]+)`|\((?:\+ )?([\w-]+)'s ([^)]*)\)", cell):
            files += [ticked] if ticked else re.findall(r"[\w.]+\.\w+", shared)
        out[cells[0]] = files
    return out


def _key(file: str) -> str:
    stem = pathlib.Path(file).stem.lower().replace("_", "")
    return re.sub(r"s$", "", re.sub(r"^(city|app)(?=.)", "", stem))


def test_each_role_has_one_file_name_in_every_language():
    bad = []
    for name in SOURCES:
        for role, files in role_files(name).items():
            assert files, f"{name}: no file for {role}"
            expected = FRAMEWORK_NAMES.get((name, role))
            first = pathlib.Path(files[0]).stem
            if expected is not None:
                if first != expected:
                    bad.append(f"{name}: {role} is {files[0]}, the framework's convention is {expected}")
            elif _key(files[0]) != _key(role):
                bad.append(f"{name}: {role}'s first file is {files[0]}, not named for the role")
    assert not bad, "\n".join(bad)


def test_the_service_and_its_lookup_have_one_name_everywhere():
    bad = []
    for name in SOURCES:
        base, pattern = SOURCES[name]
        files = list((SERVICES / name / base).glob(pattern))
        shared = {"Java": "java-shared", "Kotlin": "kotlin-shared"}.get(
            {"*.java": "Java", "*.kt": "Kotlin"}.get(pattern, ""), ""
        )
        if shared:
            files += list((SERVICES / shared / base).glob(pattern))
        code = "\n".join(code_only(f.read_text()) for f in files)
        for type_name in SHARED_TYPES:
            declared = rf"\b(?:type|struct|trait|class|interface|object)\s+{type_name}\b"
            if not re.search(declared, code):
                bad.append(f"{name}: no type {type_name}")
    assert not bad, "\n".join(bad)


def test_the_shared_files_the_table_names_exist():
    rows = [line for line in (SERVICES / "README.md").read_text().splitlines() if line.startswith("| ")]
    missing = []
    for owner, listed in re.findall(r"\((?:\+ )?([\w-]+)'s ([^)]*)\)", "\n".join(rows)):
        layout = LAYOUTS["Kotlin" if owner.startswith("kotlin") else "Java"][0]
        for f in re.findall(r"[\w.]+\.\w+", listed):
            if not (SERVICES / owner / layout / f).exists():
                missing.append(f"{owner}/{layout}/{f}")
    assert not missing, missing
