"""assay.evidence.training: checks that name one experiment train it once per run and are judged each on its own."""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.test_pytest_plugin import CLAIM, check, ledger, make_kb

pytest_plugins = ["pytester"]

SHARED = """\
    from pathlib import Path

    import pytest


    def train(seeds):
        with open(Path(__file__).parents[1] / "trainings.txt", "a") as log:  # one line per training
            log.write("trained\\n")
        return {"gap": [2.0 + s for s in seeds]}


    @pytest.mark.claim("SOTA-001", "gap")
    def test_gap(evidence, experiment):
        evidence.metric("gap", min(experiment(train, [0, 1])["gap"]))


    @pytest.mark.claim("SOTA-001", "wide")
    def test_wide(evidence, experiment):
        evidence.metric("gap", max(experiment(train, [0, 1])["gap"]))
    """


_SHARED_CHECKS = (
    check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]', "experiment: two-seeds\n"),
    check(
        "wide",
        "test_wide",
        '[{metric: gap, op: ">", value: 10}]',
        "experiment: two-seeds\nknown_failing: the gap is 3 at our scale, not over 10\n",
    ),
)


def _shared_kb(pytester: pytest.Pytester):
    return make_kb(pytester, list(_SHARED_CHECKS), SHARED)


def _verdicts(root) -> tuple[str, str]:
    return ledger(root, "gap")["verdict"], ledger(root, "wide")["verdict"]


def test_two_checks_of_one_experiment_train_it_once_and_are_judged_each_on_its_own(pytester: pytest.Pytester) -> None:
    root = _shared_kb(pytester)
    pytester.runpytest("verify").assert_outcomes(passed=1, xfailed=1)  # each check in its own forked child
    assert (root / "trainings.txt").read_text() == "trained\n"
    assert _verdicts(root) == ("passed", "known-failing")


def test_under_xdist_two_workers_train_an_experiment_once(pytester: pytest.Pytester) -> None:
    root = _shared_kb(pytester)
    # --dist loadgroup would keep the two on one worker; with pytest 9 and xdist 3.8 it does not (xdist renames a
    # grouped test through a node attribute pytest no longer reads), so the second waits for the first's training
    pytester.runpytest_subprocess("verify", "-n", "2", "--dist", "loadgroup").assert_outcomes(passed=1, xfailed=1)
    assert (root / "trainings.txt").read_text() == "trained\n"
    assert _verdicts(root) == ("passed", "known-failing")


def test_the_verifiers_of_one_experiment_are_marked_as_one_xdist_group(pytester: pytest.Pytester) -> None:
    _shared_kb(pytester)
    items, _ = pytester.inline_genitems("verify")
    assert [[m.args for m in item.iter_markers("xdist_group")] for item in items] == [[("experiment.two-seeds",)]] * 2


def test_checks_of_two_claims_that_name_one_experiment_train_it_once(pytester: pytest.Pytester) -> None:
    gap, wide = _SHARED_CHECKS
    root = make_kb(pytester, [gap], SHARED.replace('claim("SOTA-001", "wide")', 'claim("SOTA-002", "wide")'))
    (root / "claims" / "SOTA-002.yaml").write_text(CLAIM.format(checks=wide).replace("SOTA-001", "SOTA-002"))
    pytester.runpytest("verify").assert_outcomes(passed=1, xfailed=1)
    assert (root / "trainings.txt").read_text() == "trained\n"
    assert ledger(root, "gap")["verdict"] == "passed"
    assert json.loads((root / "results" / "SOTA-002" / "wide.cpu.json").read_text())["verdict"] == "known-failing"


def test_measuring_before_the_expectations_are_written_trains_the_experiment_once(pytester: pytest.Pytester) -> None:
    """The guide's order: --measure runs while the checks have no expect: yet, so the record does not validate."""
    unwritten = "".join(
        f"  - id: {cid}\n    tests: The gap is positive.\n    verifier: verify/test_kb.py::test_{cid}\n"
        "    tier: analytic\n    devices: [cpu]\n    experiment: two-seeds\n"
        for cid in ("gap", "wide")
    )
    root = make_kb(pytester, [unwritten], SHARED)
    pytester.runpytest("verify", "--measure", "--claim", "SOTA-001").assert_outcomes(passed=2)
    assert (root / "trainings.txt").read_text() == "trained\n"


def test_what_json_cannot_keep_is_the_verifier_s_error_with_the_way_out(pytester: pytest.Pytester) -> None:
    verifier = textwrap.dedent(SHARED).replace('return {"gap"', 'return {"model": object(), "gap"')
    make_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]', "experiment: two-seeds\n")], verifier)
    (pytester.path / "verify" / "test_kb.py").write_text(verifier.split('\n\n\n@pytest.mark.claim("SOTA-001", "wide")')[0])
    result = pytester.runpytest("verify")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*experiment 'two-seeds': train returned what JSON cannot keep (Object of type object is not JSON "
            "serializable); return numbers, strings, and lists or dicts of them (tensor.tolist(), float(x))*"
        ]
    )
