from pathlib import Path

import pytest

from cityref_tools import cgroup


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def v1(tmp_path: Path) -> Path:
    """A cgroup v1 tree as on this machine: one mount per controller."""
    for c in ("cpu", "cpuacct", "memory"):
        (tmp_path / "v1" / c).mkdir(parents=True)
    return tmp_path / "v1"


@pytest.fixture
def v2(tmp_path: Path) -> Path:
    write(tmp_path / "v2" / "cgroup.controllers", "cpuset cpu io memory pids\n")
    return tmp_path / "v2"


def fill_v1(paths: dict[str, Path]) -> None:
    write(paths["cpuacct"] / "cpuacct.usage", "2500000000\n")
    write(paths["cpu"] / "cpu.stat", "nr_periods 100\nnr_throttled 7\nthrottled_time 300000000\n")
    write(paths["memory"] / "memory.usage_in_bytes", "104857600\n")
    write(paths["memory"] / "memory.max_usage_in_bytes", "209715200\n")
    write(paths["memory"] / "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")


def test_version(v1: Path, v2: Path) -> None:
    assert cgroup.version(v1) == 1
    assert cgroup.version(v2) == 2


def test_v2_without_cpu_memory_is_v1(tmp_path: Path) -> None:
    write(tmp_path / "cgroup.controllers", "pids\n")  # the hybrid layout of this machine's /sys/fs/cgroup/unified
    assert cgroup.version(tmp_path) == 1


def test_create_v1_writes_limits(v1: Path) -> None:
    write(v1 / "memory" / "g" / "memory.memsw.limit_in_bytes", "")
    g = cgroup.create("g", 1.5, 512 * 2**20, root=v1)
    assert isinstance(g, cgroup.CgroupV1)
    assert (v1 / "cpu/g/cpu.cfs_quota_us").read_text() == "150000"
    assert (v1 / "cpu/g/cpu.cfs_period_us").read_text() == "100000"
    assert (v1 / "memory/g/memory.limit_in_bytes").read_text() == str(512 * 2**20)
    assert (v1 / "memory/g/memory.memsw.limit_in_bytes").read_text() == str(512 * 2**20)
    assert [str(p.relative_to(v1)) for p in g.procs_files()] == [
        "cpu/g/cgroup.procs",
        "cpuacct/g/cgroup.procs",
        "memory/g/cgroup.procs",
    ]


def test_sample_v1(v1: Path) -> None:
    g = cgroup.create("g", 1.5, 2**29, root=v1)
    fill_v1(g.paths)
    s = g.sample()
    assert s == cgroup.Sample(
        cpu_ns=2_500_000_000,
        memory_bytes=100 * 2**20,
        memory_peak_bytes=200 * 2**20,
        throttled_ns=300_000_000,
        nr_throttled=7,
        oom_kills=1,
    )
    assert g.reset_peak()
    assert (g.paths["memory"] / "memory.max_usage_in_bytes").read_text() == "0"


def test_create_and_sample_v2(v2: Path) -> None:
    g = cgroup.create("bench/g", 1.5, 2**29, root=v2)
    assert isinstance(g, cgroup.CgroupV2)
    assert (v2 / "bench/g/cpu.max").read_text() == "150000 100000"
    assert (v2 / "bench/g/memory.max").read_text() == str(2**29)
    write(
        g.path / "cpu.stat",
        "usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n"
        "nr_periods 10\nnr_throttled 2\nthrottled_usec 40000\n",
    )
    write(g.path / "memory.current", "1048576\n")
    write(g.path / "memory.peak", "4194304\n")
    write(g.path / "memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert g.sample() == cgroup.Sample(
        cpu_ns=1_500_000_000,
        memory_bytes=2**20,
        memory_peak_bytes=2**22,
        throttled_ns=40_000_000,
        nr_throttled=2,
        oom_kills=1,
    )
    assert g.procs_files() == [v2 / "bench/g/cgroup.procs"]


def test_v2_without_memory_peak_uses_current(v2: Path) -> None:
    g = cgroup.create("g", 1, 2**29, root=v2)
    write(g.path / "cpu.stat", "usage_usec 1\n")
    write(g.path / "memory.current", "5\n")
    assert g.sample().memory_peak_bytes == 5


def test_of_pid_v1(v1: Path, tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    write(
        proc / "42" / "cgroup",
        "9:name=systemd:/\n4:memory:/libpod_parent/libpod-abc\n2:cpuacct:/libpod_parent/"
        "libpod-abc\n1:cpu:/libpod_parent/libpod-abc\n0::/\n",
    )
    g = cgroup.of_pid(42, root=v1, proc=proc)
    assert isinstance(g, cgroup.CgroupV1)
    assert g.paths["memory"] == v1 / "memory/libpod_parent/libpod-abc"
    assert g.paths["cpuacct"] == v1 / "cpuacct/libpod_parent/libpod-abc"


def test_of_pid_v1_joint_mount(tmp_path: Path) -> None:
    root = tmp_path / "cg"
    (root / "cpu,cpuacct").mkdir(parents=True)
    (root / "memory").mkdir()
    proc = tmp_path / "proc"
    write(proc / "7" / "cgroup", "3:memory:/x\n2:cpu,cpuacct:/x\n")
    g = cgroup.of_pid(7, root=root, proc=proc)
    assert g.paths["cpu"] == root / "cpu,cpuacct/x"
    assert g.paths["cpuacct"] == root / "cpu,cpuacct/x"


def test_of_pid_v2(v2: Path, tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    write(proc / "42" / "cgroup", "0::/machine.slice/libpod-abc.scope/container\n")
    g = cgroup.of_pid(42, root=v2, proc=proc)
    assert isinstance(g, cgroup.CgroupV2)
    assert g.path == v2 / "machine.slice/libpod-abc.scope/container"


def test_wrap_joins_every_hierarchy_then_execs(v1: Path) -> None:
    g = cgroup.create("g", 1, 2**29, root=v1)
    argv = g.wrap(["./server", "--flag"])
    assert argv[:2] == ["sh", "-c"]
    assert argv[2].count("echo $$ >") == 3 and argv[2].endswith('exec "$@"')
    assert argv[3:] == ["sh", "./server", "--flag"]


def test_remove(v1: Path) -> None:
    g = cgroup.create("g", 1, 2**29, root=v1)
    for p in g.paths.values():
        for f in p.iterdir():
            f.unlink()
    g.remove()
    assert not (v1 / "cpu/g").exists()


def test_working_set_v1_subtracts_inactive_file(v1: Path) -> None:
    g = cgroup.create("g", 1.5, 2**29, root=v1)
    fill_v1(g.paths)
    write(g.paths["memory"] / "memory.stat", "cache 50\ninactive_file 7\ntotal_inactive_file 30000000\n")
    assert g.working_set() == 100 * 2**20 - 30_000_000


def test_working_set_v2_subtracts_inactive_file(v2: Path) -> None:
    g = cgroup.create("bench/g", 1.5, 2**29, root=v2)
    write(g.path / "cpu.stat", "usage_usec 1\n")
    write(g.path / "memory.current", "1048576\n")
    write(g.path / "memory.stat", "anon 900000\nfile 148576\ninactive_file 48576\n")
    assert g.working_set() == 1_000_000
    write(g.path / "memory.stat", "inactive_file 2000000\n")  # never below zero
    assert g.working_set() == 0
