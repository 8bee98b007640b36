"""Every missing prerequisite of the entry points is one line on stderr, `cityref: <what>: <fix>`, and
exit 2: run through the real entry points (scripts/*.sh, python -m bench, python -m conformance) as
subprocesses, with the prerequisite taken away by their environment (PATH, JAVA_HOME, the user, a
port held here, a closed port for Elasticsearch, an image tag that does not exist). Each run stops at
its check, before anything slow: no Elasticsearch, build or benchmark is started."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from cityref_tools import descriptors
from cityref_tools.processes import free_port

ROOT = Path(__file__).resolve().parents[2]
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
SERVICES = descriptors.all_services()
NATIVE = next(d for d in SERVICES if not descriptors.runs_on_jvm(d))  # a service that needs no JDK
JVM = next(d for d in SERVICES if descriptors.runs_on_jvm(d))
BENCH = [sys.executable, "-m", "bench"]
NO_CGROUPS = ["--no-bare", "--no-images", "--no-floor", "--url", "http://127.0.0.1:1", "--no-open-loop"]


def run(argv: list[str], as_nobody: bool = False, **env: str) -> subprocess.CompletedProcess:
    if as_nobody and os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("setpriv missing: cannot run as another user")
        argv = NOBODY + argv
    full = dict(os.environ, PYTHONPATH=str(ROOT), **env)
    return subprocess.run(argv, cwd=ROOT, env=full, capture_output=True, text=True, timeout=60, check=False)


def assert_one_line(proc: subprocess.CompletedProcess, *needles: str) -> None:
    """Exit 2, and stderr one line in the common format naming what is missing and its fix."""
    err = proc.stderr.strip()
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert "\n" not in err and re.fullmatch(r"cityref: .+: .+", err), err
    for needle in needles:
        assert needle in err, (needle, err)


@pytest.fixture
def shared() -> Iterator[Path]:
    """A temporary directory every user may read (pytest's tmp_path is root's own)."""
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o755)
        yield Path(d)


def stubs(where: Path, *names: str, path: str | None = None) -> str:
    """``path`` (default: PATH) with commands ``names`` that do nothing (exit 0) in front."""
    bin_dir = where / "stubs"
    bin_dir.mkdir()
    for name in names:
        (bin_dir / name).write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / name).chmod(0o755)
    return f"{bin_dir}:{path or os.environ['PATH']}"


def path_without(where: Path, *names: str) -> str:
    """A PATH of one directory: links to every command of PATH except `names`."""
    bin_dir = where / ("without-" + "-".join(names))
    bin_dir.mkdir()
    for d in os.environ["PATH"].split(os.pathsep):
        for f in Path(d).glob("*") if Path(d).is_dir() else []:
            link = bin_dir / f.name
            if f.name not in names and not link.exists() and f.is_file() and os.access(f, os.X_OK):
                link.symlink_to(f)
    return str(bin_dir)


def closed_url() -> str:
    return f"http://127.0.0.1:{free_port()}"  # nothing listens there


@contextlib.contextmanager
def held(port: int = 0) -> Iterator[int]:
    """A listener on 127.0.0.1:port (0: any free one) that closes every connection it accepts."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", port))
    except OSError as e:
        s.close()
        pytest.skip(f"port {port} is in use here already ({e})")
    s.listen()

    def refuse() -> None:
        with contextlib.suppress(OSError):
            while True:
                s.accept()[0].close()

    threading.Thread(target=refuse, daemon=True).start()
    try:
        yield s.getsockname()[1]
    finally:
        with contextlib.suppress(OSError):
            s.shutdown(socket.SHUT_RDWR)  # wakes the accept(): close() alone leaves the port held
        s.close()


def needs_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("only root reaches this check (the targets run in cgroups)")


def needs_podman() -> None:
    if not shutil.which("podman"):
        pytest.skip("podman missing: the image checks need it")


# ---------------------------------------------------------------- Elasticsearch down


def test_bench_without_elasticsearch(shared):
    proc = run([*BENCH, *NO_CGROUPS, "--es-url", url := closed_url()], PATH=stubs(shared, "wrk"))
    assert_one_line(proc, f"Elasticsearch at {url} is not usable", "make es")


def test_bench_resilience_without_elasticsearch(shared):
    path = stubs(shared, "wrk", "vegeta")
    argv = [*BENCH, "resilience", "--no-bare", "--no-images", "--vegeta", str(shared / "stubs" / "vegeta")]
    proc = run([*argv, "--es-url", url := closed_url()], PATH=path)
    assert_one_line(proc, f"Elasticsearch at {url} is not usable", "make es")


