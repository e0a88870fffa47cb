"""assay.status: the rules from a check's result to an assertion's verdict to a claim's, as tables."""

from __future__ import annotations

import pytest

from assay import status
from assay.model import Assertion
from assay.overview import claim_states
from assay.records.knowledge_base import load
from assay.status import AssertionState, CheckState
from tests.conftest import write_result

SUPPORTS = Assertion(id="a", filed=["x"], source={"kind": "quoted"}, evidence=[{"check": "c", "stance": "supports"}])
REFUTES = Assertion(id="a", filed=["x"], source={"kind": "quoted"}, evidence=[{"check": "c", "stance": "refutes"}])
BOTH = Assertion(
    id="a",
    filed=["x"],
    source={"kind": "quoted"},
    evidence=[{"check": "c", "stance": "supports"}, {"check": "d", "stance": "refutes"}],
)
CITED = Assertion(id="a", filed=["x"], source={"kind": "quoted"}, cited_only="needs ImageNet")


ONLY_X = Assertion(
    id="a", filed=["x"], source={"kind": "quoted"}, evidence=[{"check": "c", "stance": "supports", "metrics": ["x"]}]
)


class _Result:
    """What the rules read of a ledger result: whether it measured, its verdict, how each expectation came out."""

    def __init__(self, verdict: str, outcomes: dict[str, str]):
        self.verdict, self.measured = verdict, verdict != "error"
        self.expectation = [type("E", (), {"metric": m, "outcome": o})() for m, o in outcomes.items()]


def state(check: str, st: str, holds: bool | None = None, stale: bool = False, **outcomes: str) -> CheckState:
    """A check's state; its one expectation ``x`` holds as its verdict says, or as ``holds``/``outcomes`` say."""
    if not outcomes:
        ok = holds if holds is not None else st == "passed"
        outcomes = {"x": "inconclusive" if st == "inconclusive" else "holds" if ok else "fails"}
    result = None if st in ("not-run", "skipped") else _Result(st, outcomes)
    return CheckState("SOTA-1", check, "cpu", st, ["x changed"] if stale else [], result)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("assertion", "checks", "expected"),
    [
        (SUPPORTS, [state("c", "passed")], "supported"),
        (SUPPORTS, [state("c", "failed")], "contradicted"),
        (SUPPORTS, [state("c", "known-failing")], "contradicted"),
        (SUPPORTS, [state("c", "inconclusive")], "inconclusive"),  # the seeds disagree: it decides nothing
        (SUPPORTS, [state("c", "failed", holds=True)], "supported"),  # a known failure that passed: the expectation held
        (SUPPORTS, [state("c", "error")], "error"),
        (SUPPORTS, [state("c", "passed", stale=True)], "stale"),
        (SUPPORTS, [state("c", "not-run")], "not-run"),
        (SUPPORTS, [state("c", "skipped")], "not-run"),
        (SUPPORTS, [], "not-run"),
        (REFUTES, [state("c", "passed")], "contradicted"),  # the check passing refutes the assertion
        (REFUTES, [state("c", "failed")], "inconclusive"),  # not refuted, not supported either
        (REFUTES, [state("c", "known-failing")], "inconclusive"),
        (REFUTES, [state("c", "inconclusive")], "inconclusive"),
        (BOTH, [state("c", "passed"), state("d", "failed")], "supported"),
        (BOTH, [state("c", "passed"), state("d", "passed")], "inconclusive"),
        (BOTH, [state("c", "failed"), state("d", "passed")], "contradicted"),
        (BOTH, [state("c", "passed"), state("d", "not-run")], "not-run"),
        (BOTH, [state("c", "passed"), state("d", "inconclusive")], "inconclusive"),
        (BOTH, [state("c", "inconclusive"), state("d", "failed")], "inconclusive"),
        (BOTH, [state("c", "failed"), state("d", "inconclusive")], "contradicted"),
        # evidence that reads only expectation x: another expectation failing does not count
        (ONLY_X, [state("c", "known-failing", x="holds", y="fails")], "supported"),
        (ONLY_X, [state("c", "known-failing", x="fails", y="holds")], "contradicted"),
        (ONLY_X, [state("c", "inconclusive", x="inconclusive", y="holds")], "inconclusive"),
        (ONLY_X, [state("c", "inconclusive", x="holds", y="inconclusive")], "supported"),
        (SUPPORTS, [state("c", "known-failing", x="holds", y="fails")], "contradicted"),  # all of them, unless restricted
        (CITED, [], "untested"),
    ],
)
def test_an_assertions_status_follows_its_checks_and_their_stances(assertion, checks, expected):
    by_key = {(c.check, c.device): c for c in checks}
    assert status.assertion_status(assertion, by_key, "cpu") == expected


def A(**by_device: str) -> AssertionState:
    return AssertionState("a", by_device)


