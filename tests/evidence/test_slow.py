"""The slow marker (assay.evidence.selection.SLOW): a --stale run, as make verify runs it, leaves a slow check out
unless the run asks for it; -m and --claim ask for it."""

from __future__ import annotations

import pytest

from tests.test_pytest_plugin import GAP_TESTS, check, make_kb

pytest_plugins = ["pytester"]

SLOW_TESTS = (
    GAP_TESTS
    + """
    @pytest.mark.slow
    @pytest.mark.claim("SOTA-001", "long")
    def test_long(evidence):
        evidence.metric("gap", 2.0)
    """
)

CHECKS = [check(name, f"test_{name}", '[{metric: gap, op: ">", value: 1}]') for name in ("gap", "long")]


def test_a_stale_run_leaves_out_a_slow_check_without_a_result_and_says_how_to_run_it(pytester: pytest.Pytester) -> None:
    root = make_kb(pytester, CHECKS, SLOW_TESTS)
    result = pytester.runpytest("verify", "--stale")
    result.assert_outcomes(passed=1, deselected=1)
    result.stdout.fnmatch_lines(
        [
            "left out 1 slow check(s) whose result is missing, stale or an error: SOTA-001/long "
            "(pytest verify -m slow, or --claim ID, runs them)"
        ]
    )
    assert sorted(p.name for p in (root / "results" / "SOTA-001").glob("*.json")) == ["gap.cpu.json"]


def test_a_stale_run_under_xdist_names_the_slow_check_its_workers_left_out(pytester: pytest.Pytester) -> None:
    make_kb(pytester, CHECKS, SLOW_TESTS)
    result = pytester.runpytest("verify", "--stale", "-n", "2")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "left out 1 slow check(s) whose result is missing, stale or an error: SOTA-001/long "
            "(pytest verify -m slow, or --claim ID, runs them)"
        ]
    )


def test_a_stale_run_with_the_slow_marker_expression_runs_the_slow_check(pytester: pytest.Pytester) -> None:
    root = make_kb(pytester, CHECKS, SLOW_TESTS)
    pytester.runpytest("verify", "--stale", "-m", "slow").assert_outcomes(passed=1, deselected=1)
    assert sorted(p.name for p in (root / "results" / "SOTA-001").glob("*.json")) == ["long.cpu.json"]


def test_a_stale_run_that_names_the_claim_runs_its_slow_check(pytester: pytest.Pytester) -> None:
    make_kb(pytester, CHECKS, SLOW_TESTS)
    result = pytester.runpytest("verify", "--stale", "--claim", "SOTA-001")
    result.assert_outcomes(passed=2)
    assert "left out" not in result.stdout.str()


def test_a_run_without_stale_runs_the_slow_check(pytester: pytest.Pytester) -> None:
    make_kb(pytester, CHECKS, SLOW_TESTS)
    pytester.runpytest("verify").assert_outcomes(passed=2)


def test_a_stale_run_leaves_out_a_slow_check_whose_result_is_fresh_without_naming_it(pytester: pytest.Pytester) -> None:
    make_kb(pytester, CHECKS, SLOW_TESTS)
    pytester.runpytest("verify").assert_outcomes(passed=2)
    result = pytester.runpytest("verify", "--stale")
    result.assert_outcomes(deselected=2)
    assert "left out" not in result.stdout.str()
