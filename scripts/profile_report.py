"""The report of one CPU profile of `scripts/profile.sh`: top frames by self and inclusive time, and each
sample's component (framework, Elasticsearch client, HTTP client, JSON, observability, our code, runtime,
kernel), so that the shares add up to 100 %.

    scripts/python.sh scripts/profile_report.py SERVICE STACKS [--perf | --pprof] [--step S --throughput T
        --cpu-us X --commit C --date D --machine M] [--publish]
STACKS: collapsed stacks (async-profiler), `perf script` output (--perf) or `go tool pprof -traces` output
(--pprof). With --publish, the profile (one per step) goes into docs/results/profiles/SERVICE.json, from which
`make readme-table` writes the service README's profile section (`markdown`).

A sample belongs to the component of the frame nearest its leaf that matches one (an allocator, libc or JDK
frame belongs to whoever called it); a leaf in the kernel is the kernel's; a stack in which only runtime
frames match (scheduler, event loop, GC, JIT) is the runtime's; one with no match at all is "other".
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
from pathlib import Path

KERNEL = "kernel"
RUNTIME = "runtime (scheduler, event loop, allocator, GC, JIT)"
# component -> frame prefixes (a frame matches a prefix it starts with, a Rust `<Type as Trait>` frame by its
# type's path), per language family; the framework's own per service (FRAMEWORK)
JVM = {
    "Elasticsearch client": ("co/elastic/", "org/elasticsearch/"),
    "HTTP client": ("org/apache/http/", "org/apache/hc/"),
    "JSON": ("com/fasterxml/", "tools/jackson/", "jakarta/json", "org/eclipse/parsson", "kotlinx/serialization"),
    "observability (logs, metrics, traces)": (
        "io/micrometer/",
        "ch/qos/logback",
        "org/slf4j",
        "java/util/logging",
        "io/opentelemetry/",
        "io/prometheus",
    ),
    "our code": ("cityref/",),
    RUNTIME: (
        "CompileBroker",
        "C2Compiler",
        "Compile::",
        "GCTaskThread",
        "G1",
        "SerialHeap",
        "DefNewGeneration",
        "VM_GenCollect",
        "VMThread",
        "Interpreter",
        "java/lang/VirtualThread",
        "jdk/internal/vm/Continuation",
        "java/util/concurrent/ForkJoin",
        "kotlinx/coroutines/",
    ),
}
RUST = {
    "Elasticsearch client": ("elasticsearch::",),
    "HTTP client": ("reqwest::", "hyper::", "hyper_util::", "h2::", "tower::", "tower_http::"),
    "JSON": ("serde_json::", "serde::"),
    "observability (logs, metrics, traces)": ("tracing", "opentelemetry", "prometheus::", "actix_web_prom::"),
    "our code": ("cityref_rust_actix::",),
    RUNTIME: ("tokio::", "mio::", "malloc", "_int_", "__malloc", "free", "unlink_chunk", "__libc", "alloc::", "std::"),
}
GO = {
    "Elasticsearch client": ("github.com/elastic/",),
    "HTTP client": (
        "net/http.(*Transport)",
        "net/http.(*persistConn)",
        "net/http.(*Client)",
        "net/http.send",
        "net/http.(*transport",
        "net/http.persistConnWriter",
    ),
    "JSON": ("encoding/json.",),
    "observability (logs, metrics, traces)": (
        "go.opentelemetry.io/",
        "github.com/prometheus/",
        "log/slog.",
        "github.com/go-kit/log",
    ),
    "our code": ("main.",),
    RUNTIME: ("runtime.", "internal/runtime/", "sync.", "internal/poll.(*FD).Init", "internal/poll.runtime_"),
}
FRAMEWORK = {
    "rust-actix": (
        "actix_web::",
        "actix_http::",
        "actix_server::",
        "actix_rt::",
        "actix_service::",
        "actix_router::",
        "actix_utils::",
        "actix_codec::",
    ),
    "go-kit": (
        "github.com/go-kit/kit/",
        "net/http.(*conn)",
        "net/http.(*Server)",
        "net/http.serverHandler",
        "net/http.(*ServeMux)",
        "net/http.(*response)",
        "net/http.(*chunkWriter)",
        "net/http.HandlerFunc",
        "net/http.(*connReader)",
    ),
    "kotlin-ktor": ("io/ktor/", "io/netty/"),
    "kotlin-http4k": ("org/http4k/", "org/eclipse/jetty/"),
    "java-helidon": ("io/helidon/",),
    "java-spring-boot": ("org/springframework/", "org/apache/catalina/", "org/apache/coyote/", "org/apache/tomcat/"),
}
# Go: a sample in a system call as pprof sees it (the kernel's own frames are invisible to it)
GO_SYSCALL = (
    "syscall.",
    "internal/runtime/syscall/",
    "runtime/internal/syscall.",
    "runtime.futex",
    "runtime.epollwait",
    "runtime.write1",
    "runtime.read",
    "runtime.usleep",
    "runtime.nanotime1",
)


def components(service: str) -> dict[str, tuple[str, ...]]:
    family = RUST if service.startswith("rust") else GO if service.startswith("go") else JVM
    return {"framework": FRAMEWORK[service], **family}


def classify(frames: list[str], table: dict[str, tuple[str, ...]], go: bool) -> str:
    """frames: root first, leaf last."""
    leaf = frames[-1]
    if leaf.endswith("_[k]") or (go and any(leaf.startswith(m) for m in GO_SYSCALL)):
        return KERNEL
    runtime = False
    for frame in reversed(frames):
        name = _component_of(frame, table)
        if name and name != RUNTIME:
            return name
        runtime = runtime or name == RUNTIME
    return RUNTIME if runtime else "other"


def _component_of(frame: str, table: dict[str, tuple[str, ...]]) -> str | None:
    """The component whose prefixes the frame starts with (a Rust `<Type as Trait>` frame: its type's)."""
    frame = frame.lstrip("<")
    return next((name for name, marks in table.items() if frame.startswith(marks)), None)


def read_collapsed(path: Path):
    for line in path.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if stack and n.isdigit():
            yield stack.split(";"), int(n)


def read_perf(path: Path):
    """`perf script` output: a header line per sample, then its frames leaf first, indented."""
    frames: list[str] = []
    for line in path.read_text(errors="replace").splitlines() + [""]:
        if line.startswith(("\t", " ")) and line.strip():
            parts = line.strip().split(None, 1)
            rest = parts[1] if len(parts) > 1 else "[unknown]"
            sym, _, dso = rest.rpartition(" (")
            sym = re.sub(r"\+0x[0-9a-f]+$", "", sym or rest)
            frames.append(sym + ("_[k]" if "kernel" in dso else ""))
        elif frames:
            yield list(reversed(frames)), 1
            frames = []


def read_pprof_traces(path: Path):
    """`go tool pprof -traces` output: blocks between dashed lines, the first line `<value> <leaf>`."""
    scale = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1e3}  # to ms
    frames: list[str] = []
    value = 0.0
    for line in path.read_text().splitlines() + ["-----------+"]:
        if line.startswith("-----------+"):
            if frames:
                yield list(reversed(frames)), value
            frames, value = [], 0.0
            continue
        m = re.match(r"\s+([0-9.]+)(ns|us|µs|ms|s)\s+(\S.*)$", line)
        if m:
            value = float(m.group(1)) * scale[m.group(2)] / 10  # in samples: pprof's CPU profile runs at 100 Hz
            frames.append(m.group(3).strip())
        elif frames and line.strip():
            frames.append(line.strip())


