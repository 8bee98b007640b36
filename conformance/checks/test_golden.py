"""Group `golden`: every case of conformance/cases.yaml (+ fixture cities, + HEAD twins), byte for byte."""

import pytest

from conformance import golden
from conformance.cases import load_cases

CASES = load_cases()
BY_ID = {c.id: c for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_golden(case, fetch):
    resp = fetch(case)
    problems = golden.compare(case, resp)
    if case.head_of:
        get_case = BY_ID[case.head_of]
        problems += golden.compare_head(fetch(get_case), resp, volatile_length=get_case.volatile)
    assert not problems, (
        "; ".join(p.splitlines()[0] for p in problems)
        + f"\n{case.method} {case.short_target()}\n"
        + "\n".join(problems)
    )
