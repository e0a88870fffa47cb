"""assay.evidence.judge: the expectation judged, and the verdict of a run from its phases' outcomes."""

from __future__ import annotations

import pytest

from assay.evidence.judge import ExpectationNotMet, PhaseOutcome, VerifierError, judge, verdict_of
from assay.records.knowledge_base import load


@pytest.mark.parametrize(
    ("outcomes", "verdict"),
    [
        ([PhaseOutcome("passed", when="setup"), PhaseOutcome("passed")], ("passed", "")),
        ([PhaseOutcome("passed", when="setup"), PhaseOutcome("not-met", "gap = 0.5")], ("failed", "gap = 0.5")),
        ([PhaseOutcome("passed", when="setup"), PhaseOutcome("known-failing", "gap = 0.5")], ("known-failing", "gap = 0.5")),
        (
            [PhaseOutcome("passed", when="setup"), PhaseOutcome("xpassed")],
            ("failed", "declared known-failing, but the expectation held"),
        ),
        ([PhaseOutcome("skipped", "needs a GPU")], ("skipped", "needs a GPU")),
        ([PhaseOutcome("error", "fixture broke")], ("error", "fixture broke")),
        ([PhaseOutcome("passed", when="setup"), PhaseOutcome("timeout", "timed out")], ("error", "timed out")),
        ([PhaseOutcome("passed", when="setup"), PhaseOutcome("crash", "died")], ("error", "died")),
        ([PhaseOutcome("passed", when="setup")], ("error", "the run ended before the verifier finished")),
    ],
)
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
    assert str(info.value).splitlines()[1] == "  excess = 0.5 fraction, expected == 0 within 1e-06"


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "0.5", True, None])
def test_judge_refuses_a_metric_that_is_not_a_finite_number(kb_root, bad):
    claim = load(kb_root).claims["THEORY-085"]
    with pytest.raises(VerifierError, match="^metric 'excess' is .*, not a finite number; record metrics with evidence.metric"):
        judge(claim, claim.checks[0], {"excess": bad})


def _exp(op: str, value: float, seeds: str | None = None, tol: float | None = None, interval: float | None = None):
    from assay.experiment import Expectation

    return Expectation(metric="gap", op=op, value=value, seeds=seeds, tol=tol, interval=interval)


@pytest.mark.parametrize(
    ("exp", "value", "per_seed", "outcome"),
    [
        (_exp(">=", 0.1), 0.2, [], "holds"),  # one value: it decides
        (_exp(">=", 0.1), 0.05, [], "fails"),
        (_exp(">=", 0.1), 0.15, [0.12, 0.2, 0.13], "holds"),  # unset with seeds: every seed
        (_exp(">=", 0.1), 0.15, [0.12, 0.2, 0.08], "inconclusive"),  # the seeds disagree, whatever the summary says
        (_exp(">=", 0.1), 0.05, [0.02, 0.08, 0.05], "fails"),
        (_exp(">=", 0.1, seeds="all"), 0.15, [0.12, 0.2, 0.08], "inconclusive"),
        (_exp(">=", 0.1, seeds="mean"), 0.0, [0.20, 0.21, 0.19, 0.2], "holds"),  # the interval wholly above
        (_exp(">=", 0.1, seeds="mean"), 0.0, [0.02, 0.01, 0.03], "fails"),  # wholly below
        (_exp(">=", 0.1, seeds="mean"), 0.0, [0.0, 0.3, 0.05, 0.25], "inconclusive"),  # across the threshold
        (_exp("<", 0.1, seeds="mean", interval=0.99), 0.0, [0.05, 0.051, 0.052], "holds"),
        (_exp("==", 0.0, seeds="mean", tol=0.01), 0.0, [0.001, -0.001, 0.0], "holds"),  # inside the band
        (_exp("==", 0.0, seeds="mean", tol=0.01), 0.0, [0.5, 0.51, 0.49], "fails"),  # apart from it
        (_exp("==", 0.0, seeds="mean", tol=0.01), 0.0, [0.0, 0.03, -0.02], "inconclusive"),  # across its edge
    ],
)
def test_an_expectation_reads_the_seeds_as_the_record_says(exp, value, per_seed, outcome):
    from assay.ledger.judgement import read_seeds

    assert read_seeds(exp, value, per_seed)["outcome"] == outcome