@pytest.mark.parametrize(
    ("assertions", "ran", "expected"),
    [
        ([A(cpu="supported", cuda="not-run")], ["cpu"], "verified"),
        ([A(cpu="supported", cuda="contradicted")], ["cpu", "cuda"], "partly-verified"),
        ([A(cpu="supported"), A(cpu="untested")], ["cpu"], "partly-verified"),
        ([A(cpu="supported"), A(cpu="inconclusive")], ["cpu"], "partly-verified"),
        ([A(cpu="contradicted"), A(cpu="untested")], ["cpu"], "contradicted"),
        ([A(cpu="inconclusive"), A(cpu="untested")], ["cpu"], "inconclusive"),
        ([A(cpu="supported"), A(cpu="error")], ["cpu"], "error"),
        ([A(cpu="supported"), A(cpu="stale")], ["cpu"], "stale"),
        ([A(cpu="not-run")], [], "not-run"),
    ],
)
def test_a_claim_is_verified_only_when_every_assertion_is_supported_on_every_device_that_ran(assertions, ran, expected):
    claim = type("C", (), {"assertions": [SUPPORTS] * len(assertions)})()
    assert status.summarise_assertions(claim, assertions, ran) == expected  # type: ignore[arg-type]


def test_a_claim_whose_assertions_are_all_cited_only_is_cited_only():
    claim = type("C", (), {"assertions": [CITED]})()
    assert status.summarise_assertions(claim, [A(cpu="untested")], []) == "cited-only"  # type: ignore[arg-type]


def test_the_counts_name_every_device_and_say_which_did_not_run():
    assertions = [A(cpu="supported", cuda="not-run"), A(cpu="contradicted", cuda="not-run"), A(cpu="untested", cuda="untested")]
    assert status.counts_sentence(assertions, ["cpu", "cuda"], ["cpu"]) == (
        "cpu: 1 supported, 1 contradicted, 1 untested; cuda: not run"
    )


def test_the_fixture_claims_verdicts_come_from_their_assertions(kb_root):
    write_result(kb_root, "SOTA-364", "bn-cross-sample", "cpu", "passed", cross_sample_jacobian=0.1)
    write_result(kb_root, "SOTA-364", "shuffle-bn", "cpu", "failed", top1=10.0)
    st = claim_states(load(kb_root))["SOTA-364"]
    assert [(a.id, a.by_device) for a in st.assertions] == [("leak", {"cpu": "inconclusive", "cuda": "not-run"})]
    assert (st.status, st.counts) == ("inconclusive", "cpu: 1 inconclusive; cuda: not run")


@pytest.mark.parametrize(
    ("checks", "expected"),
    [
        ([], "cited-only"),
        (["passed", "passed"], "verified"),
        (["passed", "failed"], "partly-verified"),
        (["failed", "known-failing"], "contradicted"),
        (["inconclusive"], "inconclusive"),
        (["inconclusive", "failed"], "contradicted"),
        (["passed", "inconclusive"], "partly-verified"),
        (["not-run", "not-run"], "not-run"),
        (["error", "passed"], "error"),
    ],
)
def test_a_claim_not_yet_cut_into_assertions_summarises_its_checks(checks, expected):
    assert status.summarise(checks, any_stale=False) == expected


@pytest.mark.parametrize("stance", ["supports", "refutes"])
@pytest.mark.parametrize("cpu", ["passed", "failed", "known-failing", "inconclusive", "error", "not-run", "skipped"])
@pytest.mark.parametrize("cuda", ["passed", "failed", "inconclusive", "not-run", "skipped"])
def test_each_device_gets_its_own_verdict_from_its_own_result(stance, cpu, cuda):
    assertion = Assertion(id="a", filed=["x"], source={"kind": "quoted"}, evidence=[{"check": "c", "stance": stance}])
    on_cpu, on_cuda = state("c", cpu), state("c", cuda)
    on_cuda = CheckState("SOTA-1", "c", "cuda", on_cuda.status, [], on_cuda.result)
    both = {("c", "cpu"): on_cpu, ("c", "cuda"): on_cuda}
    alone = {"cpu": {("c", "cpu"): on_cpu}, "cuda": {("c", "cuda"): on_cuda}}
    for device in ("cpu", "cuda"):  # what one device ran never changes another's verdict
        assert status.assertion_status(assertion, both, device) == status.assertion_status(assertion, alone[device], device)
    expected = {
        ("supports", "passed"): "supported",
        ("supports", "failed"): "contradicted",
        ("supports", "known-failing"): "contradicted",
        ("refutes", "passed"): "contradicted",
        ("refutes", "failed"): "inconclusive",
        ("refutes", "known-failing"): "inconclusive",
        ("supports", "inconclusive"): "inconclusive",
        ("refutes", "inconclusive"): "inconclusive",
        ("supports", "error"): "error",
        ("refutes", "error"): "error",
    }
    assert status.assertion_status(assertion, both, "cpu") == expected.get((stance, cpu), "not-run")
    assert status.assertion_status(assertion, both, "cuda") == expected.get((stance, cuda), "not-run")
