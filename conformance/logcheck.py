"""Judging a service's stdout against the spec's `LOG_LEVEL` (section "Operation of a service",
Logging): the lowest level written, from the first line on. At `warn` a served request writes no
line and startup no `info` line; at `error` no `warn` line either (an Elasticsearch failure's
warning included); `info` and `debug` log every request, once, at `info`.

Also the shape of every line and of the request lines. The keys are the service's
(conformance.observe.LogKeys, from its descriptor). Pure functions over captured lines
(conformance.service.LogLine), so that the lifecycle checks' judgments are self-tested without a
process.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from conformance.observe import LEVELS, LogKeys


def lines_for(parsed: Sequence[tuple], target: str, keys: LogKeys) -> list[tuple]:
    """The (line, parsed object) pairs whose path (under ``keys``) is exactly ``target``."""
    return [(ln, obj) for ln, obj in parsed if obj is not None and keys.get(obj, keys.path) == target]


def log_level_problems(
    level: str, lines: Iterable, sent_targets: Sequence[str], keys: LogKeys | None = None
) -> list[str]:
    """What breaks the spec in the stdout ``lines`` of an instance started with LOG_LEVEL=``level``
    that was sent the requests ``sent_targets`` (each target exactly as sent, so unique to the run),
    read with the service's log ``keys`` (its descriptor's; the spec's defaults when None):

    * at ``warn`` and ``error``: every line is at ``level`` or above (a line that is not JSON or has
      no known level is not), and no line has a ``path`` that is a sent target (a served request
      writes no line);
    * at ``info`` and ``debug``: each sent target has exactly one line with that ``path``, at ``info``.

    Every problem names LOG_LEVEL, the offending line's level and the line (cut to 300 characters).
    """
    if level not in LEVELS:
        raise ValueError(f"LOG_LEVEL {level!r} is not one of {', '.join(LEVELS)}")
    keys = keys or LogKeys()
    floor = LEVELS.index(level)
    sent = set(sent_targets)
    parsed = [(ln, ln.json()) for ln in lines]
    problems: list[str] = []
    if floor >= LEVELS.index("warn"):
        for ln, obj in parsed:
            if obj is None:
                problems.append(f"LOG_LEVEL={level}: a line that is not a JSON log line (no level): {ln.text[:300]}")
                continue
            got, rank = keys.get(obj, keys.level), keys.rank(obj)
            path = keys.get(obj, keys.path)
            if isinstance(path, str) and path in sent:
                problems.append(
                    f"LOG_LEVEL={level}: a line at level {got!r} for the served request {path}"
                    f" (at {level} a request writes no line): {ln.text[:300]}"
                )
            elif rank is None:
                problems.append(
                    f"LOG_LEVEL={level}: a line at level {got!r}, not a level at or above {level}: {ln.text[:300]}"
                )
            elif rank < floor:
                problems.append(f"LOG_LEVEL={level}: a line at level {got!r}, below {level}: {ln.text[:300]}")
        return problems
    for target in sent_targets:
        hits = lines_for(parsed, target, keys)
        if len(hits) != 1:
            shown = "".join(f"\n    {ln.text[:300]}" for ln, _ in hits[:3])
            problems.append(
                f'LOG_LEVEL={level}: {len(hits)} lines with "path": {target!r}, want exactly 1 (at {level} every'
                f" request is logged once){shown}"
            )
            continue
        ln, obj = hits[0]
        if keys.level_of(obj) != "info":
            problems.append(
                f"LOG_LEVEL={level}: request {target} logged at level {keys.get(obj, keys.level)!r}, want info:"
                f" {ln.text[:300]}"
            )
    return problems


RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def line_problems(lines: Iterable, keys: LogKeys | None = None) -> list[str]:
    """Every line is a JSON object with a time (RFC 3339), one of the service's level names and a
    message (a string), under the service's ``keys``."""
    keys = keys or LogKeys()
    problems = []
    for ln in lines:
        obj = ln.json()
        if obj is None:
            problems.append(f"not a JSON object: {ln.text[:200]!r}")
            continue
        ts, level, msg = keys.get(obj, keys.time), keys.get(obj, keys.level), keys.get(obj, keys.message)
        if not isinstance(ts, str) or not RFC3339.match(ts):
            problems.append(f"{keys.time} {ts!r} is not RFC 3339: {ln.text[:200]}")
        if keys.rank(obj) is None:
            problems.append(
                f"{keys.level} {level!r} is none of the level names {sorted(keys.levels.values())}: {ln.text[:200]}"
            )
        if not isinstance(msg, str):
            problems.append(f"{keys.message} {msg!r} is not a string: {ln.text[:200]}")
    return problems


def request_problems(lines: Iterable, sent: Sequence[tuple[str, str, int]], keys: LogKeys | None = None) -> list[str]:
    """Each request of ``sent`` (method, target exactly as sent, status) has exactly one line, at
    info, with its method, its target as the path, its status as an integer and a non-negative
    duration, under the service's ``keys``."""
    keys = keys or LogKeys()
    parsed = [(ln, ln.json()) for ln in lines]
    problems = []
    for method, tgt, status in sent:
        hits = lines_for(parsed, tgt, keys)
        if len(hits) != 1:
            problems.append(f"{method} {tgt}: {len(hits)} log lines with {keys.path!r}: {tgt!r}, want exactly 1")
            continue
        ln, o = hits[0]
        if keys.level_of(o) != "info":
            problems.append(f"{method} {tgt}: level {keys.get(o, keys.level)!r}, want info: {ln.text[:300]}")
        if keys.get(o, keys.method) != method:
            problems.append(f"{method} {tgt}: {keys.method} {keys.get(o, keys.method)!r}: {ln.text[:300]}")
        got = keys.get(o, keys.status)
        if not isinstance(got, int) or isinstance(got, bool) or got != status:
            problems.append(f"{method} {tgt}: {keys.status} {got!r}, want the integer {status}: {ln.text[:300]}")
        d = keys.duration_ms(o)
        if d is None or d < 0:
            problems.append(
                f"{method} {tgt}: {keys.duration} {keys.get(o, keys.duration)!r} is not a non-negative duration"
                f" in {keys.duration_unit}: {ln.text[:300]}"
            )
    return problems
