"""cityref benchmark harness: `scripts/python.sh -m bench --help`."""
