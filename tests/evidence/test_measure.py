"""assay.evidence.measure: what `pytest verify --measure` prints for a person to paste into the record."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from assay.evidence.measure import stub
from tests.conftest import BROKEN, VALID
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
