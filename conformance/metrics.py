"""A small parser for the Prometheus text exposition format (0.0.4), enough for the metrics checks."""

from __future__ import annotations

import dataclasses
import math

from conformance.observe import MetricNames


class ParseError(ValueError):
    pass


@dataclasses.dataclass
class Exposition:
    types: dict[str, str]  # metric family -> type
    samples: list[tuple[str, dict[str, str], float]]  # (sample name, labels, value)

    def find(self, name: str, **labels: str) -> list[tuple[dict[str, str], float]]:
        """Samples named ``name`` whose labels include all of ``labels`` (other labels allowed)."""
        return [
            (lbl, v)
            for n, lbl, v in self.samples
            if n == name and all(lbl.get(k) == want for k, want in labels.items())
        ]

    def value(self, name: str, labels: dict[str, str], missing_label_as_empty: bool = False) -> float:
        """Sum of the samples named ``name`` whose labels equal ``labels`` exactly (0 if none).

        With ``missing_label_as_empty`` a label asked for with value "" also matches a sample
        that lacks it (Prometheus treats an absent label and an empty one alike).
        """
        total = 0.0
        for n, lbl, v in self.samples:
            if n != name:
                continue
            have = {k: x for k, x in lbl.items() if not (missing_label_as_empty and x == "")}
            want = {k: x for k, x in labels.items() if not (missing_label_as_empty and x == "")}
            if have == want:
                total += v
        return total


def _parse_labels(text: str, pos: int) -> tuple[dict[str, str], int]:
    """Parses ``{a="b",c="d"}`` starting at text[pos] == '{'; returns (labels, index after '}')."""
    labels: dict[str, str] = {}
    pos += 1
    n = len(text)
    while True:
        while pos < n and text[pos] in " \t":
            pos += 1
        if pos < n and text[pos] == "}":
            return labels, pos + 1
        start = pos
        while pos < n and (text[pos].isalnum() or text[pos] == "_"):
            pos += 1
        name = text[start:pos]
        if not name:
            raise ParseError(f"label name expected at {pos}: {text!r}")
        while pos < n and text[pos] in " \t":
            pos += 1
        if pos >= n or text[pos] != "=":
            raise ParseError(f"'=' expected after label {name!r}: {text!r}")
        pos += 1
        while pos < n and text[pos] in " \t":
            pos += 1
        if pos >= n or text[pos] != '"':
            raise ParseError(f"'\"' expected for label {name!r}: {text!r}")
        pos += 1
        value = []
        while True:
            if pos >= n:
                raise ParseError(f"unterminated label value: {text!r}")
            ch = text[pos]
            if ch == "\\":
                nxt = text[pos + 1 : pos + 2]
                value.append({"n": "\n", "\\": "\\", '"': '"'}.get(nxt, "\\" + nxt))
                pos += 2
                continue
            if ch == '"':
                pos += 1
                break
            value.append(ch)
            pos += 1
        if name in labels:
            raise ParseError(f"duplicate label {name!r}: {text!r}")
        labels[name] = "".join(value)
        while pos < n and text[pos] in " \t":
            pos += 1
        if pos < n and text[pos] == ",":
            pos += 1


def parse_value(text: str) -> float:
    t = text.strip()
    low = t.lower()
    if low in ("+inf", "inf"):
        return math.inf
    if low == "-inf":
        return -math.inf
    if low == "nan":
        return math.nan
    try:
        return float(t)
    except ValueError:
        raise ParseError(f"bad sample value {text!r}") from None


def parse(text: str) -> Exposition:
    types: dict[str, str] = {}
    samples = []
    for lineno, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            parts = line[1:].split(None, 3)
            if len(parts) >= 3 and parts[0] == "TYPE":
                types[parts[1]] = parts[2]
            continue
        pos = 0
        while pos < len(line) and (line[pos].isalnum() or line[pos] in "_:"):
            pos += 1
        name = line[:pos]
        if not name:
            raise ParseError(f"line {lineno}: metric name expected: {raw!r}")
        labels: dict[str, str] = {}
        if pos < len(line) and line[pos] == "{":
            labels, pos = _parse_labels(line, pos)
        rest = line[pos:].split()
        if not rest or len(rest) > 2:
            raise ParseError(f"line {lineno}: value expected: {raw!r}")
        samples.append((name, labels, parse_value(rest[0])))
    return Exposition(types, samples)


def bucket_bounds(expo: Exposition, name: str) -> set[float]:
    """Every ``le`` value of ``<name>_bucket`` samples."""
    return {parse_value(lbl["le"]) for lbl, _ in expo.find(name + "_bucket") if "le" in lbl}


def count(expo: Exposition, names: MetricNames, method: str, route: str, status: int, suffix: str = "_count") -> float:
    """The histogram's ``suffix`` series (summed over any labels beyond method, route and status) for
    one method, route and status; the unmatched route also matches a series without the route label."""
    total = 0.0
    for lbl, v in expo.find(names.histogram + suffix):
        if lbl.get(names.method) != method or lbl.get(names.status) != str(status):
            continue
        have = lbl.get(names.route)
        if have != route and not (have is None and route == names.unmatched_route):
            continue
        if suffix == "_bucket" and lbl.get("le") != "+Inf":
            continue
        total += v
    return total


def grew(before: Exposition, after: Exposition, names: MetricNames, method: str, route: str, status: int) -> float:
    """How much one series' count grew from ``before`` to ``after``."""
    return count(after, names, method, route, status) - count(before, names, method, route, status)
