"""Judging a service's stdout against the spec's `LOG_LEVEL` (section "Operation of a service",
Logging): the lowest level written, from the first line on. At `warn` a served request writes no
line and startup no `info` line; at `error` no `warn` line either (an Elasticsearch failure's
warning included); `info` and `debug` log every request, once, at `info`.

Pure functions over captured lines (conformance.service.LogLine), so that the lifecycle check's
judgment is self-tested without a process.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

# LOG_LEVEL's values, lowest first.
LEVELS = ("debug", "info", "warn", "error")
# Where a line's `level` ranks: the spec's four, plus the two common names beyond them, so that a
# `trace` line counts as below debug and a `fatal` line as at or above error.
RANK = {"trace": -1, **{name: i for i, name in enumerate(LEVELS)}, "fatal": len(LEVELS)}


def log_level_problems(level: str, lines: Iterable, sent_targets: Sequence[str]) -> list[str]:
    """What breaks the spec in the stdout ``lines`` of an instance started with LOG_LEVEL=``level``
    that was sent the requests ``sent_targets`` (each target exactly as sent, so unique to the run):

    * at ``warn`` and ``error``: every line is at ``level`` or above (a line that is not JSON or has
      no known level is not), and no line has a ``path`` that is a sent target (a served request
      writes no line);
    * at ``info`` and ``debug``: each sent target has exactly one line with that ``path``, at ``info``.

    Every problem names LOG_LEVEL, the offending line's level and the line (cut to 300 characters).
    """
    if level not in LEVELS:
        raise ValueError(f"LOG_LEVEL {level!r} is not one of {', '.join(LEVELS)}")
    sent = set(sent_targets)
    parsed = [(ln, ln.json()) for ln in lines]
    problems: list[str] = []
    if RANK[level] >= RANK["warn"]:
        for ln, obj in parsed:
            if obj is None:
                problems.append(f"LOG_LEVEL={level}: a line that is not a JSON log line (no level): {ln.text[:300]}")
                continue
            got = obj.get("level")
            path = obj.get("path")
            if isinstance(path, str) and path in sent:
                problems.append(
                    f"LOG_LEVEL={level}: a line at level {got!r} for the served request {path}"
                    f" (at {level} a request writes no line): {ln.text[:300]}"
                )
            elif not isinstance(got, str) or got not in RANK:
                problems.append(
                    f"LOG_LEVEL={level}: a line at level {got!r}, not a level at or above {level}: {ln.text[:300]}"
                )
            elif RANK[got] < RANK[level]:
                problems.append(f"LOG_LEVEL={level}: a line at level {got!r}, below {level}: {ln.text[:300]}")
        return problems
    for target in sent_targets:
        hits = [(ln, obj) for ln, obj in parsed if obj is not None and obj.get("path") == target]
        if len(hits) != 1:
            shown = "".join(f"\n    {ln.text[:300]}" for ln, _ in hits[:3])
            problems.append(
                f'LOG_LEVEL={level}: {len(hits)} lines with "path": {target!r}, want exactly 1 (at {level} every'
                f" request is logged once){shown}"
            )
            continue
        ln, obj = hits[0]
        if obj.get("level") != "info":
            problems.append(
                f"LOG_LEVEL={level}: request {target} logged at level {obj.get('level')!r}, want info: {ln.text[:300]}"
            )
    return problems
