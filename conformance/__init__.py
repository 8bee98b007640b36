"""cityref black-box conformance suite.

Run it with ``python -m conformance --help`` from the repository root, or ``cityref-conformance
--help`` where the distribution is installed. Everything it checks comes from ``spec/openapi.yaml``;
the golden cases are in ``conformance/cases.yaml``.
"""

from __future__ import annotations

import os
import sys

__version__ = "0.1.0"  # the distribution cityref-conformance (pyproject.toml reads it from here)


def prog(subcommand: str = "") -> str:
    """The command line as the user typed it: ``cityref-conformance`` or ``python -m conformance``."""
    name = "cityref-conformance" if os.path.basename(sys.argv[0]) == "cityref-conformance" else "python -m conformance"
    return f"{name} {subcommand}".strip()
