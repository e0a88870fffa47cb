"""assay.evidence.measure: what `pytest verify --measure` prints for a person to paste into the record."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from assay.evidence.measure import stub
from tests.conftest import BROKEN, VALID
from tests.evidence.test_training import SHARED  # two checks reading one experiment, which logs each training
from tests.test_pytest_plugin import check
from tests.test_pytest_plugin import make_kb as make_plugin_kb

pytest_plugins = ["pytester"]


def test_the_yaml_stub_parses_with_a_unit_that_yaml_would_misread_unquoted():
    measured = {
        "top1": {"unit": "% top-1", "seeds": [70.0, 71.0, 72.0], "value": 71.0},
        "gap": {"unit": None, "seeds": [], "value": 0.3},
    }
    assert yaml.safe_load(stub(measured)) == {
        "metrics": [
            {"name": "gap", "unit": "UNIT", "measures": "WHAT IT MEASURES"},
            {"name": "top1", "unit": "% top-1", "measures": "WHAT IT MEASURES"},
        ],
        "expect": None,
    }


SEEDED = """\
    import pytest


    @pytest.mark.claim("SOTA-001", "gap")
    def test_gap(evidence, seeds):
        values = [0.2 + 0.01 * s for s in seeds]
        evidence.metric("gap", sum(values) / len(values), seeds=values)
    """


def _seeded_kb(pytester: pytest.Pytester, seeds: str) -> Path:
    return make_plugin_kb(
        pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 0.1}]', f"seeds: {seeds}\n")], SEEDED
    )


def _pilot(pytester: pytest.Pytester) -> list[str]:
    result = pytester.runpytest("verify", "--measure", "--measure-seeds", "20", "--claim", "SOTA-001")
    result.assert_outcomes(passed=1)
    return result.stdout.lines


def test_the_measure_stub_proposes_the_ledger_s_seeds_as_the_next_block_after_the_pilot_s(pytester: pytest.Pytester) -> None:
    _seeded_kb(pytester, "{count: 5}")  # as `assay new` writes it: seeds 0-4, read by the pilot on 0-19
    out = _pilot(pytester)
    at = out.index("    seeds: {first: 20, count: 5}")
    assert out[at - 1] == (
        "    # seeds: for the ledger, none of the pilot's seeds 0..19: the expectations are chosen on those, so only fresh "
        "seeds test them"
    )


def test_a_record_whose_seeds_the_pilot_read_is_warned_at_its_seeds_field_with_what_to_write(pytester: pytest.Pytester) -> None:
    for layer in (VALID, BROKEN / "pilot-seeds"):  # THEORY-085's check reads seeds: {count: 5}, as `assay new` writes it
        shutil.copytree(layer, pytester.path, dirs_exist_ok=True)
    (pytester.path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\naddopts = "-p no:cacheprovider"\n'
    )
    result = pytester.runpytest("verify/test_theory085.py", "--measure", "--measure-seeds", "20", "--claim", "THEORY-085")
    result.assert_outcomes(passed=1)
    out = result.stdout.lines
    at = out.index(
        "claims/THEORY-085.yaml:16:5: warning[pilot-seeds]: check log-n-cap's seeds: {first: 0, count: 5} reads seeds 0..4, "
        "5 of which the pilot just read (seeds 0..19); write seeds: {first: 20, count: 5}"
    )
    assert out[at + 1] == (
        "  hint: the expectations are chosen on the pilot's seeds: a ledger run that reads them again tests nothing fresh "
        "(the path: pilot, commit the expectations, then the ledger on fresh seeds)"
    )


def test_a_record_whose_seeds_follow_the_pilot_s_keeps_them_and_is_not_warned(pytester: pytest.Pytester) -> None:
    _seeded_kb(pytester, "{first: 30, count: 8}")
    out = _pilot(pytester)
    assert "    seeds: {first: 30, count: 8}" in out
    assert not [line for line in out if "pilot-seeds" in line]


BUSY = """\
    import time

    import pytest


    @pytest.mark.claim("SOTA-001", "gap")
    def test_gap(evidence, seeds):
        start = time.process_time()
        while time.process_time() - start < 0.3:  # 0.3 CPU s in the test call
            pass
        evidence.metric("gap", 0.3, seeds=[0.3 for _ in seeds])
    """


def test_the_summary_gives_each_check_the_cpu_seconds_of_its_test_call(pytester: pytest.Pytester) -> None:
    make_plugin_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 0.1}]', "seeds: {count: 5}\n")], BUSY)
    header = next(line for line in _pilot(pytester) if line.startswith("SOTA-001/gap on seeds 0..19: "))
    cpu_s = float(header.removeprefix("SOTA-001/gap on seeds 0..19: ").removesuffix(" CPU s in its test call"))
    assert 0.3 <= cpu_s < 5


def _shared_measure(pytester: pytest.Pytester, verifiers: str) -> list[str]:
    checks = [check(c, f"test_{c}", '[{metric: gap, op: ">", value: 1}]', "experiment: two-seeds\n") for c in ("gap", "wide")]
    make_plugin_kb(pytester, checks, verifiers)
    result = pytester.runpytest("verify", "--measure", "--claim", "SOTA-001")
    result.assert_outcomes(passed=2)
    return [line for line in result.stdout.lines if line.startswith("experiment ")]


def test_the_summary_says_an_experiment_shared_by_two_checks_trained_once_for_both(pytester: pytest.Pytester) -> None:
    assert _shared_measure(pytester, SHARED) == [
        "experiment two-seeds: trained once for checks SOTA-001/gap, SOTA-001/wide (SOTA-001/gap trained it: its CPU s "
        "hold the training)"
    ]


def test_the_summary_says_an_experiment_trained_again_when_its_checks_asked_with_other_arguments(
    pytester: pytest.Pytester,
) -> None:
    wide_seeds = SHARED.replace('max(experiment(train, [0, 1])["gap"])', 'max(experiment(train, [0, 2])["gap"])')
    assert _shared_measure(pytester, wide_seeds) == [
        "experiment two-seeds: trained 2 times in this run for checks SOTA-001/gap, SOTA-001/wide (SOTA-001/gap 1, "
        "SOTA-001/wide 1): each training is CPU spent again; give its checks the same function and arguments to train "
        "it once"
    ]
