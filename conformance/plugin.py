"""pytest plugin of the runner: check ids, known failures as strict xfail, the per-group tally."""

from __future__ import annotations

import collections
import dataclasses

import pytest

from conformance import runtime

OUTCOMES = ("passed", "failed", "xfailed", "skipped")


def check_id(item) -> str:
    module = item.module.__name__.rsplit(".", 1)[-1]
    group = runtime.MODULE_GROUP.get(module, module)
    callspec = getattr(item, "callspec", None)
    if callspec is not None and len(callspec.params) == 1 and group in ("golden", "spec"):
        name = callspec.id
    else:
        name = item.originalname.removeprefix("test_").replace("_", "-")
        if callspec is not None:
            name += f"[{callspec.id}]"
    return f"{group}/{name}"


@dataclasses.dataclass
class Result:
    check: str
    outcome: str
    message: str = ""


class RunnerPlugin:
    def __init__(self, known: dict[str, str], groups: list[str]):
        self.known = known
        self.groups = groups
        self.results: dict[str, Result] = {}
        self.ids: dict[str, str] = {}  # nodeid -> check id

    # collection ------------------------------------------------------------------------------
    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session, config, items):
        seen = set()
        for item in items:
            cid = check_id(item)
            self.ids[item.nodeid] = cid
            item.user_properties.append(("check", cid))
            seen.add(cid)
            if cid in self.known:
                item.add_marker(pytest.mark.xfail(reason=f"known failure: {self.known[cid]}", strict=True))
        stale = sorted(c for c in self.known if c.split("/", 1)[0] in self.groups and c not in seen)
        if stale:
            raise pytest.UsageError(f"known_failures names checks that do not exist: {', '.join(stale)}")

    # results ---------------------------------------------------------------------------------
    def pytest_runtest_logreport(self, report):
        cid = self.ids.get(report.nodeid, report.nodeid)
        prev = self.results.get(cid)
        if prev is not None and prev.outcome in ("failed", "skipped", "xfailed"):
            return  # the first decisive phase wins (a failed setup stays failed)
        if report.when == "call" or report.outcome != "passed":
            if hasattr(report, "wasxfail"):
                outcome = "xfailed" if report.skipped else "failed"  # strict xpass reports failed
                message = report.wasxfail
            elif report.failed:
                outcome = "failed"
                message = first_line(report)
            elif report.skipped:
                outcome = "skipped"
                message = skip_reason(report)
            else:
                outcome = "passed"
                message = ""
            if report.when == "teardown" and report.failed and prev is not None and prev.outcome == "passed":
                outcome, message = "failed", "teardown: " + first_line(report)
            if report.when != "teardown" or report.failed:
                self.results[cid] = Result(cid, outcome, message)

    def tally(self) -> dict[str, collections.Counter]:
        out: dict[str, collections.Counter] = {g: collections.Counter() for g in self.groups}
        for r in self.results.values():
            out.setdefault(r.check.split("/", 1)[0], collections.Counter())[r.outcome] += 1
        return out


def first_line(report) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("assert ") and line != "AssertionError":
            return line.removeprefix("AssertionError: ").removeprefix("Failed: ")[:200]
    return text.strip().splitlines()[0][:200] if text.strip() else "failed"


def skip_reason(report) -> str:
    lr = report.longrepr
    if isinstance(lr, tuple) and len(lr) == 3:
        return str(lr[2]).removeprefix("Skipped: ")
    return str(lr)[:200]
