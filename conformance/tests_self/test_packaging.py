"""The installable suite: the resource locator in both layouts, what the wheel bundles, the new
command-line options and subcommands (the container one only as far as the argv it builds), and the
examples in docs/examples/. The installed wheel itself is exercised by scripts/package-test.sh."""

from __future__ import annotations

import pathlib
import tomllib

import pytest
import yaml

from cityref_tools import esdata, resources
from cityref_tools.resources import Layout, ResourceError
from conformance import cli, differential, elastic
from conformance.known import differential_entries, load_known

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "docs" / "examples"
# every repository file outside the packages that the suite reads (through resources.path)
BUNDLED = ("spec/openapi.yaml", "spec/openapi.json", "spec/elasticsearch/city_v1.json",
           "spec/elasticsearch/region_v1.json", "data/fixture/cities.json", "data/fixture/regions.json",
           "data/dataset.py")  # fmt: skip


def installed_tree(tmp_path: pathlib.Path) -> pathlib.Path:
    """site-packages as the wheel leaves it: the packages, and spec/ data/ under the bundle."""
    site = tmp_path / "site-packages"
    (site / "conformance").mkdir(parents=True)
    (site / "conformance" / "cases.yaml").write_text("cases: []\n")
    for rel in ("spec/openapi.yaml", "data/fixture/cities.json"):
        f = site / "cityref_tools" / "_bundled" / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("{}")
    return site


# ---------------------------------------------------------------- the locator


def test_checkout_layout():
    assert resources.checkout() == REPO
    assert resources.ROOT == REPO and resources.IMPORT_ROOT == REPO
    assert resources.path("spec/openapi.yaml") == REPO / "spec" / "openapi.yaml"
    assert resources.path("conformance/cases.yaml") == REPO / "conformance" / "cases.yaml"
    assert resources.require_checkout("--service") == REPO
    assert resources.default_out("conformance") == REPO / "out" / "conformance"
    for rel in BUNDLED:
        assert resources.path(rel).is_file(), rel


def test_installed_layout(tmp_path, monkeypatch):
    site = installed_tree(tmp_path)
    layout = Layout(site)
    assert layout.checkout is None and layout.installed
    bundle = site / "cityref_tools" / "_bundled"
    assert layout.root == bundle
    assert layout.path("spec/openapi.yaml") == bundle / "spec" / "openapi.yaml"
    assert layout.path("data/fixture") == bundle / "data" / "fixture"
    assert layout.path("conformance/cases.yaml") == site / "conformance" / "cases.yaml"
    assert layout.path("cityref_tools/x.py") == site / "cityref_tools" / "x.py"
    monkeypatch.chdir(tmp_path)
    assert layout.default_out("conformance") == tmp_path / "out" / "conformance"
    with pytest.raises(ResourceError, match="--command"):
        layout.require_checkout("--service")


def test_bundle_wins_over_a_stray_spec(tmp_path):
    site = installed_tree(tmp_path)
    (site / "spec").mkdir()
    (site / "spec" / "openapi.yaml").write_text("{}")
    assert Layout(site).checkout is None


def test_neither_layout(tmp_path):
    layout = Layout(tmp_path)
    assert layout.checkout is None and not layout.installed
    with pytest.raises(ResourceError, match="neither a checkout"):
        layout.path("spec/openapi.yaml")


@pytest.mark.parametrize("rel", ["/etc/passwd", "../x", "spec/../../x"])
def test_paths_stay_inside(rel):
    with pytest.raises(ResourceError):
        resources.path(rel)


