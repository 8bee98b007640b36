"""services/<name>/cityref.yaml: one loader and one validation for every user."""

from __future__ import annotations

import pathlib

import yaml

from cityref_tools import resources

ROOT = resources.ROOT  # the repository root (an installed distribution: its bundle, without services/)
SERVICES = ROOT / "services"
REQUIRED = ("name", "language", "framework", "build", "command")


class DescriptorError(ValueError):
    pass


def load(path: pathlib.Path) -> dict:
    """The descriptor at ``path``, validated: the required keys, `command` an argv list."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(doc, dict):
        raise DescriptorError(f"{path}: the top level must be a mapping")
    missing = [k for k in REQUIRED if k not in doc]
    if missing or not isinstance(doc.get("command"), list) or not doc.get("command"):
        raise DescriptorError(f"{path}: needs {', '.join(REQUIRED)} (command: an argv list); missing {missing}")
    return doc


def paths() -> list[pathlib.Path]:
    """Every descriptor of this repository, in directory order."""
    return sorted(SERVICES.glob("*/cityref.yaml"))


def all_services() -> list[dict]:
    return [load(p) for p in paths()]


def path_of(name: str) -> pathlib.Path:
    """The descriptor of implementation ``name`` (its directory is its name)."""
    return SERVICES / name / "cityref.yaml"


def runs_on_jvm(descriptor: dict) -> bool:
    """Whether the service runs on a JVM (its descriptor's language is Java or Kotlin): the ones whose images
    carry an AOT cache, and that the startup and size targets of the JVM images apply to."""
    return str(descriptor.get("language", "")).startswith(("Java", "Kotlin"))
