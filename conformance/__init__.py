"""cityref black-box conformance suite.

Run it with ``python -m conformance --help`` from the repository root. Everything it checks comes
from ``spec/openapi.yaml``; the golden cases are in ``conformance/cases.yaml``.
"""
