"""Runs the shell blocks of the repository's documents verbatim: `make test`'s proof that the
commands a reader copies work as printed.

    scripts/python.sh scripts/doc_commands.py run README.md conformance/README.md …
    scripts/python.sh scripts/doc_commands.py list README.md …   # what would run, without running it
    scripts/python.sh scripts/doc_commands.py issue-refs         # documents that cite an issue number

A block is a fenced ```bash (or sh, shell) block; other fences (output, YAML, requests) are not
run. Each block runs with `bash -e -o pipefail` from the repository root, in document order, in
the environment `make test` has set up by then (services built, images archived in out/images/),
plus .cache/venv/bin at the end of PATH (podman-compose, as `pip install podman-compose` gives it) and
CONTAINERS_CONF=tools/containers/containers.conf (the machines this runs on need runc, cgroupfs and
lowered ulimits for podman; the README says so in one line).

A block that cannot run here carries directives in an HTML comment just above its fence, one per
line, and the text around it says the same to the reader:

    <!-- doc-test
    instead of "make test": "make -n test"      a line whose command is exactly `make test` runs the other
    your "/path/to/your-server": "services/go-kit/bin/cityref-go-kit"   a placeholder the text calls "your …"
    before: CMD                                  set-up the reader has done already (e.g. start their server)
    after: CMD                                   clean-up, run even when the block fails
    skip: WHY                                    not run here; WHY names what runs in its place
    name: NAME                                   `run --only NAME` runs it (skipped or not), e.g. from
                                                 another script's set-up (scripts/package-test.sh)
    timeout: SECONDS                             default 1200
    -->

Every placeholder must say "your"; a `<word>` left in a block that runs is an error.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHELLS = {"bash", "sh", "shell"}
FENCE = re.compile(r"^(\s*)(```+)\s*([\w-]*)\s*$")
DIRECTIVE = re.compile(r"<!--\s*doc-test\b(.*?)-->", re.S)
QUOTED_PAIR = re.compile(r'^(instead of|your)\s+"([^"]+)"\s*:\s*"([^"]*)"\s*$')
PLACEHOLDER = re.compile(r"(?<![<\w])<[a-z][\w .-]*>(?![>\w])")
ISSUE_REF = re.compile(r"\b[Ii]ssues?\s+#?\d+\b|(?<![\w&/#-])#\d{1,4}\b(?!-)|\b(?:[Tt]his|[Tt]he) issue\b")
DEFAULT_TIMEOUT = 1200


def command_of(line: str) -> str:
    """A block line's command: stripped, without a trailing `# comment` (what `instead of` matches)."""
    return re.sub(r"\s+#\s.*$", "", line.strip())


@dataclass
class Block:
    doc: Path
    line: int  # 1-based line of the opening fence
    text: str
    instead: dict[str, str] = field(default_factory=dict)
    your: dict[str, str] = field(default_factory=dict)
    before: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    skip: str | None = None
    name: str | None = None
    timeout: int = DEFAULT_TIMEOUT

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"

    def script(self) -> str:
        """The block as it runs: placeholders filled, `instead of` lines swapped."""
        text = self.text
        for placeholder, value in self.your.items():
            text = text.replace(placeholder, value)
        out = []
        for line in text.splitlines():
            out.append(self.instead.get(command_of(line), line))
        return "\n".join(out) + "\n"

    def problems(self) -> list[str]:
        found = []
        for placeholder in self.your:
            if "your" not in placeholder.lower():
                found.append(f"{self.where}: placeholder {placeholder!r} does not say 'your'")
            if placeholder not in self.text:
                found.append(f"{self.where}: placeholder {placeholder!r} is not in the block")
        for command in self.instead:
            if not any(command_of(ln) == command for ln in self.text.splitlines()):
                found.append(f"{self.where}: no line runs {command!r} (instead of)")
        if self.skip is None:
            left = PLACEHOLDER.findall(self.script())
            if left:
                found.append(f"{self.where}: unfilled placeholder(s) {', '.join(left)}")
        elif not self.skip.strip():
            found.append(f"{self.where}: skip needs a reason that names what runs instead")
        return found


def parse_directives(block: Block, body: str) -> None:
    for raw in body.strip().splitlines():
        line = raw.strip()
        if not line:
            continue
        pair = QUOTED_PAIR.match(line)
        key, _, value = line.partition(":")
        if pair:
            (block.instead if pair.group(1) == "instead of" else block.your)[pair.group(2)] = pair.group(3)
        elif key in ("before", "after"):
            getattr(block, key).append(value.strip())
        elif key == "skip":
            block.skip = value.strip()
        elif key == "name":
            block.name = value.strip()
        elif key == "timeout":
            block.timeout = int(value)
        else:
            raise ValueError(f"{block.where}: unknown doc-test directive {line!r}")


