"""Same as ``python -m conformance`` from the repository root, runnable from anywhere."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from conformance.cli import main  # noqa: E402

sys.exit(main())