def test_the_mean_interval_is_students_t():
    from assay.statistics import mean_interval

    low, high = mean_interval([1.0, 2.0, 3.0], 0.95)  # mean 2, sd 1, t(0.975, 2) = 4.3027
    assert (round(low, 4), round(high, 4)) == (round(2 - 4.302653 / 3**0.5, 4), round(2 + 4.302653 / 3**0.5, 4))
    assert mean_interval([5.0], 0.95) == (5.0, 5.0)


def test_seeds_that_disagree_make_the_run_inconclusive_and_say_how_many_held(kb_root):
    from assay.evidence.judge import ExpectationInconclusive

    claim = load(kb_root).claims["THEORY-085"]
    with pytest.raises(ExpectationInconclusive) as info:
        judge(claim, claim.checks[0], {"excess": 0.0}, {"excess": [0.0, 0.0, 0.5]})
    [e] = info.value.evaluated
    assert (e.outcome, e.seeds, e.seeds_holding, e.seeds_total) == ("inconclusive", "all", 2, 3)
    assert "(the seeds disagree)" in str(info.value)
    assert "2 of 3 satisfy it" in str(info.value)


def test_verdict_of_an_inconclusive_run():
    assert verdict_of([PhaseOutcome("passed", when="setup"), PhaseOutcome("inconclusive", "2 of 3")]) == (
        "inconclusive",
        "2 of 3",
    )


@pytest.mark.parametrize(
    ("p", "df", "table"), [(0.975, 1, 12.7062), (0.975, 4, 2.7764), (0.975, 30, 2.0423), (0.995, 2, 9.9248), (0.95, 9, 1.8331)]
)
def test_the_t_quantile_matches_the_printed_table(p, df, table):
    from assay.statistics import t_quantile

    assert round(t_quantile(p, df), 4) == table


SHUFFLE = {"top1": 60.0, "top1_nofix": 20.0, "signature_acc_shuffled": 0.3, "signature_acc_nofix": 0.9}


def test_each_counterpart_is_read_with_the_expectation_s_comparison_and_all_failing_it_discriminates(kb_root):
    claim = load(kb_root).claims["SOTA-364"]
    top1, control = judge(claim, claim.check("shuffle-bn"), SHUFFLE)
    assert [(c.metric, c.measured, c.outcome) for c in top1.against] == [("top1_nofix", 20.0, "fails")]
    assert [(c.metric, c.outcome) for c in control.against] == [("signature_acc_nofix", "fails")]
    assert (top1.discriminates, control.discriminates) == (True, True)


def test_a_counterpart_that_meets_the_comparison_does_not_discriminate(kb_root):
    claim = load(kb_root).claims["SOTA-364"]
    top1, control = judge(claim, claim.check("shuffle-bn"), {**SHUFFLE, "signature_acc_nofix": 0.5})
    assert (top1.discriminates, control.discriminates) == (True, False)
    assert control.against[0].outcome == "holds"


def test_a_counterpart_is_read_seed_by_seed_as_its_expectation_is(kb_root):
    claim = load(kb_root).claims["SOTA-364"]
    seeds = {"top1": [60.0, 61.0], "top1_nofix": [45.0, 55.0]}  # the model without the fix meets >= 50 on one seed
    top1 = judge(claim, claim.check("shuffle-bn"), SHUFFLE, seeds)[0]
    c = top1.against[0]
    assert (c.seeds, c.seeds_holding, c.seeds_total, c.outcome) == ("all", 1, 2, "inconclusive")
    assert top1.discriminates is False  # undecided is not a demonstrated failure


def test_a_counterpart_the_verifier_did_not_record_is_the_verifier_s_error(kb_root):
    claim = load(kb_root).claims["SOTA-364"]
    metrics = {k: v for k, v in SHUFFLE.items() if k != "top1_nofix"}
    with pytest.raises(VerifierError) as info:
        judge(claim, claim.check("shuffle-bn"), metrics)
    assert str(info.value) == (
        "SOTA-364/shuffle-bn: the verifier did not record metric 'top1_nofix', a counterpart of 'top1' "
        "(recorded: signature_acc_nofix, signature_acc_shuffled, top1)"
    )
