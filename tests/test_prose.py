"""assay.prose: numbers in prose are references to the ledger, rendered with their values, and a typed number warns."""

from __future__ import annotations

from assay import audit, prose
from assay.ledger import store
from assay.records.knowledge_base import load
from tests.adversarial.test_judgement import GOOD, edit, only_shuffle, result


def _says(root, text: str) -> None:
    edit(
        root,
        "    source: {kind: paraphrased, citations: [1], note: MoCo names the leak; the words are ours.}\n",
        f"    says: {text}\n    source: {{kind: paraphrased, citations: [1], note: MoCo names the leak; the words are ours.}}\n",
    )


def _rendered(root) -> str:
    kb = load(root)
    claim = kb.claims["SOTA-364"]
    ledger = store.read_ledger(root)
    return prose.render(claim.assertions[0].says, claim, prose.by_check(claim, ledger.get))


def test_a_reference_renders_the_ledgers_value_and_follows_a_rerun(kb_root):
    only_shuffle(kb_root)
    _says(kb_root, "With the fix, top1 reaches {shuffle-bn.top1} against {reported.moco-top1} in the paper.")
    result(kb_root, "passed")
    assert _rendered(kb_root) == ("With the fix, top1 reaches 61 % [58.5, 63.5; 3 seeds] against 60.6 % in the paper.")
    result(kb_root, "passed", top1=[70.0, 72.0, 71.0])  # a rerun that changes the value changes the prose with it
    assert _rendered(kb_root).startswith("With the fix, top1 reaches 71 % [68.5, 73.5; 3 seeds]")


def test_a_reference_the_ledger_does_not_hold_is_an_error(kb_root):
    only_shuffle(kb_root)
    _says(kb_root, "It reaches {shuffle-bn.top5}.")
    result(kb_root, "passed")
    found = [d.render() for d in audit.run(load(kb_root)) if d.code == "unknown-reference"]
    assert found == [
        "claims/SOTA-364.yaml:54:5: error[unknown-reference]: {shuffle-bn.top5} names metric 'top5' of check "
        "'shuffle-bn' that the record does not hold\n"
        "  hint: write {CHECK.METRIC} for a metric a check's result holds, {reported.ID} for a reported number"
    ]


def test_a_literal_number_not_in_the_ledger_warns_and_one_that_is_does_not(kb_root):
    only_shuffle(kb_root)
    _says(kb_root, "It reaches 61.0 (ours) against 73.9 in a paper we do not keep.")
    result(kb_root, "passed", top1=GOOD["top1"])
    found = [d.render() for d in audit.run(load(kb_root)) if d.code == "number-not-in-ledger"]
    assert found == [
        "claims/SOTA-364.yaml:54:5: warning[number-not-in-ledger]: 73.9 in the says matches no value the ledger or the "
        "record holds for this claim: a number typed by hand drifts from the measurement\n"
        "  hint: write it as a reference ({CHECK.METRIC}, {reported.ID}), or mark a number from elsewhere as {source: N}"
    ]
    edit(kb_root, "against 73.9 in", "against {source: 73.9} in")
    assert [d for d in audit.run(load(kb_root)) if d.code == "number-not-in-ledger"] == []
