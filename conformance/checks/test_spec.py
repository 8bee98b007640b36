"""Group `spec`: every golden case's response validated against spec/openapi.yaml (openapi-core)."""

import pytest

from conformance.cases import load_cases
from conformance.validate import SpecValidator

CASES = load_cases()


@pytest.fixture(scope="module")
def validator():
    return SpecValidator()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_spec(case, fetch, validator):
    resp = fetch(case)
    problems = validator.validate(case.method, case.target, resp)
    assert not problems, (
        "; ".join(p.splitlines()[0] for p in problems)
        + f"\n{case.method} {case.short_target()} -> {resp.status}\n"
        + "\n".join(problems)
    )
