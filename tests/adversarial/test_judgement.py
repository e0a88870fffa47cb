"""What a verdict means, computed: the regime, the control, the sentence an expectation tests, counterparts that can
fail, a result re-judged from its measurements and never believed, and registration that follows the expectation.

Each test attacks one rule on the valid fixture's SOTA-364, whose assertion ``leak`` reads the toy check
``shuffle-bn`` (``top1 >= 50 against [top1_nofix]``, and the control ``signature_acc_shuffled < 0.6 against
[signature_acc_nofix]``) and, unless a test drops it, the analytic check ``bn-cross-sample``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from assay import audit
from assay.ledger import registration, store
from assay.ledger.history import CheckHistory, Commit, Point, ResultVersion, Spec
from assay.overview import claim_states
from assay.records.knowledge_base import load
from tests.conftest import write_result

CLAIM = Path("claims") / "SOTA-364.yaml"
#: Three seeds of a model with the fix (top1 high, signature low) and of one without it, each seed its own value.
GOOD = {
    "top1": [60.0, 62.0, 61.0],
    "top1_nofix": [20.0, 23.0, 21.0],
    "signature_acc_shuffled": [0.30, 0.32, 0.29],
    "signature_acc_nofix": [0.90, 0.93, 0.91],
}


def edit(root: Path, old: str, new: str) -> None:
    path = root / CLAIM
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def only_shuffle(root: Path) -> None:
    """``leak`` reads shuffle-bn alone."""
    edit(root, "      - {check: bn-cross-sample, stance: supports}\n", "")


def git(root: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env={**env, "PATH": "/usr/bin:/bin"})


def commit(root: Path, message: str) -> None:
    if not (root / ".git").exists():
        git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


def leak(root: Path) -> tuple[str, str]:
    a = claim_states(load(root))["SOTA-364"].assertions[0]
    return a.by_device["cpu"], a.why["cpu"]


def codes(root: Path) -> list[str]:
    return [d.render() for d in audit.run(load(root))]


def result(root: Path, verdict: str, **values: list[float]) -> Path:
    return write_result(root, "SOTA-364", "shuffle-bn", "cpu", verdict, seeds={**GOOD, **values}, seeds_used=[0, 1, 2])


def test_a_registered_effect_whose_counterpart_fails_it_is_supported(kb_root):
    only_shuffle(kb_root)
    commit(kb_root, "the record, before any result")
    result(kb_root, "passed")
    assert leak(kb_root) == ("supported", "shuffle-bn holds and its counterparts fail it")


def test_a_failing_regime_expectation_reads_out_of_regime_never_contradicted(kb_root):
    only_shuffle(kb_root)
    edit(
        kb_root,
        "      - {metric: signature_acc_shuffled,",
        "      - {metric: pretext_acc, op: '>=', value: 0.9, regime: true}\n      - {metric: signature_acc_shuffled,",
    )
    edit(
        kb_root,
        "    metrics: [\n",
        "    metrics: [\n      {name: pretext_acc, unit: fraction, measures: Pretext accuracy with the leak open},\n",
    )
    commit(kb_root, "a regime: the model with the leak learns to use it")
    # the effect fails (top1 far below 50), but the model never reached the regime the words speak of
    result(kb_root, "out-of-regime", top1=[10.0, 12.0, 11.0], pretext_acc=[0.2, 0.21, 0.19])
    state, why = leak(kb_root)
    assert state == "out-of-regime"
    assert why == ("the regime its words need was not reached: pretext_acc = 0.2, expected >= 0.9 (fails)")
    assert claim_states(load(kb_root))["SOTA-364"].status == "out-of-regime"


def test_a_failing_control_makes_the_check_undecided_never_against(kb_root):
    only_shuffle(kb_root)
    commit(kb_root, "the record")
    result(kb_root, "failed", top1=[10.0, 12.0, 11.0], signature_acc_shuffled=[0.9, 0.92, 0.95])
    assert leak(kb_root) == (
        "inconclusive",
        "shuffle-bn's control failed: signature_acc_shuffled = 0.9233, expected < 0.6 (fails)",
    )


def test_an_expectation_of_another_sentence_neither_contradicts_it_and_is_a_diagnostic(kb_root):
    only_shuffle(kb_root)
    path = kb_root / CLAIM
    path.write_text(
        path.read_text()
        + "  - id: top1-sentence\n"
        + "    filed: [Batch normalisation]\n"
        + "    source: {kind: paraphrased, citations: [1]}\n"
        + "    evidence:\n"
        + "      - {check: shuffle-bn, stance: supports, metrics: [top1], because: it tests the accuracy sentence}\n"
    )
    commit(kb_root, "two sentences")
    result(kb_root, "failed", top1=[10.0, 12.0, 11.0])
    state, _ = leak(kb_root)
    assert state == "unchallenged" or state != "contradicted"  # judged by the rest of the check, which holds
    found = [d for d in codes(kb_root) if "reads-other-sentence" in d]
    assert found == [
        "claims/SOTA-364.yaml:56:9: warning[reads-other-sentence]: assertion 'leak' reads all of check 'shuffle-bn', "
        "whose expectations top1 test the sentence of top1-sentence: it is not judged by those\n"
        "  hint: name under metrics: the expectations that test its own says: (and because: why only those)"
    ]


def test_a_quoted_report_with_a_check_as_evidence_is_a_diagnostic(kb_root):
    edit(kb_root, "source: {kind: paraphrased, citations: [1]", "source: {kind: reported, citations: [1]")
    found = [d for d in codes(kb_root) if "reported-with-evidence" in d]
    assert len(found) == 1
    assert found[0].startswith(
        "claims/SOTA-364.yaml:55:5: error[reported-with-evidence]: assertion 'leak' reports what a source says, yet "
        "names check(s) bn-cross-sample, shuffle-bn as its evidence: a run cannot contradict a quotation"
    )


def test_an_expectation_committed_with_its_result_is_provisional_until_fresh_seeds_confirm_it(kb_root):
    only_shuffle(kb_root)
    result(kb_root, "passed")
    commit(kb_root, "the record and its first result together")
    state, why = leak(kb_root)
    assert state == "provisional"
    assert why.startswith("provisional: top1 is with-result (stated at ")
    assert any("warning[unconfirmed]: check 'shuffle-bn': 'top1 >= 50' is with-result" in d for d in codes(kb_root))
    settled = {
        "plan": "3 fresh seeds",
        "seeds": [1000, 1001, 1002],
        "before_verdict": "passed",
        "before_finished": "2026-01-01T00:00:00Z",
    }
    write_result(kb_root, "SOTA-364", "shuffle-bn", "cpu", "passed", seeds=GOOD, seeds_used=[1000, 1001, 1002], settling=settled)
    assert leak(kb_root) == ("supported", "shuffle-bn holds and its counterparts fail it")


def test_after_a_confirming_run_that_did_not_hold_the_warning_no_longer_asks_for_one(kb_root):
    only_shuffle(kb_root)
    result(kb_root, "passed")
    commit(kb_root, "the record and its first result together")
    settled = {"plan": "3 fresh seeds", "seeds": [1000, 1001, 1002], "before_verdict": "passed"}
    settled["before_finished"] = "2026-01-01T00:00:00Z"
    low = {**GOOD, "top1": [40.0, 42.0, 41.0]}
    write_result(kb_root, "SOTA-364", "shuffle-bn", "cpu", "failed", seeds=low, seeds_used=[1000, 1001, 1002], settling=settled)
    commit(kb_root, "the confirming run")
    (warning,) = [d for d in codes(kb_root) if "warning[unconfirmed]: check 'shuffle-bn': 'top1 >= 50'" in d]
    assert warning.endswith(
        "a run on fresh seeds since its last move did not confirm it, and its result stands\n"
        "  hint: no further run confirms it (more fresh seeds would be shopping for a result): a verdict it would support "
        "reads provisional; restore the expectation as registered (assay history) to have its registered result count"
    )


def test_a_confirming_run_on_seeds_a_measuring_run_read_confirms_nothing(kb_root):
    only_shuffle(kb_root)
    result(kb_root, "passed")
    commit(kb_root, "the record and its first result together")
    settled = {"plan": "forged", "seeds": [2, 1000, 1001], "before_verdict": "passed", "before_finished": "2026-01-01T00:00:00Z"}
    write_result(kb_root, "SOTA-364", "shuffle-bn", "cpu", "passed", seeds=GOOD, seeds_used=[2, 1000, 1001], settling=settled)
    assert leak(kb_root)[0] == "provisional"


def test_a_settle_plan_that_names_a_record_seed_is_refused(tmp_path):
    from assay.evidence import settling

    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"SOTA-364/shuffle-bn": {"seeds": [0, 1, 2], "plan": "fresh seeds"}}))
    with pytest.raises(pytest.UsageError) as e:
        settling.load(str(plan))
    assert str(e.value) == (
        f"--settle-plan {plan}: cannot be read (SOTA-364/shuffle-bn names seed 0: a settling run's seeds are the "
        "engine's, from 1000 on, after every seed any run of the check has read); run assay verify --settle to write one"
    )


def test_without_history_a_seeded_support_is_provisional_and_check_says_why(kb_root):
    only_shuffle(kb_root)
    result(kb_root, "passed")  # no git here at all
    state, why = leak(kb_root)
    assert state == "provisional"
    assert why == (
        "provisional: no history here: not a git repository, or git is not installed; when its expectations were fixed "
        "cannot be told (confirm on fresh seeds)"
    )
    assert any("warning[no-history]" in d for d in codes(kb_root))


@pytest.mark.parametrize(
    ("counterpart", "flag"),
    [
        ([0.0, 0.0, 0.0], "is the same constant on every seed"),
        ([-60.0, -62.0, -61.0], "is an exact function of the effect's own values"),  # the effect negated
        ([100 - 60.0, 100 - 62.0, 100 - 61.0], "is an exact function of the effect's own values"),
    ],
)
def test_a_counterpart_that_is_a_constant_or_a_function_of_the_effect_challenges_nothing(kb_root, counterpart, flag):
    only_shuffle(kb_root)
    commit(kb_root, "the record")
    result(kb_root, "passed", top1_nofix=counterpart)
    assert leak(kb_root) == ("inconclusive", f"the counterpart top1_nofix {flag}: it challenges nothing (top1)")
    assert any(
        f"warning[constant-counterpart]: check 'shuffle-bn': counterpart 'top1_nofix' of 'top1 >= 50' {flag}" in d
        for d in codes(kb_root)
    )


def test_identical_seeds_decide_nothing_in_a_toy_check(kb_root):
    only_shuffle(kb_root)
    edit(kb_root, "        value: 50, against: [top1_nofix],", "        value: 50, seeds: mean, against: [top1_nofix],")
    commit(kb_root, "the record")
    result(kb_root, "passed", top1=[50.0000001] * 3)
    assert leak(kb_root) == (
        "inconclusive",
        "top1 is the same on all 3 seeds: a seeded measurement with no spread decides nothing (an identity? mark it "
        "identity: true)",
    )


def test_an_analytic_tier_does_not_exempt_a_seeded_expectation_from_its_counterpart(kb_root):
    only_shuffle(kb_root)
    edit(kb_root, "    tier: toy\n", "    tier: analytic\n")
    edit(kb_root, "        value: 50, against: [top1_nofix],", "        value: 50,")
    commit(kb_root, "the record")
    result(kb_root, "passed")
    assert leak(kb_root) == ("inconclusive", "unchallenged: no counterpart shows that shuffle-bn could have failed")


def test_a_control_alone_is_no_support(kb_root):
    only_shuffle(kb_root)
    edit(
        kb_root,
        "      - {check: shuffle-bn, stance: supports}",
        "      - {check: shuffle-bn, stance: supports, metrics: [signature_acc_shuffled], because: x}",
    )
    commit(kb_root, "the record")
    result(kb_root, "passed")
    assert leak(kb_root) == (
        "inconclusive",
        "shuffle-bn: it reads no effect expectation (only a control or the regime), which cannot support",
    )


def test_an_apparatus_that_never_ran_holds_the_check_that_uses_it_back(kb_root):
    only_shuffle(kb_root)
    edit(kb_root, "    tier: toy\n", "    tier: toy\n    uses: [bn-cross-sample]\n")
    edit(kb_root, "    tier: analytic\n", "    tier: analytic\n    role: apparatus\n")
    commit(kb_root, "the record")
    result(kb_root, "passed")
    assert leak(kb_root) == (
        "not-run",
        "the apparatus has no measurement here: shuffle-bn uses bn-cross-sample, which has not run on cpu",
    )


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("expectation.0.outcome", "fails", "'top1' is stored as fails, but its measurements make it holds"),
        ("expectation.0.against.0.outcome", "holds", "'top1_nofix' is stored as holds, but its measurements make it fails"),
        ("verdict", "inconclusive", "its verdict is inconclusive, but its expectations make it passed or failed"),
        ("metrics.top1.seeds", [40.0, 41.0, 42.0], "'top1' is stored as holds, but its measurements make it fails"),
    ],
)
def test_a_stored_judgement_that_does_not_follow_from_its_measurements_is_refused(kb_root, path, value, message):
    only_shuffle(kb_root)
    file = result(kb_root, "passed")
    data = json.loads(file.read_text())
    *up, last = path.split(".")
    node = data
    for k in up:
        node = node[int(k)] if k.isdigit() else node[k]
    node[last] = value
    file.write_text(json.dumps(data))
    rel = "results/SOTA-364/shuffle-bn.cpu.json"
    assert f"{rel}:1:1: error[ledger-shape]: {rel}: its stored judgement does not follow from its measurements: {message}" in (
        "\n".join(codes(kb_root))
    )
    assert leak(kb_root)[0] == "error"
    assert store.read_ledger(kb_root).get(("SOTA-364", "shuffle-bn", "cpu")) is None


def test_a_changed_threshold_is_re_judged_from_the_measurement_without_a_rerun(kb_root, capsys):
    from assay import cli

    only_shuffle(kb_root)
    commit(kb_root, "the record")
    result(kb_root, "passed")
    commit(kb_root, "its result")
    edit(kb_root, "        value: 50, against: [top1_nofix],", "        value: 65, against: [top1_nofix],")
    st = claim_states(load(kb_root))["SOTA-364"]
    (check,) = [c for c in st.checks if c.check == "shuffle-bn" and c.device == "cpu"]
    assert (check.status, check.stale) == ("failed", [])  # re-judged: 61 < 65 on every seed, and nothing to rerun
    assert leak(kb_root)[0] == "contradicted"
    assert cli.main(["--root", str(kb_root), "rejudge"]) == 0
    assert "re-judged SOTA-364/shuffle-bn.cpu: passed -> failed (measured 2026-01-01T00:00:00Z)" in capsys.readouterr().out
    kept = store.read_ledger(kb_root).get(("SOTA-364", "shuffle-bn", "cpu"))
    assert (kept.verdict, kept.finished, kept.rejudged is not None) == ("failed", "2026-01-01T00:00:00Z", True)


def _history(specs, versions) -> list[registration.Registration]:
    c = [Commit(f"{n:040x}", 1_700_000_000 + n, f"c{n}", n) for n in range(6)]
    ch = CheckHistory("SOTA-1", "k", specs=[(c[i], s) for i, s in specs])
    ch.results["cpu"] = [(c[i], v) for i, v in versions]
    return registration.register(ch, specs[-1][1], {"cpu": versions[-1][1]})


def test_a_threshold_lowered_with_its_metric_renamed_is_post_hoc():
    old, new = (Spec("m", ">", 0.5, count=3, first=0),), (Spec("m_gain", ">", 0.2, count=3, first=0),)
    same = (("m", "abc"),)  # the measurement's values: the same numbers under both names
    (r,) = _history(
        [(0, old), (2, new)],
        [
            (1, ResultVersion("failed", (Point("m", ">", 0.5, 0.31, "fails", 3),), seeds=(0, 1, 2), fingerprints=same)),
            (
                3,
                ResultVersion(
                    "passed", (Point("m_gain", ">", 0.2, 0.31, "holds", 3),), seeds=(0, 1, 2), fingerprints=(("m_gain", "abc"),)
                ),
            ),
        ],
    )
    assert (r.kind, r.votes) == ("post-hoc", False)
    assert "metric m -> m_gain" in r.why and "> 0.5 -> > 0.2" in r.why


def test_seeds_moved_after_a_failing_result_are_post_hoc():
    old, new = (Spec("m", ">", 0.5, count=3, first=0),), (Spec("m", ">", 0.5, count=3, first=30),)
    (r,) = _history(
        [(0, old), (2, new)],
        [
            (1, ResultVersion("failed", (Point("m", ">", 0.5, 0.31, "fails", 3),), seeds=(0, 1, 2))),
            (3, ResultVersion("passed", (Point("m", ">", 0.5, 0.61, "holds", 3),), seeds=(30, 31, 32))),
        ],
    )
    assert (r.kind, r.votes) == ("post-hoc", False)
    assert "seeds 0..2 -> 30..32" in r.why


def test_a_metric_that_moves_beyond_its_seed_spread_between_machines_is_unstable_until_fresh_seeds_decide():
    spec = (Spec("gap", ">", 0.1, seeds="mean", count=3, first=0),)
    point = (Point("gap", ">", 0.1, 0.12, "holds", 3),)

    def run(machine: str, mean: float, seeds=(0, 1, 2), settling=False) -> ResultVersion:
        return ResultVersion("passed", point, settling, seeds, machine=machine, spreads=(("gap", mean, 0.01),))

    (r,) = _history([(0, spec)], [(1, run("a AVX512", 0.108)), (2, run("b AVX2", 0.123))])
    assert r.kind == "registered" and not r.fixed
    assert r.unstable.startswith("its mean moved 0.108 -> 0.123 on the same seeds between two machines at ")
    (same,) = _history([(0, spec)], [(1, run("a AVX512", 0.108)), (2, run("a AVX512", 0.123))])
    assert same.unstable == "" and same.fixed  # one machine: a rerun, judged by the unstable flag of the ledger
    (decided,) = _history(
        [(0, spec)],
        [(1, run("a AVX512", 0.108)), (2, run("b AVX2", 0.123)), (3, run("b AVX2", 0.121, (1000, 1001, 1002), True))],
    )
    assert decided.unstable == "" and decided.fixed


def test_a_confirming_run_that_did_not_hold_is_not_run_again_on_more_fresh_seeds():
    old, new = (Spec("gap", ">", 0.1, seeds="mean"),), (Spec("gap", ">", 0.05, seeds="mean"),)
    failed = ResultVersion("failed", (Point("gap", ">", 0.05, 0.01, "fails", 3),), True, seeds=(1000, 1001, 1002))
    (r,) = _history(
        [(0, old), (2, new)],
        [
            (1, ResultVersion("inconclusive", (Point("gap", ">", 0.1, 0.09, "inconclusive", 3),), seeds=(0, 1, 2))),
            (3, ResultVersion("passed", (Point("gap", ">", 0.05, 0.09, "holds", 3),), seeds=(0, 1, 2))),
            (4, failed),  # the confirming run on fresh seeds: it did not hold
        ],
    )
    assert (r.confirmed, r.tried, r.fixed) == (False, True, False)
    assert r.why.endswith("; a run on fresh seeds since its last move did not confirm it, and its result stands")