def summary(service: str, samples, top: int = 10) -> dict:
    """Shares by component and the top frames, in % of the samples."""
    table = components(service)
    go = service.startswith("go")
    self_, incl, share = collections.Counter(), collections.Counter(), collections.Counter()
    total = 0.0
    for frames, n in samples:
        total += n
        self_[frames[-1]] += n
        for f in set(frames):
            incl[f] += n
        share[classify(frames, table, go)] += n
    pct = lambda n: round(100 * n / total, 1) if total else 0.0  # noqa: E731

    def ranked(counter: collections.Counter) -> list[tuple[str, float]]:
        """Largest first, ties by name: the same stacks give the same file, whatever the hash seed."""
        return sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))

    return {
        "samples": round(total),
        "shares": [[name, pct(n)] for name, n in ranked(share)],
        "self": [[f[:160], pct(n)] for f, n in ranked(self_)[:top]],
        # inclusive: the frames of a component (the kernel's included), not the threads, executors and
        # continuations every stack runs in
        "inclusive": [
            [f[:160], pct(n)]
            for f, n in ranked(incl)
            if f.endswith("_[k]") or _component_of(f, table) not in (None, RUNTIME)
        ][: 2 * top],
    }


def report(doc: dict) -> str:
    """A `summary` as the text profile.sh prints."""
    if not doc["samples"]:
        return "no samples\n"
    out = [f"by component (each sample once; {doc['samples']} samples):"]
    out.extend(f"  {p:5.1f} %  {name}" for name, p in doc["shares"])
    for title, key in (("self", "self"), ("inclusive", "inclusive")):
        out.append(f"top frames by {title} time:")
        out.extend(f"  {p:5.1f} %  {f[:140]}" for f, p in doc[key])
    return "\n".join(out) + "\n"