def blocks(doc: Path) -> list[Block]:
    """The shell blocks of a Markdown document, with the directives above each."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.groups()
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        if lang in SHELLS:
            body = "\n".join(ln[len(indent) :] if ln.startswith(indent) else ln for ln in lines[i + 1 : j])
            block = Block(doc, i + 1, body)
            above = "\n".join(lines[max(0, i - 12) : i])
            directives = list(DIRECTIVE.finditer(above))
            if directives and not above[directives[-1].end() :].strip():
                parse_directives(block, directives[-1].group(1))
            found.append(block)
        i = j + 1
    return found


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{env.get('PATH', '')}{os.pathsep}{ROOT / '.cache' / 'venv' / 'bin'}"
    env["CONTAINERS_CONF"] = str(ROOT / "tools" / "containers" / "containers.conf")
    return env


def shell(script: str, log, timeout: float, env: dict[str, str], cwd: Path) -> int:
    try:
        return subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", script],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=timeout,
            start_new_session=True,
        ).returncode
    except subprocess.TimeoutExpired:
        log.write(f"\n# timed out after {timeout:g} s\n".encode())
        return 124


def run_block(block: Block, logs: Path, cwd: Path = ROOT) -> bool:
    """Runs one block (with its before/after); prints one line, and the log's tail on failure."""
    if block.skip is not None:
        print(f"{block.where:<32} skipped: {block.skip}", flush=True)
        return True
    logs.mkdir(parents=True, exist_ok=True)
    log_path = logs / f"{block.doc.as_posix().replace('/', '_')}-{block.line}.log"
    env = environment()
    t0 = time.monotonic()
    with open(log_path, "wb") as log:
        rc = 0
        for cmd in block.before:
            log.write(f"$ {cmd}   # before\n".encode())
            log.flush()
            rc = rc or shell(cmd, log, block.timeout, env, cwd)
        if rc == 0:
            log.write(f"$ {block.script()}".encode())
            log.flush()
            rc = shell(block.script(), log, block.timeout, env, cwd)
        for cmd in block.after:
            log.write(f"$ {cmd}   # after\n".encode())
            log.flush()
            shell(cmd, log, 120, env, cwd)
    took = time.monotonic() - t0
    if rc == 0:
        print(f"{block.where:<32} ok       {took:6.1f} s", flush=True)
        return True
    print(f"{block.where:<32} FAILED   {took:6.1f} s (exit {rc}; log: {log_path})", flush=True)
    tail = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-25:]
    print("\n".join("    " + ln for ln in tail), flush=True)
    return False


def issue_refs(paths: list[Path]) -> list[str]:
    found = []
    for path in paths:
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            for m in ISSUE_REF.finditer(line):
                found.append(f"{path}:{n}: {m.group(0)!r}")
    return found


def tracked_documents() -> list[Path]:
    names = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [Path(n) for n in names.stdout.split()]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=["run", "list", "issue-refs"])
    p.add_argument("documents", nargs="*", type=Path)
    p.add_argument("--logs", type=Path, default=ROOT / "out" / "results" / "doc-commands")
    p.add_argument("--only", metavar="NAME", help="run only the block named NAME (its skip: does not apply)")
    p.add_argument("--cwd", type=Path, default=ROOT, help="where the blocks run (default: the repository root)")
    a = p.parse_args(argv)
    if a.action == "issue-refs":
        found = issue_refs([ROOT / d for d in (a.documents or tracked_documents())])
        print("\n".join(found) or "no document cites an issue number")
        return 1 if found else 0
    if not a.documents:
        p.error("name the documents")
    try:
        found = [b for d in a.documents for b in blocks(d)]
    except ValueError as e:
        print(e, file=sys.stderr)
        return 1
    if a.only:
        found = [b for b in found if b.name == a.only]
        if not found:
            print(f"no block named {a.only!r}", file=sys.stderr)
            return 1
        for b in found:
            b.skip = None
    problems = [pr for b in found for pr in b.problems()]
    problems += [f"{d}: no shell block" for d in a.documents if not any(b.doc == d for b in found)]
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    if a.action == "list":
        for b in found:
            print(f"--- {b.where}" + (f"  (skipped: {b.skip})" if b.skip is not None else ""))
            print("".join(f"before: {c}\n" for c in b.before) + b.script() + "".join(f"after: {c}\n" for c in b.after))
        return 0
    results = [run_block(b, a.logs, a.cwd) for b in found]
    ran = sum(1 for b in found if b.skip is None)
    print(f"{sum(results)} of {len(results)} blocks ok ({ran} run, {len(results) - ran} skipped)")
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
