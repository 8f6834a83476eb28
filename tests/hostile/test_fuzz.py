"""The fuzzer's property in CI: a few hundred derandomized cases (bench/fuzz_inputs.py runs more).

Every case ends with exit 0 or 2, prints no traceback, and leaves the store unchanged on exit 2.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from .fuzzing import Case, cases, check_case, make_template


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return make_template(tmp_path_factory.mktemp("fuzz"))


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz_case") / "case"


@settings(
    max_examples=250,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate, Phase.shrink],
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
        HealthCheck.large_base_example,
    ],
)
@given(case=cases())
def test_every_input_ends_in_exit_0_or_2_and_refusals_write_nothing(template, work, case: Case):
    _, failure = check_case(case, template, work)
    assert failure is None, f"{case.show()}\n=> {failure}"
