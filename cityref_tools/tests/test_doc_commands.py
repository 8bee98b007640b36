"""scripts/doc_commands.py, the runner of the documents' shell blocks: a broken command fails the run."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("doc_commands", ROOT / "scripts" / "doc_commands.py")
doc_commands = sys.modules["doc_commands"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(doc_commands)


def write(tmp_path: Path, text: str) -> Path:
    doc = tmp_path / "README.md"
    doc.write_text(text)
    return doc


def run(tmp_path: Path, doc: Path, capsys) -> tuple[int, str]:
    rc = doc_commands.main(["run", str(doc), "--logs", str(tmp_path / "logs"), "--cwd", str(tmp_path)])
    return rc, capsys.readouterr().out


def test_a_broken_command_fails_the_run(tmp_path, capsys):
    doc = write(
        tmp_path,
        "Start it:\n\n```bash\necho hello > greeting\n```\n\n"
        "Then:\n\n```bash\ncat greeting\nno-such-command --flag\n```\n",
    )
    rc, out = run(tmp_path, doc, capsys)
    assert rc == 1
    assert "README.md:3" in out and "ok" in out.splitlines()[0]
    assert "README.md:9" in out and "FAILED" in out
    assert "no-such-command: command not found" in out  # the log's tail is shown
    assert "1 of 2 blocks ok" in out


def test_every_line_must_succeed_not_only_the_last(tmp_path, capsys):
    doc = write(tmp_path, "```sh\nfalse\ntrue\n```\n")
    assert run(tmp_path, doc, capsys)[0] == 1
    doc = write(tmp_path, "```sh\nfalse | true\n```\n")
    assert run(tmp_path, doc, capsys)[0] == 1  # pipefail


def test_working_blocks_pass_and_other_fences_do_not_run(tmp_path, capsys):
    doc = write(tmp_path, "```\nnot a command\n```\n\n```yaml\nkey: value\n```\n\n```bash\ntrue  # fine\n```\n")
    rc, out = run(tmp_path, doc, capsys)
    assert rc == 0, out
    assert "1 of 1 blocks ok" in out


def test_directives_swap_lines_fill_your_placeholders_and_wrap_the_block(tmp_path, capsys):
    doc = write(
        tmp_path,
        "<!-- doc-test\n"
        'instead of "make everything": "echo swapped >> trace"\n'
        'your "/path/to/your-server": "echo served"\n'
        "before: echo before > trace\n"
        "after: echo after >> trace\n"
        "-->\n"
        "```bash\n"
        "make everything     # an hour, not here\n"
        "/path/to/your-server >> trace\n"
        "```\n",
    )
    rc, out = run(tmp_path, doc, capsys)
    assert rc == 0, out
    assert (tmp_path / "trace").read_text().split() == ["before", "swapped", "served", "after"]


def test_skipped_blocks_need_a_reason(tmp_path, capsys):
    skip = "<!-- doc-test\nskip: needs Docker Hub; the podman block runs instead\n-->\n"
    doc = write(tmp_path, skip + "```bash\nfalse\n```\n")
    rc, out = run(tmp_path, doc, capsys)
    assert rc == 0 and "skipped: needs Docker Hub" in out
    doc = write(tmp_path, "<!-- doc-test\nskip:\n-->\n```bash\nfalse\n```\n")
    assert run(tmp_path, doc, capsys)[0] == 1


@pytest.mark.parametrize(
    "text, problem",
    [
        ("```bash\npip install cityref@<tag>\n```\n", "unfilled placeholder"),
        ('<!-- doc-test\nyour "<tag>": "v1"\n-->\n```bash\npip install cityref@<tag>\n```\n', "does not say 'your'"),
        ('<!-- doc-test\ninstead of "make bench": "true"\n-->\n```bash\nmake up\n```\n', "no line runs"),
        ("<!-- doc-test\nretry: 3\n-->\n```bash\ntrue\n```\n", "unknown doc-test directive"),
    ],
)
def test_mistakes_in_the_document_fail_before_anything_runs(tmp_path, capsys, text, problem):
    doc = write(tmp_path, "```bash\ntouch ran\n```\n" + text)
    rc = doc_commands.main(["run", str(doc), "--logs", str(tmp_path / "logs"), "--cwd", str(tmp_path)])
    assert rc == 1
    assert problem in capsys.readouterr().err
    assert not (tmp_path / "ran").exists()


def test_a_named_block_runs_alone_even_when_skipped_here(tmp_path, capsys):
    doc = write(
        tmp_path,
        "```bash\ntouch first\n```\n<!-- doc-test\nname: elsewhere\nskip: run by another script\n-->\n"
        "```bash\ntouch named\n```\n",
    )
    args = ["--only", "elsewhere", "--logs", str(tmp_path / "l"), "--cwd", str(tmp_path)]
    rc = doc_commands.main(["run", str(doc), *args])
    assert rc == 0, capsys.readouterr().out
    assert (tmp_path / "named").exists() and not (tmp_path / "first").exists()


def test_a_document_without_commands_is_a_mistake(tmp_path, capsys):
    doc = write(tmp_path, "no blocks here\n")
    assert doc_commands.main(["run", str(doc), "--logs", str(tmp_path / "logs")]) == 1
    assert "no shell block" in capsys.readouterr().err


def test_issue_references_are_found(tmp_path):
    doc = tmp_path / "a.md"
    doc.write_text("Fixed in issue 27.\nSee #12.\nAfter this issue's cuts.\nCity#7, servlet#962, [x](#top), &#123;\n")
    found = doc_commands.issue_refs([doc])
    assert [f.split(": ", 1)[1] for f in found] == ["'issue 27'", "'#12'", "'this issue'"]


def test_the_repository_documents_are_well_formed(capsys):
    """Every directive of the documents make test runs is valid, before the long stages run them."""
    docs = [ROOT / "README.md", ROOT / "conformance" / "README.md", ROOT / "Dockerfiles" / "README.md"]
    assert doc_commands.main(["list", *map(str, docs)]) == 0, capsys.readouterr().err
    listed = capsys.readouterr().out
    assert "make up" in listed and "podman-compose up -d --no-deps" in listed
    assert doc_commands.main(["issue-refs"]) == 0, capsys.readouterr().out
