"""scripts/profile_report.py, the shares by component of scripts/profile.sh's profiles."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("profile_report", ROOT / "scripts" / "profile_report.py")
profile_report = sys.modules["profile_report"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(profile_report)


def shares(service: str, stacks: list[tuple[str, int]]) -> dict[str, float]:
    return dict(profile_report.summary(service, [(s.split(";"), n) for s, n in stacks])["shares"])


def test_a_sample_belongs_to_the_component_nearest_its_leaf():
    got = shares(
        "java-helidon",
        [
            # a JDK leaf under the JSON library under the client: JSON
            (
                "io/helidon/Server.run;co/elastic/clients/Get.send;com/fasterxml/jackson/Parser.next;java/lang/String.length",
                2,
            ),
            # a kernel leaf, whatever called it
            ("io/helidon/Server.run;org/apache/http/Reactor.select;epoll_wait_[k]", 1),
            ("io/helidon/Server.run;cityref/CityService.find;java/util/HashMap.get", 1),
        ],
    )
    assert got == {"JSON": 50.0, "kernel": 25.0, "our code": 25.0}


def test_runtime_only_when_nothing_else_matches_and_other_when_nothing_does():
    got = shares(
        "rust-actix",
        [
            ("std::rt::lang_start;tokio::runtime::park;malloc", 1),
            ("std::rt::lang_start;tokio::runtime::park;actix_server::worker::poll;hyper::client::send;memcpy", 1),
            ("[unknown];0x1234", 2),
        ],
    )
    assert got == {"other": 50.0, "runtime (scheduler, event loop, allocator, GC, JIT)": 25.0, "HTTP client": 25.0}


def test_go_system_calls_are_the_kernel_and_net_http_is_split_into_server_and_client():
    got = shares(
        "go-kit",
        [
            (
                "net/http.(*conn).serve;main.(*service).City;net/http.(*persistConn).readLoop;"
                "internal/runtime/syscall/linux.Syscall6",
                1,
            ),
            ("net/http.(*conn).serve;net/http.(*conn).readRequest;bufio.(*Reader).Read", 1),
            ("net/http.(*persistConn).readLoop;bufio.(*Reader).Read", 1),
            ("github.com/elastic/go-elasticsearch/v8.(*Client).Perform;encoding/json.Unmarshal", 1),
        ],
    )
    assert got == {"kernel": 25.0, "framework": 25.0, "HTTP client": 25.0, "JSON": 25.0}


def test_perf_script_and_pprof_traces_are_read(tmp_path):
    perf = tmp_path / "perf.txt"
    perf.write_text(
        "cityref 10 1.0:\n\t ffffffff81 do_syscall_64 ([kernel.kallsyms])\n"
        "\t 55aa hyper::proto::h1::poll+0x1f (/bin/x)\n\n"
        "cityref 10 1.1:\n\t 55ab serde_json::de::parse (/bin/x)\n\t 55ac actix_http::h1::Dispatcher::poll (/bin/x)\n"
    )
    assert [s for s, _ in profile_report.read_perf(perf)] == [
        ["hyper::proto::h1::poll", "do_syscall_64_[k]"],
        ["actix_http::h1::Dispatcher::poll", "serde_json::de::parse"],
    ]
    traces = tmp_path / "traces.txt"
    traces.write_text(
        "File: cityref-go-kit\n-----------+-------------------------------------------------------\n"
        "      10ms   encoding/json.Unmarshal\n             main.decode\n"
        "-----------+-------------------------------------------------------\n"
        "     250us   runtime.futex\n"
        "-----------+-------------------------------------------------------\n"
    )
    assert list(profile_report.read_pprof_traces(traces)) == [
        (["main.decode", "encoding/json.Unmarshal"], 1.0),
        (["runtime.futex"], 0.025),
    ]


def test_a_rust_frame_belongs_to_its_crate_not_to_a_crate_named_inside_it():
    got = shares(
        "rust-actix",
        [
            (
                "<actix_http::h1::Dispatcher<T> as Future>::poll;"
                "<tracing_actix_web::TracingResponse<F> as Future>::poll",
                1,
            ),
            ("<actix_http::h1::Dispatcher<T> as Future>::poll;core::ptr::drop_in_place", 1),
        ],
    )
    assert got == {"observability (logs, metrics, traces)": 50.0, "framework": 50.0}
