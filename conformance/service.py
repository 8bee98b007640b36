"""Starting, watching and stopping a service process (service and command modes)."""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import signal
import subprocess
import threading
import time

from cityref_tools import processes
from conformance import rawhttp

# Variables of the spec's configuration; never inherited from the caller's environment (nor is any
# OpenTelemetry variable: tracing is on only where the suite asks for it).
SPEC_ENV = ("PORT", "ELASTICSEARCH_URL", "ELASTICSEARCH_TIMEOUT_MS", "LOG_LEVEL")


def inherited(name: str) -> bool:
    """Whether a variable of the caller's environment reaches a service the suite starts."""
    return name not in SPEC_ENV and not name.startswith("OTEL_")


def free_port() -> int:
    """A port free on every interface (the services bind all of them)."""
    return processes.free_port("0.0.0.0")


def closed_port() -> int:
    """A port nothing listens on (bound and released; refused on connect)."""
    return free_port()


@dataclasses.dataclass
class LogLine:
    t: float  # monotonic arrival time
    stream: str  # stdout | stderr
    text: str

    def json(self):
        """The parsed JSON object, or None if the line is not a JSON object."""
        try:
            obj = json.loads(self.text)
        except ValueError:
            return None
        return obj if isinstance(obj, dict) else None


class Instance:
    """One run of a service: ``Instance(argv, cwd, env).start()``; always ``stop()`` it."""

    def __init__(
        self, argv: list[str], cwd: pathlib.Path, env: dict[str, str], label: str, log_dir: pathlib.Path | None = None
    ):
        self.argv, self.cwd, self.label = list(argv), pathlib.Path(cwd), label
        base = {k: v for k, v in os.environ.items() if inherited(k)}
        base.update(env)
        self.env = base
        self.port = int(env["PORT"]) if str(env.get("PORT", "")).isdigit() else None
        self.lines: list[LogLine] = []
        self._cond = threading.Condition()
        self.proc: subprocess.Popen | None = None
        self.started_at = 0.0
        self.startup_seconds: float | None = None
        self.log_path = (log_dir / f"{label}.log") if log_dir else None
        self._log_file = None
        self._readers: list[threading.Thread] = []

    # process ---------------------------------------------------------------------------------
    def start(self) -> Instance:
        if self.log_path:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            # written by the reader threads until stop() closes it
            self._log_file = open(self.log_path, "w", encoding="utf-8")  # noqa: SIM115
            shown = {k: v for k, v in self.env.items() if not inherited(k)}
            self._log_file.write(f"# argv={self.argv} cwd={self.cwd} env={shown}\n")
        self.started_at = time.monotonic()
        try:
            self.proc = processes.start_session(
                self.argv, cwd=self.cwd, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        except OSError as e:
            raise RuntimeError(f"cannot start {self.argv} in {self.cwd}: {e}") from None
        for stream in ("stdout", "stderr"):
            t = threading.Thread(
                target=self._read, args=(stream, getattr(self.proc, stream)), name=f"{self.label}-{stream}", daemon=True
            )
            t.start()
            self._readers.append(t)
        return self

    def _read(self, stream: str, pipe):
        for raw in iter(pipe.readline, b""):
            text = raw.decode("utf-8", "replace").rstrip("\r\n")
            line = LogLine(time.monotonic(), stream, text)
            with self._cond:
                self.lines.append(line)
                if self._log_file:
                    self._log_file.write(f"[{stream}] {text}\n")
                    self._log_file.flush()
                self._cond.notify_all()
        pipe.close()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait_exit(self, timeout: float) -> int | None:
        """The exit code, or None if still running after ``timeout`` seconds."""
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        for t in self._readers:
            t.join(timeout=2)
        return rc

    def signal(self, sig: int = signal.SIGTERM):
        if self.running():
            self.proc.send_signal(sig)

    def stop(self, grace: float = 15.0) -> int | None:
        """SIGTERM, then SIGKILL to the process group after ``grace`` seconds."""
        if self.proc is None:
            return None
        if self.running():
            self.proc.send_signal(signal.SIGTERM)
            if self.wait_exit(grace) is None:
                processes.kill_group(self.proc.pid)
                self.wait_exit(5)
        else:
            processes.kill_group(self.proc.pid)  # the leader exited; leave no child of ours behind
        for t in self._readers:
            t.join(timeout=2)
        if self._log_file:
            with self._cond:
                self._log_file.write(f"# exit code {self.proc.returncode}\n")
                self._log_file.close()
                self._log_file = None
        return self.proc.returncode

    # readiness -----------------------------------------------------------------------------
    @property
    def base(self) -> tuple[str, int]:
        return ("127.0.0.1", self.port)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_ready(self, timeout: float = 120.0) -> float:
        """Polls GET /health until any HTTP response; returns seconds from launch to that response."""
        deadline = self.started_at + timeout
        while True:
            if not self.running():
                raise RuntimeError(
                    f"{self.label} exited with code {self.proc.returncode} before answering HTTP;"
                    f" output:\n{self.tail()}"
                )
            try:
                rawhttp.request(self.base, "GET", "/health", timeout=2, linger=0)
                self.startup_seconds = time.monotonic() - self.started_at
                return self.startup_seconds
            except rawhttp.HttpError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.label} did not answer HTTP within {timeout}s; output:\n{self.tail()}")
            time.sleep(0.02)

    # logs ------------------------------------------------------------------------------------
    def snapshot(self, stream: str | None = "stdout") -> list[LogLine]:
        with self._cond:
            return [ln for ln in self.lines if stream is None or ln.stream == stream]

    def wait_log(self, predicate, timeout: float, stream: str | None = "stdout") -> LogLine | None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for ln in self.lines:
                    if (stream is None or ln.stream == stream) and predicate(ln):
                        return ln
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(min(left, 0.1))

    def tail(self, n: int = 30) -> str:
        with self._cond:
            lines = self.lines[-n:]
        return "\n".join(f"  [{ln.stream}] {ln.text[:500]}" for ln in lines) or "  (no output)"
