"""assay.records.challenge: the rules that let evidence fail, each on the valid knowledge base with one fault."""

from __future__ import annotations

from pathlib import Path

from assay import audit
from assay.records.knowledge_base import load


def test_a_counterpart_the_check_does_not_declare_is_an_error(diagnose):
    assert diagnose("unknown-counterpart") == (
        "claims/SOTA-364.yaml:48:20: error[unknown-counterpart]: check 'shuffle-bn': counterpart 'top1_no_fix' of "
        "'top1' is not declared\n"
        "  hint: a counterpart is the same statistic, in the same unit, measured in the same run on a condition where "
        "the comparison must not hold; declare it under the check's metrics:"
    )


def test_a_supporting_expectation_without_a_counterpart_is_unchallenged(diagnose):
    assert diagnose("unchallenged") == (
        "claims/SOTA-364.yaml:46:9: warning[unchallenged]: check 'shuffle-bn': 'top1 >= 50' names no counterpart, "
        "so it votes for nothing\n"
        "  hint: name under against: the metric of the model without the effect (for a control: with it), recorded "
        "in the same run"
    )


def test_a_threshold_weaker_than_the_source_s_size_warns(diagnose):
    assert diagnose("weaker-than-source") == (
        "claims/SOTA-364.yaml:48:43: warning[weaker-than-source]: check 'shuffle-bn': 'top1 >= 50' asks less than "
        "the source's 60.6 (a top-1 of 60.6 %)\n"
        "  hint: hold the threshold to the source's size, or say why it is weaker under weaker_because: (the "
        "assertion then reads at best direction-only)"
    )


def _mended(root: Path, old: str, new: str) -> list:
    """Every diagnostic of the knowledge base at ``root`` once SOTA-364's ``old`` text reads ``new``."""
    path = root / "claims" / "SOTA-364.yaml"
    path.write_text(path.read_text().replace(old, new))
    return audit.run(load(root))


def test_a_weaker_threshold_whose_record_says_why_does_not_warn(make_kb):
    root = make_kb("weaker-than-source")
    assert _mended(root, "citation: 1}", "citation: 1, weaker_because: our toy is 8x smaller}") == []


def test_a_regime_expectation_without_a_counterpart_is_not_unchallenged(make_kb):
    root = make_kb("unchallenged")
    assert _mended(root, "reported: moco-top1}", "reported: moco-top1, regime: true}") == []


def test_an_apparatus_check_named_as_evidence_is_an_error(diagnose):
    assert diagnose("apparatus-evidence") == (
        "claims/SOTA-364.yaml:57:10: error[apparatus-evidence]: assertion 'leak' names 'bn-cross-sample' as evidence, "
        "but it is apparatus (our own machinery)\n"
        "  hint: cite the checks that use the machinery (uses:); apparatus votes for no assertion"
    )


def test_uses_must_name_an_apparatus_check(diagnose):
    assert diagnose("unknown-apparatus") == (
        "claims/SOTA-364.yaml:41:12: error[unknown-apparatus]: check 'shuffle-bn' uses 'bn-cross-sample', which is "
        "not marked role: apparatus\n"
        "  hint: uses: names the apparatus checks (role: apparatus) whose machinery this check runs on"
    )


def test_an_assertion_reading_part_of_a_check_without_a_reason_is_a_diagnostic(diagnose):
    assert diagnose("unargued-subset") == (
        "claims/SOTA-364.yaml:57:47: warning[unargued-subset]: assertion 'leak' reads only top1 of check "
        "'shuffle-bn', not signature_acc_shuffled\n"
        "  hint: say why under because:; the page lists the unread expectations beside it with their outcome"
    )


def test_a_subset_with_its_reason_is_no_diagnostic(make_kb):
    root = make_kb("unargued-subset")
    assert _mended(root, "metrics: [top1]}", "metrics: [top1], because: the control is the leak's own}") == []


def test_more_than_fifty_warnings_in_a_file_are_counted_as_warnings_not_as_an_error(diagnose):
    out = diagnose("too-many-warnings").splitlines()
    assert out[-2:] == [
        "claims/SOTA-364.yaml:101:9: warning[too-many-warnings]: 2 more warnings in this file are not listed",
        "  hint: fix these and run assay check again",
    ]
    assert sum("warning[unchallenged]" in line for line in out) == 50


def test_a_control_without_a_counterpart_warns_that_nothing_shows_the_effect_model_fails_it(diagnose):
    assert diagnose("uncountered-control") == (
        "claims/SOTA-364.yaml:50:9: warning[uncountered-control]: check 'shuffle-bn': control "
        "'signature_acc_shuffled < 0.6' names no counterpart, so nothing shows that the model with the effect would "
        "fail it\n"
        "  hint: name under against: the same statistic measured on the model with the effect, recorded in the same run"
    )


def test_a_control_the_supporting_assertion_does_not_read_still_needs_its_counterpart(make_kb):
    root = make_kb("uncountered-control")
    out = _mended(
        root,
        "{check: shuffle-bn, stance: supports}",
        "{check: shuffle-bn, stance: supports, metrics: [top1], because: the control is read below}",
    )
    assert [d.code for d in out] == ["uncountered-control"]
