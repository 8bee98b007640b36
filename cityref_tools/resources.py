"""Where the files the tools read are: a checkout of the repository, or the installed distribution.

Every file is named by its path in the repository: ``path("spec/openapi.yaml")``,
``path("data/fixture")``, ``path("conformance/cases.yaml")``.

* In a checkout (this file is ``<root>/cityref_tools/resources.py`` and ``<root>/spec/openapi.yaml``
  exists) a path resolves under the repository root.
* In the installed distribution ``cityref-conformance`` (a wheel) there is no repository: the
  packages' own files (``conformance/…``, ``cityref_tools/…``) are where the packages are installed,
  and the rest of what the suite reads (``spec/``, ``data/fixture/``, ``data/dataset.py``) is
  bundled under ``cityref_tools/_bundled/`` with the same relative paths (pyproject.toml,
  force-include). There is no ``services/`` directory: what needs one calls ``require_checkout``.

This module is the only place that knows the two layouts.
"""

from __future__ import annotations

import pathlib

PACKAGES = ("conformance", "cityref_tools")  # the installed packages, whose files are not bundled
MARKER = pathlib.PurePosixPath("spec/openapi.yaml")  # a checkout's root holds the contract


class ResourceError(RuntimeError):
    """A file or directory the caller needs is not available in this layout."""


class Layout:
    """The files of one installation: ``import_root`` holds the packages (the repository root in a
    checkout, site-packages for a wheel); ``bundle`` is where a wheel keeps spec/ and data/."""

    def __init__(self, import_root: pathlib.Path, bundle: pathlib.Path | None = None):
        self.import_root = import_root
        self.bundle = bundle if bundle is not None else import_root / "cityref_tools" / "_bundled"

    @property
    def checkout(self) -> pathlib.Path | None:
        """The repository root, or None when running from an installed distribution."""
        if self.bundle.is_dir():
            return None
        return self.import_root if (self.import_root / MARKER).is_file() else None

    @property
    def installed(self) -> bool:
        return self.checkout is None and (self.bundle / MARKER).is_file()

    @property
    def root(self) -> pathlib.Path:
        """The directory where repository paths other than the packages' resolve: the checkout's
        root, or the bundle (which has no services/)."""
        return self.checkout or self.bundle

    def path(self, rel: str | pathlib.PurePath) -> pathlib.Path:
        """The file or directory at repository path ``rel`` (it may not exist)."""
        rel = pathlib.PurePosixPath(rel)
        if rel.is_absolute() or ".." in rel.parts:
            raise ResourceError(f"{rel}: expected a path inside the repository")
        checkout = self.checkout
        if checkout is not None:
            return checkout / rel
        if not self.installed:
            raise ResourceError(
                f"cityref data files not found: {self.import_root} is neither a checkout of the cityref "
                f"repository nor an installed cityref-conformance (no {self.bundle / MARKER})"
            )
        if rel.parts and rel.parts[0] in PACKAGES:
            return self.import_root / rel
        return self.bundle / rel

    def require_checkout(self, what: str) -> pathlib.Path:
        """The checkout's root; ResourceError naming ``what`` when there is none."""
        checkout = self.checkout
        if checkout is None:
            raise ResourceError(
                f"{what} needs a checkout of the cityref repository (its services/ directory); this is the "
                f"installed cityref-conformance in {self.import_root}. Let the suite start your implementation "
                "with --command, or point it at a running one with --base-url."
            )
        return checkout

    def default_out(self, *parts: str) -> pathlib.Path:
        """``out/<parts>`` of the checkout, or of the current directory when installed."""
        return (self.checkout or pathlib.Path.cwd()).joinpath("out", *parts)


LAYOUT = Layout(pathlib.Path(__file__).resolve().parent.parent)
IMPORT_ROOT = LAYOUT.import_root  # put this on PYTHONPATH for a subprocess that imports the packages
ROOT = LAYOUT.root


def checkout() -> pathlib.Path | None:
    return LAYOUT.checkout


def path(rel: str | pathlib.PurePath) -> pathlib.Path:
    return LAYOUT.path(rel)


def require_checkout(what: str) -> pathlib.Path:
    return LAYOUT.require_checkout(what)


def default_out(*parts: str) -> pathlib.Path:
    return LAYOUT.default_out(*parts)
