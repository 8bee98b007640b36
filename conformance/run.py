"""Same as ``python -m conformance`` from the repository root, runnable from anywhere."""

import pathlib
import runpy
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

runpy.run_module("conformance", run_name="__main__")
