import sys

from conformance.cli import console

sys.exit(console())
