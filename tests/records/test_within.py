"""assay.records.within: the rules of one record, each on the valid knowledge base with one fault."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import audit
from assay.records.knowledge_base import load
from assay.records.placeholders import THRESHOLD_MARK

HINT = (
    "  hint: measure on pilot seeds (pytest verify --measure --claim {claim} --check {check}), name the metric for what "
    "it measures, set the threshold from the spread and the source's size, and delete the line's '# assay new:' mark"
)


def test_an_expectation_keeping_the_threshold_assay_new_wrote_warns(diagnose):
    assert diagnose("scaffold-threshold") == (
        "claims/SOTA-364.yaml:50:51: warning[scaffold-threshold]: check 'shuffle-bn': 'signature_acc_shuffled < 0.5' "
        "keeps the threshold 0.5 as assay new wrote it\n" + HINT.format(claim="SOTA-364", check="shuffle-bn")
    )


def test_an_expectation_keeping_a_metric_name_assay_new_wrote_warns(diagnose):
    assert diagnose("scaffold-threshold-metric") == (
        "claims/SOTA-364.yaml:50:10: warning[scaffold-threshold]: check 'shuffle-bn': 'control < 0.6' keeps the metric "
        "name 'control' as assay new wrote it\n" + HINT.format(claim="SOTA-364", check="shuffle-bn")
    )


#: The scaffold's check with its metrics named for what they measure: what is left to flag is its two thresholds.
NAMED = (
    ("name: effect", "name: gap"),
    ("name: control", "name: gap_off"),
    ("metric: effect", "metric: gap"),
    ("metric: control", "metric: gap_off"),
    ("against: [control]", "against: [gap_off]"),
    ("against: [effect]", "against: [gap]"),
)
EFFECT = '{metric: gap, op: ">", value: 0.5, against: [gap_off]}'
CONTROL = '{metric: gap_off, op: "<", value: 0.5, control: true, against: [gap]}'


def _scaffold_warnings(tmp_path: Path, *edits: tuple[str, str]) -> list[str]:
    """The scaffold-threshold warnings of the claim `assay new` writes (metrics renamed), after ``edits``."""
    from assay.records.placeholders import claim_text
    from assay.records.validation import load_record

    text = claim_text("SOTA-002", "LIT-001", ["x"])
    for old, new in (*NAMED, *edits):
        assert old in text, old
        text = text.replace(old, new)
    (tmp_path / "claims").mkdir()
    (tmp_path / "claims" / "SOTA-002.yaml").write_text(text)
    return [d.render() for d in load_record(tmp_path, "claims/SOTA-002.yaml").rules if d.code == "scaffold-threshold"]


def _kept(line: int, col: int, exp: str) -> str:
    return (
        f"claims/SOTA-002.yaml:{line}:{col}: warning[scaffold-threshold]: check 'x': '{exp}' keeps the threshold 0.5 "
        "as assay new wrote it\n" + HINT.format(claim="SOTA-002", check="x")
    )


#: The control's warning, unchanged by every edit of the effect's expectation below.
CONTROL_KEPT = _kept(38, 36, "gap_off < 0.5")


@pytest.mark.parametrize(
    ("new", "col", "shown"),
    [
        (EFFECT, 32, "gap > 0.5"),  # as written
        (EFFECT.replace('">"', '">="'), 33, "gap >= 0.5"),  # another comparison
        (EFFECT.replace('">"', '"<"'), 32, "gap < 0.5"),  # turned round: an absence
        (EFFECT.replace("against:", "control: true, against:"), 32, "gap > 0.5"),  # made a control (the roles swapped)
        (EFFECT.replace("against:", "regime: true, against:"), 32, "gap > 0.5"),  # made a regime expectation
        (EFFECT.replace("against: [gap_off]", "against: []"), 32, "gap > 0.5"),  # its counterparts changed
        (EFFECT.replace("0.5", "0.50"), 32, "gap > 0.5"),  # the same number, written otherwise
        (EFFECT.replace("0.5", ".5"), 32, "gap > 0.5"),
    ],
    ids=["as-written", "ge", "turned-round", "control", "regime", "counterparts", "0.50", ".5"],
)
def test_a_threshold_assay_new_wrote_warns_whatever_became_of_the_comparison_around_it(tmp_path, new, col, shown):
    assert _scaffold_warnings(tmp_path, (EFFECT, new)) == [_kept(37, col, shown), CONTROL_KEPT]


def test_a_threshold_assay_new_wrote_warns_when_written_out_as_a_block_with_its_mark(tmp_path):
    mark = f"  {THRESHOLD_MARK}"
    block = "\n".join(["metric: gap", '        op: ">"', f"        value: 0.5{mark}", "        against: [gap_off]"])
    assert _scaffold_warnings(tmp_path, (EFFECT + mark, block)) == [_kept(39, 9, "gap > 0.5"), _kept(41, 36, "gap_off < 0.5")]


def test_a_second_expectation_on_the_same_metric_that_the_author_added_does_not_warn(tmp_path):
    mine = '\n      - {metric: gap, op: "<", value: 0.5, against: [gap_off]}'  # an upper bound, with no mark
    control = f"{CONTROL}  {THRESHOLD_MARK}"
    assert _scaffold_warnings(tmp_path, (control, control + mine)) == [_kept(37, 32, "gap > 0.5"), CONTROL_KEPT]


@pytest.mark.parametrize("value", ["0.8", "1", "0.49"])
def test_a_changed_threshold_does_not_warn_though_its_mark_was_left(tmp_path, value):
    assert _scaffold_warnings(tmp_path, (EFFECT, EFFECT.replace("0.5", value))) == [CONTROL_KEPT]


def test_a_threshold_of_0_5_an_author_wrote_without_the_mark_does_not_warn(tmp_path):
    # the repository's SOTA-364, SOTA-371 and SOTA-382 compare measured metrics with 0.5, under control: and not
    assert _scaffold_warnings(tmp_path, (f"{EFFECT}  {THRESHOLD_MARK}", EFFECT)) == [CONTROL_KEPT]


def test_a_check_testing_words_no_assertion_reading_it_quotes_warns(diagnose):
    assert diagnose("tests-not-read") == (
        "claims/SOTA-364.yaml:40:5: warning[tests-not-read]: check 'shuffle-bn' tests 'Layer norm opens no such "
        "channel.', words of SOTA-364's text, but no assertion that reads the check (leak) quotes or says them\n"
        "  hint: make tests: the words (of filed:, or the says:) of an assertion that names the check as evidence, or "
        "name the check in the evidence of the assertion these words belong to"
    )


def test_a_check_testing_the_says_of_an_assertion_that_does_not_read_it_warns(diagnose):
    assert diagnose("tests-not-read-says") == (
        "claims/SOTA-364.yaml:40:5: warning[tests-not-read]: check 'shuffle-bn' tests 'Layer norm does not couple the "
        "samples of a batch.', the says: of assertion 'layer-norm', but no assertion that reads the check (leak) "
        "quotes or says them\n"
        "  hint: make tests: the words (of filed:, or the says:) of an assertion that names the check as evidence, or "
        "name the check in the evidence of the assertion these words belong to"
    )


def _mended(root: Path, old: str, new: str) -> list:
    path = root / "claims" / "SOTA-364.yaml"
    path.write_text(path.read_text().replace(old, new))
    return audit.run(load(root))


def test_a_check_testing_the_words_of_an_assertion_that_reads_it_is_no_diagnostic(make_kb):
    root = make_kb("tests-not-read")
    layer_norm = "here.}\n    evidence:\n"
    assert _mended(root, layer_norm, layer_norm + "      - {check: shuffle-bn, stance: supports}\n") == []


def test_a_check_testing_in_words_of_its_own_is_no_diagnostic(make_kb):
    root = make_kb("tests-not-read")
    assert _mended(root, "tests: Layer norm opens no such channel.", "tests: Shuffled BN hides the signature.") == []
