"""assay.records.within: the rules of one record, each on the valid knowledge base with one fault."""

from __future__ import annotations

from pathlib import Path

from assay import audit
from assay.records.knowledge_base import load


def test_an_expectation_keeping_the_threshold_assay_new_wrote_warns(diagnose):
    assert diagnose("scaffold-threshold") == (
        "claims/SOTA-364.yaml:50:51: warning[scaffold-threshold]: check 'shuffle-bn': 'signature_acc_shuffled < 0.5' "
        "keeps the threshold < 0.5 as assay new wrote it\n"
        "  hint: measure on pilot seeds (pytest verify --measure --claim SOTA-364 --check shuffle-bn), name the metric "
        "for what it measures, and set the threshold from the spread and the source's size"
    )


def test_an_expectation_keeping_a_metric_name_assay_new_wrote_warns(diagnose):
    assert diagnose("scaffold-threshold-metric") == (
        "claims/SOTA-364.yaml:50:10: warning[scaffold-threshold]: check 'shuffle-bn': 'control < 0.6' keeps the metric "
        "name 'control' as assay new wrote it\n"
        "  hint: measure on pilot seeds (pytest verify --measure --claim SOTA-364 --check shuffle-bn), name the metric "
        "for what it measures, and set the threshold from the spread and the source's size"
    )


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
