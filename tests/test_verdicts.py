"""assay.verdicts: the expectation judged, and the verdict of a run from its phases' outcomes."""

from __future__ import annotations

import pytest

from assay.loader import load
from assay.verdicts import ExpectationNotMet, Outcome, VerifierError, judge, verdict_of


@pytest.mark.parametrize(("outcomes", "verdict"), [
    ([Outcome("passed", when="setup"), Outcome("passed")], ("passed", "")),
    ([Outcome("passed", when="setup"), Outcome("not-met", "gap = 0.5")], ("failed", "gap = 0.5")),
    ([Outcome("passed", when="setup"), Outcome("known-failing", "gap = 0.5")], ("known-failing", "gap = 0.5")),
    ([Outcome("passed", when="setup"), Outcome("xpassed")], ("failed", "declared known-failing, but the expectation held")),
    ([Outcome("skipped", "needs a GPU")], ("skipped", "needs a GPU")),
    ([Outcome("error", "fixture broke")], ("error", "fixture broke")),
    ([Outcome("passed", when="setup"), Outcome("timeout", "timed out")], ("error", "timed out")),
    ([Outcome("passed", when="setup"), Outcome("crash", "died")], ("error", "died")),
    ([Outcome("passed", when="setup")], ("error", "the run ended before the verifier finished")),
])
def test_the_verdict_comes_from_the_outcomes_of_the_phases(outcomes, verdict):
    assert verdict_of(outcomes) == verdict


def test_judge_returns_each_comparison_with_the_paper_number(kb_root):
    claim = load(kb_root).claims["THEORY-085"]
    evaluated = judge(claim, claim.checks[0], {"excess": 0.0})
    assert [(e.metric, e.measured, e.holds) for e in evaluated] == [("excess", 0.0, True)]


def test_judge_raises_expectation_not_met_carrying_the_evaluation(kb_root):
    claim = load(kb_root).claims["THEORY-085"]
    with pytest.raises(ExpectationNotMet) as info:
        judge(claim, claim.checks[0], {"excess": 0.5})
    assert [e.holds for e in info.value.evaluated] == [False]
    assert str(info.value).splitlines()[1] == "  excess = 0.5, expected == 0 within 1e-06"


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "0.5", True, None])
def test_judge_refuses_a_metric_that_is_not_a_finite_number(kb_root, bad):
    claim = load(kb_root).claims["THEORY-085"]
    with pytest.raises(VerifierError, match="^metric 'excess' is .*, not a finite number; record metrics with evidence.metric"):
        judge(claim, claim.checks[0], {"excess": bad})