def test_conformance_without_elasticsearch(tmp_path):
    argv = [sys.executable, "-m", "conformance", "--command", "./x", "--out", str(tmp_path)]
    proc = run([*argv, "--es-url", url := closed_url()])
    assert_one_line(proc, f"Elasticsearch at {url} is not usable", "make es", "load-fixture")


def test_conformance_differential_without_elasticsearch(tmp_path):
    argv = [sys.executable, "-m", "conformance", "differential", "--service", "go-kit", "--out", str(tmp_path)]
    proc = run([*argv, "--es-url", url := closed_url()])
    assert_one_line(proc, f"Elasticsearch at {url} is not usable", "make es")


# ---------------------------------------------------------------- wrk, nginx missing


def test_bench_without_wrk(shared):
    proc = run([*BENCH, *NO_CGROUPS, "--es-url", closed_url()], PATH=path_without(shared, "wrk"))
    assert_one_line(proc, "wrk missing", "apt-get install wrk nginx-light")


def test_bench_resilience_without_wrk(shared):
    vegeta = shared / "vegeta"
    vegeta.touch()
    argv = [*BENCH, "resilience", "--no-bare", "--no-images", "--vegeta", str(vegeta), "--es-url", closed_url()]
    assert_one_line(run(argv, PATH=path_without(shared, "wrk")), "wrk missing", "apt-get install wrk")


def test_bench_floor_without_nginx(shared):
    needs_root()  # the floor runs in a cgroup: without root, root is what is missing
    path = stubs(shared, "wrk", path=path_without(shared, "nginx"))
    argv = [*BENCH, "--no-bare", "--no-images", "--no-ceiling", "--no-open-loop", "--es-url", closed_url()]
    assert_one_line(run(argv, PATH=path), "nginx missing", "apt-get install wrk nginx-light", "--no-floor")


def test_bench_sh_cannot_install_wrk_and_nginx_without_root(shared):
    proc = run(
        ["scripts/bench.sh", "--services", NATIVE["name"]], as_nobody=True, PATH=path_without(shared, "wrk", "nginx")
    )
    assert_one_line(proc, "wrk nginx-light", "missing", "apt-get install wrk nginx-light (as root)")


def test_bench_sh_without_apt_get(shared):
    needs_root()
    proc = run(["scripts/bench.sh", "--services", NATIVE["name"]], PATH=path_without(shared, "wrk", "nginx", "apt-get"))
    assert_one_line(proc, "wrk nginx-light", "missing", "apt-get install wrk nginx-light (as root)")


# ---------------------------------------------------------------- image not built


def test_bench_image_not_built(shared):
    needs_root()
    needs_podman()
    name = NATIVE["name"]
    argv = [*BENCH, "--no-bare", "--no-floor", "--no-ceiling", "--no-open-loop", "--services", name]
    proc = run([*argv, "--image-tag", "no-such-tag", "--es-url", closed_url()], PATH=stubs(shared, "wrk"))
    assert_one_line(
        proc,
        f"image localhost/cityref/{name}:no-such-tag not built",
        "IMAGE_TAG=no-such-tag make images",
        "--no-images",
    )


def test_bench_resilience_image_not_built(shared):
    needs_root()
    needs_podman()
    name = NATIVE["name"]
    path = stubs(shared, "wrk", "vegeta")
    argv = [*BENCH, "resilience", "--no-bare", "--services", name, "--vegeta", str(shared / "stubs" / "vegeta")]
    proc = run([*argv, "--image-tag", "no-such-tag", "--es-url", closed_url()], PATH=path)
    assert_one_line(proc, f"image localhost/cityref/{name}:no-such-tag not built", "make images")


def test_images_sh_test_image_not_built():
    needs_podman()
    name = NATIVE["name"]
    proc = run(["scripts/images.sh", "test", name], IMAGE_TAG="no-such-tag")
    assert_one_line(proc, f"image localhost/cityref/{name}:no-such-tag not built", "IMAGE_TAG=no-such-tag make images")


# ---------------------------------------------------------------- not root


@pytest.mark.parametrize(("sub", "make"), [([], "make bench"), (["resilience"], "make bench-resilience")])
def test_bench_needs_root(sub, make):
    proc = run([*BENCH, *sub, "--services", NATIVE["name"], "--no-images"], as_nobody=True)
    assert_one_line(proc, "needs root for its cgroups (1.5-CPU / 512 MiB limits)", f"sudo {make}")