def test_pyproject_bundles_what_the_suite_reads():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    wheel = project["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert set(wheel["packages"]) == set(resources.PACKAGES)
    force = wheel["force-include"]
    for rel in BUNDLED:
        src = next((s for s in force if rel == s or rel.startswith(s + "/")), None)
        assert src is not None, f"{rel} is not bundled"
        assert force[src] == "cityref_tools/_bundled/" + src
    assert project["project"]["scripts"]["cityref-conformance"] == "conformance.cli:console"
    pins = dict(line.split("==") for line in (REPO / "conformance/requirements.txt").read_text().split())
    for dep in project["project"]["dependencies"]:
        name, version = dep.split("==")
        assert pins[name] == version, dep
    assert project["build-system"]["requires"][0].startswith("hatchling==")


def test_fixture_documents_come_from_the_located_dataset():
    ds = esdata.dataset()
    assert pathlib.Path(ds.__file__) == resources.path("data/dataset.py")
    assert len(list(ds.fixture("cities"))) == 21 and len(list(ds.fixture("regions"))) == 13


# ---------------------------------------------------------------- command line


@pytest.mark.parametrize("option", ["--known-failures", "--known"])
def test_known_failures_option(option):
    args = cli.parse_args(["--command", "./x", option, "mine.yaml"])
    assert args.known_failures == "mine.yaml"


@pytest.mark.parametrize("option", ["--known-failures", "--known"])
def test_differential_known_failures_option(option):
    args = differential.parse_args(["--base-url", "a=http://h:1", option, "a=k.yaml", option, "b=l.yaml"])
    assert args.known == ["a=k.yaml", "b=l.yaml"]


def test_known_failures_file_is_applied(tmp_path, monkeypatch):
    """The user's file reaches the runner's known-failures map (no Elasticsearch: stop there)."""
    known = tmp_path / "known.yaml"
    known.write_text("known_failures:\n  - {check: golden/health, reason: an example}\n")
    seen = {}

    class Stop(Exception):
        pass

    def fake_plugin(k, groups):
        seen.update(k)
        raise Stop

    monkeypatch.setattr(cli, "RunnerPlugin", fake_plugin)
    monkeypatch.setattr(cli.prerequisites, "elasticsearch", lambda *a, **kw: None)
    with pytest.raises(Stop):
        cli.main(["--command", "./x", "--known-failures", str(known), "--out", str(tmp_path / "out")])
    assert seen == {"golden/health": "an example"}


def test_service_needs_a_checkout(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(resources, "LAYOUT", Layout(installed_tree(tmp_path)))
    work = tmp_path / "elsewhere"
    work.mkdir()
    monkeypatch.chdir(work)
    assert cli.main(["--service", "go-kit"]) == 2
    assert "--command" in capsys.readouterr().err
    assert (work / "out" / "conformance").is_dir()  # the default --out without a checkout
    assert differential.main(["--service", "go-kit", "--out", str(tmp_path / "d")]) == 2


@pytest.mark.parametrize(
    ("argv", "target"),
    [
        (["differential", "--x"], "conformance.differential.main"),
        (["load-fixture", "--x"], "conformance.elastic.load_fixture_main"),
        (["elasticsearch", "--x"], "conformance.elastic.container_main"),
        (["--x"], "conformance.cli.main"),
    ],
)
def test_console_dispatch(argv, target, monkeypatch):
    module, _, name = target.rpartition(".")
    calls = []
    monkeypatch.setattr(f"{module}.{name}", lambda a: calls.append(a) or 7)
    assert cli.console(argv) == 7
    assert calls == [argv[1:] if argv[0] != "--x" else argv]


def test_version(capsys):
    with pytest.raises(SystemExit):
        cli.parse_args(["--version"])
    assert "cityref-conformance 0.1.0" in capsys.readouterr().out


def test_load_fixture_args(monkeypatch):
    monkeypatch.delenv("CITYREF_ES_URL", raising=False)
    assert elastic.parse_load_args([]).es_url == "http://127.0.0.1:9250"
    args = elastic.parse_load_args(["--es-url", "http://127.0.0.1:9200", "--wait", "5"])
    assert (args.es_url, args.wait) == ("http://127.0.0.1:9200", 5)


def test_load_fixture_unreachable(capsys):
    assert elastic.load_fixture_main(["--es-url", "http://127.0.0.1:9", "--wait", "0"]) == 2
    assert "not usable" in capsys.readouterr().err


# ---------------------------------------------------------------- the elasticsearch container


def test_container_defaults():
    args = elastic.parse_container_args([])
    assert (args.runtime, args.image, args.port, args.name, args.stop) == (
        None,
        "localhost/cityref/elasticsearch:8.19.21",
        9200,
        "cityref-elasticsearch",
        False,
    )


def test_container_run_argv():
    assert elastic.run_argv("podman", "img:1", 9201, "es-x") == [
        "podman", "run", "--detach", "--name", "es-x", "--network", "host",
        "--env", "discovery.type=single-node",
        "--env", "xpack.security.enabled=false",
        "--env", "http.port=9201",
        "--env", "network.host=127.0.0.1",
        "--env", "ES_JAVA_OPTS=-Xms512m -Xmx512m",
        "img:1",
    ]  # fmt: skip
    assert elastic.stop_argv("docker", "es-x") == ["docker", "rm", "--force", "es-x"]
    assert elastic.state_argv("docker", "es-x")[:3] == ["docker", "container", "inspect"]


def test_container_runtime_choice():
    assert elastic.find_runtime(lambda r: "/usr/bin/" + r) == "podman"
    assert elastic.find_runtime(lambda r: "/usr/bin/docker" if r == "docker" else None) == "docker"
    assert elastic.find_runtime(lambda r: None) is None
    assert elastic.parse_container_args(["--runtime", "docker", "--stop"]).runtime == "docker"
    wrapper = str(REPO / "scripts" / "podman.sh")
    assert elastic.parse_container_args(["--runtime", wrapper]).runtime == wrapper
    for bad in ("lxc", "/nonexistent/podman", str(REPO / "pyproject.toml")):
        with pytest.raises(SystemExit):
            elastic.parse_container_args(["--runtime", bad])


def test_container_main_flow(monkeypatch, capsys):
    """The sequence of runtime commands for a fresh start (no runtime, no Elasticsearch needed)."""
    ran = []

    class Done:
        def __init__(self, rc=0, out=""):
            self.returncode, self.stdout, self.stderr = rc, out, ""

    def fake_run(argv, **kw):
        ran.append(argv)
        if argv[1:3] == ["container", "inspect"]:
            return Done(0 if any(a[1] == "run" for a in ran) else 125, "true")
        return Done()

    monkeypatch.setattr(elastic.subprocess, "run", fake_run)
    monkeypatch.setattr(elastic, "port_in_use", lambda port: False)
    monkeypatch.setattr(elastic.elasticsearch, "get", lambda es, path, timeout: {"status": "green"})
    loaded = []
    monkeypatch.setattr(elastic, "load", lambda es: loaded.append(es) or 0)
    assert elastic.container_main(["--runtime", "docker", "--port", "9211", "--image", "i"]) == 0
    assert ran[1] == elastic.run_argv("docker", "i", 9211, "cityref-elasticsearch")
    assert loaded == ["http://127.0.0.1:9211"]
    assert capsys.readouterr().out == "http://127.0.0.1:9211\n"


# ---------------------------------------------------------------- docs/examples


def test_example_workflow():
    doc = yaml.safe_load((EXAMPLES / "github-actions.yml").read_text(encoding="utf-8"))
    job = next(iter(doc["jobs"].values()))
    es = job["services"]["elasticsearch"]
    assert es["image"] == elastic.OFFICIAL_IMAGE
    assert es["env"]["discovery.type"] == "single-node" and es["env"]["xpack.security.enabled"] == "false"
    runs = "\n".join(str(s.get("run", "")) for s in job["steps"])
    for needle in ("pip install", "cityref-conformance load-fixture", "--known-failures", "--junit", "--command"):
        assert needle in runs, needle
    assert any(str(s.get("uses", "")).startswith("actions/upload-artifact") for s in job["steps"])


def test_example_known_failures():
    path = EXAMPLES / "known-failures.yaml"
    assert load_known("their-impl", path)
    assert differential_entries(path)