PUBLISHED = Path(__file__).resolve().parent.parent / "docs" / "results" / "profiles"
PROFILERS = {
    "rust-actix": "perf record -F 999 -g, a build with symbols and frame pointers",
    "go-kit": "pprof (net/http/pprof, a build with `-tags pprof`)",
}


def markdown(doc: dict, link: str) -> str:
    """A service README's profile section: each step's shares by component and top frames."""
    steps = doc.get("steps", {})
    if not steps:
        return "No profile published yet (`PUBLISH=1 scripts/profile.sh SERVICE`).\n"
    service = doc["service"]
    profiler = PROFILERS.get(service, "async-profiler 4.2, cpu event, 1 ms")
    out = [
        f"`PUBLISH=1 scripts/profile.sh {service}` and `PUBLISH=1 RATE=500 scripts/profile.sh {service}` "
        f"([profiles/{service}.json]({link})): the service bare on CPU 1, the load on CPU 0 (wrk, or vegeta at a fixed "
        f"rate), fixture city 3 on Elasticsearch, a warm-up, then a 20 s window profiled with {profiler}. A sample "
        "counts once, for the component of the frame nearest its leaf (an allocator, libc or JDK frame is its "
        "caller's; scripts/profile_report.py). Machine: "
        f"{doc.get('machine', 'unknown')}.",
        "",
        "| step | when, commit | throughput | CPU per request (profiler attached) | " + " | ".join(COLUMNS) + " |",
        "|---" * (4 + len(COLUMNS)) + "|",
    ]
    for step, s in steps.items():
        shares = dict(s["shares"])
        out.append(
            f"| {step} | {s['date']}, {s['commit']} | {s['throughput']} | {s['cpu_us']} µs | "
            + " | ".join(f"{shares.get(c, 0.0):.1f} %" for c in COLUMNS)
            + " |"
        )
    for step, s in steps.items():
        out += ["", f"Top frames at {step}, by self time: " + ", ".join(f"`{f}` {p} %" for f, p in s["self"][:8]) + "."]
        out.append("By inclusive time: " + ", ".join(f"`{f}` {p} %" for f, p in s["inclusive"][:12]) + ".")
    return "\n".join(out) + "\n"


COLUMNS = [
    "framework",
    "Elasticsearch client",
    "HTTP client",
    "JSON",
    "observability (logs, metrics, traces)",
    "our code",
    RUNTIME,
    KERNEL,
    "other",
]


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="scripts/profile_report.py")
    p.add_argument("service", choices=sorted(FRAMEWORK))
    p.add_argument("stacks", type=Path)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--perf", action="store_true", help="STACKS is `perf script` output")
    g.add_argument("--pprof", action="store_true", help="STACKS is `go tool pprof -traces` output")
    p.add_argument("--step", default="64 connections", help="the load: '64 connections' or 'N req/s'")
    p.add_argument("--throughput", default="", help="what the load reported, in a few words")
    p.add_argument("--cpu-us", type=float, help="the service's CPU per request in the window")
    p.add_argument("--commit", default="")
    p.add_argument("--date", default="")
    p.add_argument("--machine", default="")
    p.add_argument(
        "--publish", action="store_true", help=f"into {PUBLISHED.relative_to(PUBLISHED.parents[2])}/SERVICE.json"
    )
    a = p.parse_args(argv)
    reader = read_perf if a.perf else read_pprof_traces if a.pprof else read_collapsed
    doc = summary(a.service, reader(a.stacks))
    sys.stdout.write(report(doc))
    if a.publish:
        if not doc["samples"]:
            print("no samples: nothing published", file=sys.stderr)
            return 1
        path = PUBLISHED / f"{a.service}.json"
        pub = json.loads(path.read_text()) if path.exists() else {"service": a.service, "steps": {}}
        pub["machine"] = a.machine
        pub["steps"][a.step] = {
            "date": a.date,
            "commit": a.commit,
            "throughput": a.throughput,
            "cpu_us": a.cpu_us,
            **doc,
        }
        pub["steps"] = dict(sorted(pub["steps"].items(), key=lambda kv: "req/s" in kv[0]))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(pub, indent=1, ensure_ascii=False) + "\n")
        print(f"published: {path.relative_to(PUBLISHED.parents[2])} (then make readme-table)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