def test_bench_sh_needs_root(shared):
    proc = run(
        ["scripts/bench.sh", "--services", NATIVE["name"]],
        as_nobody=True,
        PATH=stubs(shared, "wrk", "nginx", "taskset"),
    )
    assert_one_line(proc, "make bench needs root for its cgroups", "sudo make bench")


# ---------------------------------------------------------------- a port in use (make up)


def started_by_up(name: str) -> bool:
    """Whether an earlier `make up` runs the service (its pid file in out/run names a live process)."""
    with contextlib.suppress(OSError, ValueError):
        os.kill(int((ROOT / "out" / "run" / f"{name}.pid").read_text()), 0)
        return True
    return False


def test_up_with_a_service_port_in_use():
    if started_by_up(NATIVE["name"]):
        pytest.skip(f"an earlier make up runs {NATIVE['name']}: make up leaves it be")
    with held(NATIVE["port"]) as port:
        proc = run(["scripts/up.sh"], SERVICES=NATIVE["name"])
    who = f" by pid {os.getpid()}" if shutil.which("ss") else ""
    assert_one_line(proc, f"port {port} ({NATIVE['name']}) is in use{who}", "make down")


def test_up_with_the_elasticsearch_port_in_use():
    with socket.socket() as s:
        if s.connect_ex(("127.0.0.1", NATIVE["port"])) == 0 and not started_by_up(NATIVE["name"]):
            pytest.skip(f"port {NATIVE['port']} of {NATIVE['name']} is in use here: make up stops there first")
    with held() as port:
        proc = run(["scripts/up.sh"], SERVICES=NATIVE["name"], ES_PORT=str(port))
    assert_one_line(proc, f"port {port} (Elasticsearch) is in use", "ES_PORT")


# ---------------------------------------------------------------- JAVA_HOME too old


@pytest.fixture
def old_java(shared) -> tuple[dict[str, str], str]:
    """An environment whose only JDK is JAVA_HOME, older than 25 (the JVM directories and PATH's java
    hidden), and the line's start that names it."""
    for home in sorted(Path("/usr/lib/jvm").glob("*")):
        release = home / "release"
        m = re.search(r'^JAVA_VERSION="(\d+)', release.read_text(), re.M) if release.is_file() else None
        if m and int(m[1]) < 25 and (home / "bin" / "javac").exists() and not home.is_symlink():
            (shared / "no-jvms").mkdir()
            env = {"JAVA_HOME": str(home), "CITYREF_JVM_DIRS": str(shared / "no-jvms")}
            return env | {"PATH": path_without(shared, "java", "javac")}, f"JAVA_HOME ({home}) holds Java {m[1]}"
    pytest.skip("no JDK older than 25 under /usr/lib/jvm")


def test_java_home_sh_with_an_old_java_home(old_java):
    env, named = old_java
    assert_one_line(run(["scripts/java-home.sh"], **env), named, "set JAVA_HOME to a JDK 25")


def test_up_of_a_jvm_service_with_an_old_java_home(old_java):
    env, named = old_java
    assert_one_line(run(["scripts/up.sh"], SERVICES=JVM["name"], **env), named, "set JAVA_HOME to a JDK 25")


def test_conformance_of_a_jvm_service_with_an_old_java_home(old_java, tmp_path):
    env, named = old_java
    argv = [sys.executable, "-m", "conformance", "--service", JVM["name"], "--out", str(tmp_path)]
    assert_one_line(run([*argv, "--es-url", closed_url()], **env), named, "set JAVA_HOME to a JDK 25")


# ---------------------------------------------------------------- podman, mmdebstrap missing (make images)


def test_images_sh_without_podman(shared):
    proc = run(["scripts/images.sh", "build", "no-such-image"], PATH=path_without(shared, "podman"))
    assert_one_line(proc, "podman missing", "apt-get install podman")


def test_podman_sh_without_podman(shared):
    proc = run(["scripts/podman.sh", "images"], PATH=path_without(shared, "podman"))
    assert_one_line(proc, "podman missing", "apt-get install podman")


def test_images_sh_without_mmdebstrap(shared):
    needs_podman()
    proc = run(["scripts/images.sh", "build", "no-such-image"], PATH=path_without(shared, "mmdebstrap"))
    assert_one_line(proc, "mmdebstrap missing", "apt-get install podman buildah runc uidmap fuse-overlayfs mmdebstrap")
