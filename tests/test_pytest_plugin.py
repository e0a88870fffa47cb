"""The pytest plugin, run through pytester on tiny knowledge bases."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import matplotlib
import pytest
import scipy.stats  # noqa: F401 - likewise: a mean is read through scipy (assay.statistics)
import torch  # noqa: F401 - imported once here: pytester's in-process runs must not re-import it

from assay import files, fingerprints
from assay.fingerprints import input_hash
from assay.ledger import store
from assay.ledger.result import FORMAT, Result

matplotlib.use("Agg")
from assay.records.knowledge_base import load
from tests.verify_kb import CLAIM as VERIFY_KB_CLAIM  # the one-source knowledge base both suites start from
from tests.verify_kb import SOURCE

pytest_plugins = ["pytester"]

#: the shared claim, with a reported number the expectations may link
PAPER_GAP = '  - {{id: paper-gap, what: the gap, value: 1.0, unit: units, source: LIT-001, locator: "Table 1"}}\n'
CLAIM = VERIFY_KB_CLAIM.replace("checks:\n", f"reported:\n{PAPER_GAP}checks:\n", 1)


def check(cid: str, test: str, expect: str, extra: str = "") -> str:
    return textwrap.indent(
        textwrap.dedent(f"""\
        - id: {cid}
          tests: The gap is positive.
          verifier: verify/test_kb.py::{test}
          tier: analytic
          devices: [cpu]
          expect: {expect}
        """)
        + textwrap.indent(extra, "  "),
        "  ",
    )


def make_kb(pytester: pytest.Pytester, checks: list[str], verifiers: str) -> Path:
    root = pytester.path
    (root / "sources").mkdir()
    (root / "claims").mkdir()
    (root / "verify").mkdir()
    (root / "sources" / "LIT-001.yaml").write_text(SOURCE)
    (root / "claims" / "SOTA-001.yaml").write_text(CLAIM.format(checks="".join(checks)))
    (root / "verify" / "__init__.py").write_text("")
    (root / "verify" / "test_kb.py").write_text(textwrap.dedent(verifiers))
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\naddopts = "-p no:cacheprovider"\n')
    return root


GAP_TESTS = """\
    import pytest

    @pytest.mark.claim("SOTA-001", "gap")
    def test_gap(evidence):
        evidence.metric("gap", 2.0)
        evidence.metric("control", 0.0)
    """


def ledger(root: Path, check: str = "gap") -> dict:
    return json.loads((root / "results" / "SOTA-001" / f"{check}.cpu.json").read_text())


def test_a_passing_check_writes_its_ledger_file_with_verdict_metrics_and_inputs(pytester: pytest.Pytester) -> None:
    root = make_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]')], GAP_TESTS)
    result = pytester.runpytest("verify", "--device", "cpu")
    result.assert_outcomes(passed=1)
    data = ledger(root)
    assert data["verdict"] == "passed"
    assert data["metrics"] == {
        "gap": {"value": 2.0, "unit": None, "seeds": []},
        "control": {"value": 0.0, "unit": None, "seeds": []},
    }
    assert data["expectation"] == [
        {
            "metric": "gap",
            "op": ">",
            "value": 1.0,
            "tol": None,
            "reported": None,
            "control": False,
            "regime": False,
            "measured": 2.0,
            "holds": True,
            "outcome": "holds",
            "seeds": "value",
            "seeds_holding": None,
            "seeds_total": None,
            "interval": None,
            "level": None,
            "unit": None,
            "paper": None,
            "against": [],
            "discriminates": None,
        }
    ]
    assert data["environment"]["threads"] == 1
    assert set(data["inputs"]["parts"]) == {
        "check:SOTA-001#gap",
        "code:verify/__init__.py",
        "code:verify/test_kb.py",
        "pin:torch",
        "pin:numpy",
        "pin:scikit-learn",
        "pin:scipy",
        "device",
    }
    assert Result.model_validate(data).format == FORMAT
    assert data["inputs"]["hash"] == input_hash(data["inputs"]["parts"])
    result.stdout.fnmatch_lines(["*assay: claims verified in this run*", "SOTA-001 * verified * gap.cpu: passed"])


def test_an_unmet_expectation_fails_with_claim_check_metric_value_and_paper_number(pytester: pytest.Pytester) -> None:
    expect = '[{metric: gap, op: ">", value: 5, reported: paper-gap}, {metric: control, op: "==", value: 0, tol: 1.0e-6}]'
    root = make_kb(pytester, [check("gap", "test_gap", expect)], GAP_TESTS)
    result = pytester.runpytest("verify")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "SOTA-001/gap: The gap is positive.",  # the comparisons with their numbers, not the engine's frames
            "  gap = 2, expected > 5 (paper: 1 units, LIT-001 Table 1)",
        ]
    )
    data = ledger(root)
    assert data["verdict"] == "failed"
    assert [e["holds"] for e in data["expectation"]] == [False, True]
    assert data["expectation"][0]["paper"] == {
        "value": 1.0,
        "bound": None,
        "unit": "units",
        "quantity": None,
        "locator": "Table 1",
        "source": "LIT-001",
    }


def test_a_known_failing_check_runs_as_strict_xfail(pytester: pytest.Pytester) -> None:
    extra = "known_failing: the gap is too small at our scale\n"
    root = make_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 5}]', extra)], GAP_TESTS)
    pytester.runpytest("verify").assert_outcomes(xfailed=1)
    assert ledger(root)["verdict"] == "known-failing"


def test_a_known_failing_check_that_passes_is_a_failure(pytester: pytest.Pytester) -> None:
    extra = "known_failing: the gap is too small at our scale\n"
    root = make_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]', extra)], GAP_TESTS)
    pytester.runpytest("verify").assert_outcomes(failed=1)
    data = ledger(root)
    assert data["verdict"] == "failed"
    assert data["message"].startswith("declared known-failing, but the expectation held")


def test_a_crash_in_a_known_failing_check_is_an_error_not_an_xfail(pytester: pytest.Pytester) -> None:
    extra = "known_failing: the gap is too small at our scale\n"
    tests = """\
        import pytest

        @pytest.mark.claim("SOTA-001", "gap")
        def test_gap(evidence):
            raise RuntimeError("boom")
        """
    root = make_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]', extra)], tests)
    pytester.runpytest("verify").assert_outcomes(failed=1)
    data = ledger(root)
    assert data["verdict"] == "error"
    assert data["last_error"]["kind"] == "error"
    assert data["last_error"]["message"] == "RuntimeError: boom (at verify/test_kb.py:5 in test_gap)"


def test_a_missing_metric_is_an_error_naming_what_was_recorded(pytester: pytest.Pytester) -> None:
    root = make_kb(pytester, [check("gap", "test_gap", '[{metric: width, op: ">", value: 1}]')], GAP_TESTS)
    result = pytester.runpytest("verify")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*VerifierError: SOTA-001/gap: the verifier did not record metric 'width' (recorded: control, gap)"]
    )
    assert ledger(root)["verdict"] == "error"
    assert ledger(root)["last_error"]["message"] == (
        "VerifierError: SOTA-001/gap: the verifier did not record metric 'width' (recorded: control, gap)"
    )


def test_a_hanging_verifier_times_out_as_an_error_and_the_run_goes_on(pytester: pytest.Pytester) -> None:
    tests = (
        GAP_TESTS
        + """
    @pytest.mark.claim("SOTA-001", "slow")
    def test_slow(evidence):
        import time
        time.sleep(30)
    """
    )
    checks = [
        check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]'),
        check("slow", "test_slow", '[{metric: gap, op: ">", value: 1}]', "timeout: 0.2\n"),
    ]
    root = make_kb(pytester, checks, tests)
    pytester.runpytest("verify", "-o", "assay_wall_floor_s=2").assert_outcomes(passed=1, failed=1)
    data = ledger(root, "slow")
    assert data["verdict"] == "error"
    assert data["last_error"]["kind"] == "timeout"
    assert data["last_error"]["message"].startswith("timed out: the verifier ran 2 s of wall time, over its limit of 2 s")
    assert ledger(root, "gap")["verdict"] == "passed"


def test_a_marker_naming_an_unknown_check_fails_with_a_clear_message_and_writes_nothing(pytester: pytest.Pytester) -> None:
    tests = """\
        import pytest

        @pytest.mark.claim("SOTA-001", "gaps")
        def test_gap(evidence):
            evidence.metric("gap", 2.0)
        """
    root = make_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]')], tests)
    result = pytester.runpytest("verify")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*verify/test_kb.py::test_gap: the claim marker names check 'gaps', which SOTA-001 does not have; see `assay check`"]
    )
    assert not (root / "results").exists()


def test_unregistered_markers_are_refused_with_strict_markers(pytester: pytest.Pytester) -> None:
    tests = (
        GAP_TESTS
        + """
    @pytest.mark.slwo
    def test_typo():
        pass
    """
    )
    make_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]')], tests)
    result = pytester.runpytest("verify", "--strict-markers")
    result.stdout.fnmatch_lines(["*'slwo' not found in `markers` configuration option*"])


def test_claim_option_selects_one_claim_exactly(pytester: pytest.Pytester) -> None:
    tests = (
        GAP_TESTS
        + """
    @pytest.mark.claim("SOTA-0011", "gap")
    def test_other(evidence):
        evidence.metric("gap", 2.0)
    """
    )
    make_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]')], tests)
    result = pytester.runpytest("verify", "--claim", "SOTA-001")
    result.assert_outcomes(passed=1, deselected=1)


def test_a_check_for_another_device_is_skipped_with_the_reason_and_not_written(pytester: pytest.Pytester) -> None:
    c = check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]').replace("devices: [cpu]", "devices: [cuda]")
    root = make_kb(pytester, [c], GAP_TESTS)
    result = pytester.runpytest("verify", "--device", "cpu", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*SOTA-001/gap declares devices *'cuda'*; this run is on cpu"])
    assert not (root / "results").exists()


def test_shards_split_the_checks_deterministically_and_cover_them_all(pytester: pytest.Pytester) -> None:
    names = [f"c{i}" for i in range(8)]
    tests = "import pytest\n" + "".join(
        f'\n@pytest.mark.claim("SOTA-001", "{n}")\ndef test_{n}(evidence):\n    evidence.metric("gap", 2.0)\n' for n in names
    )
    make_kb(pytester, [check(n, f"test_{n}", '[{metric: gap, op: ">", value: 1}]') for n in names], tests)
    ran = []
    for i in (1, 2, 3):
        out = pytester.runpytest("verify", "--shard", f"{i}/3", "-v").stdout.lines
        ran.append(sorted(line.split("::")[1].split()[0] for line in out if "PASSED" in line and "::" in line))
    assert sorted(sum(ran, [])) == sorted(f"test_{n}" for n in names)
    again = pytester.runpytest("verify", "--shard", "1/3", "-v").stdout.lines
    assert sorted(line.split("::")[1].split()[0] for line in again if "PASSED" in line and "::" in line) == ran[0]


def test_stale_option_runs_only_missing_or_stale_results(pytester: pytest.Pytester) -> None:
    root = make_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]')], GAP_TESTS)
    pytester.runpytest("verify").assert_outcomes(passed=1)
    pytester.runpytest("verify", "--stale").assert_outcomes(deselected=1)
    (root / "verify" / "test_kb.py").write_text((root / "verify" / "test_kb.py").read_text() + "\nCHANGED = True\n")
    pytester.runpytest("verify", "--stale").assert_outcomes(passed=1)


def test_a_docstring_or_comment_edit_of_a_verifier_after_its_run_leaves_stale_nothing_to_run(pytester: pytest.Pytester) -> None:
    root = make_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]')], GAP_TESTS)
    pytester.runpytest("verify").assert_outcomes(passed=1)
    verifier = root / "verify" / "test_kb.py"
    verifier.write_text(
        '"""Verifiers of SOTA-001, with a docstring added after the run."""\n'
        + verifier.read_text().replace("def test_gap(evidence):\n", 'def test_gap(evidence):\n    """The gap, reworded."""\n')
        + "\n# a comment too\n"
    )
    result = pytester.runpytest("verify", "--stale")
    result.assert_outcomes(deselected=1)


def recorded_from_bytes(root: Path) -> None:
    """Rewrite the ledger's result as the engine recorded it before the token digest: each module's part the digest
    of its bytes."""
    path = root / "results" / "SOTA-001" / "gap.cpu.json"
    data = json.loads(path.read_text())
    parts = {
        k: fingerprints.digest((root / k[5:]).read_bytes()) if k.startswith("code:") else v
        for k, v in data["inputs"]["parts"].items()
    }
    assert parts != data["inputs"]["parts"]
    data["inputs"] = {"hash": input_hash(parts), "parts": parts}
    path.write_text(json.dumps(data))


def test_a_result_recorded_from_its_modules_bytes_is_not_rerun_by_stale_while_they_keep_them(pytester: pytest.Pytester) -> None:
    root = make_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]')], GAP_TESTS)
    pytester.runpytest("verify").assert_outcomes(passed=1)
    recorded_from_bytes(root)
    pytester.runpytest("verify", "--stale").assert_outcomes(deselected=1)
    (root / "verify" / "test_kb.py").write_text('"""A docstring: other bytes."""\n' + textwrap.dedent(GAP_TESTS))
    pytester.runpytest("verify", "--stale").assert_outcomes(passed=1)  # what it ran cannot be known: rerun


def test_a_rerun_over_a_result_recorded_from_bytes_that_moves_the_verdict_with_the_same_inputs_is_flagged_unstable(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    tests = GAP_TESTS.replace(
        'evidence.metric("gap", 2.0)', 'import os\n        evidence.metric("gap", float(os.environ.get("GAP", "2.0")))'
    )
    root = make_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]')], tests)
    pytester.runpytest("verify").assert_outcomes(passed=1)
    recorded_from_bytes(root)
    monkeypatch.setenv("GAP", "0.5")
    pytester.runpytest("verify").assert_outcomes(failed=1)
    assert (ledger(root)["verdict"], ledger(root)["unstable"]["verdicts"]) == ("failed", ["passed", "failed"])


def test_the_ledger_is_written_once_by_the_controller_under_xdist(pytester: pytest.Pytester) -> None:
    names = ["a", "b", "c", "d"]
    tests = "import pytest\n" + "".join(
        f'\n@pytest.mark.claim("SOTA-001", "{n}")\ndef test_{n}(evidence):\n    evidence.metric("gap", 2.0)\n' for n in names
    )
    root = make_kb(pytester, [check(n, f"test_{n}", '[{metric: gap, op: ">", value: 1}]') for n in names], tests)
    result = pytester.runpytest_subprocess("verify", "-n", "2")
    result.assert_outcomes(passed=4)
    files = sorted(p.name for p in (root / "results" / "SOTA-001").iterdir())
    assert files == ["a.cpu.json", "b.cpu.json", "c.cpu.json", "d.cpu.json"]  # no temp files left behind
    assert all(ledger(root, n)["environment"]["threads"] == 1 for n in names)


def test_figures_are_written_as_svg_beside_the_ledger_file(pytester: pytest.Pytester) -> None:
    tests = """\
        import pytest

        @pytest.mark.claim("SOTA-001", "gap")
        def test_gap(evidence):
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            fig, ax = plt.subplots()
            ax.plot([0, 1], [0, 1])
            evidence.figure("line", fig)
            evidence.metric("gap", 2.0)
        """
    root = make_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]')], tests)
    pytester.runpytest("verify").assert_outcomes(passed=1)
    (path,) = (root / "results" / "SOTA-001").glob("gap.cpu.line.*.svg")
    svg = path.read_bytes()
    assert svg.startswith(b"<?xml")
    name = f"gap.cpu.line.{fingerprints.sha256(svg)[:12]}.svg"  # named by its content
    assert ledger(root)["figures"] == [{"name": "line", "file": name, "sha256": fingerprints.sha256(svg), "caption": None}]


def test_the_plugin_does_nothing_when_no_claim_test_is_collected(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert "assay:" not in result.stdout.str()
    assert not (pytester.path / "results").exists()


def test_a_killed_write_leaves_the_previous_ledger_file_intact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "results" / "SOTA-001" / "gap.cpu.json"
    files.write_atomic(path, '{"verdict": "passed"}')

    def killed(*_: object) -> None:
        raise KeyboardInterrupt  # the process dies between writing the temp file and renaming it

    monkeypatch.setattr("os.replace", killed)
    with pytest.raises(KeyboardInterrupt):
        files.write_atomic(path, '{"verdict": "failed"}')
    assert json.loads(path.read_text()) == {"verdict": "passed"}
    assert [p.name for p in path.parent.iterdir()] == ["gap.cpu.json"]


def test_status_tells_fresh_from_stale_and_says_why(pytester: pytest.Pytester) -> None:
    from assay.overview import claim_states

    root = make_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]')], GAP_TESTS)
    pytester.runpytest("verify").assert_outcomes(passed=1)
    state = claim_states(load(root))["SOTA-001"]
    assert (state.status, state.checks[0].stale) == ("verified", [])
    claim = root / "claims" / "SOTA-001.yaml"
    claim.write_text(claim.read_text().replace("value: 1}", "value: 1.5}"))
    (root / "verify" / "test_kb.py").write_text(GAP_TESTS.replace("2.0", "3.0"))
    state = claim_states(load(root))["SOTA-001"]
    assert state.status == "stale"
    assert state.checks[0].stale == ["verify/test_kb.py changed"]  # the threshold is the judgement: re-judged, not stale


def test_ledgers_from_two_machines_merge_by_copying(pytester: pytest.Pytester, tmp_path: Path) -> None:
    from assay.overview import claim_states

    root = make_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]')], GAP_TESTS)
    c = (root / "claims" / "SOTA-001.yaml").read_text().replace("devices: [cpu]", "devices: [cpu, cuda]")
    (root / "claims" / "SOTA-001.yaml").write_text(c)
    pytester.runpytest("verify", "--device", "cpu").assert_outcomes(passed=1)
    cpu = ledger(root)
    parts = {**cpu["inputs"]["parts"], "device": "cuda"}
    env = dict(cpu["environment"], packages=dict(cpu["environment"]["packages"], torch="2.11.0+cu128"), torch_build="cuda 12.8")
    gpu = dict(cpu, device="cuda", inputs={"parts": parts, "hash": input_hash(parts)}, environment=env)
    files.write_atomic(root / "results" / "SOTA-001" / "gap.cuda.json", json.dumps(gpu))  # as if copied from a GPU box
    (root / "requirements.lock").write_text(f"torch=={cpu['environment']['packages']['torch']}\n")
    states = claim_states(load(root))["SOTA-001"].checks
    assert [(s.device, s.status) for s in states] == [("cpu", "passed"), ("cuda", "passed")]
    assert states[1].off_lock == [f"torch 2.11.0+cu128 (lock: {cpu['environment']['packages']['torch']})"]


def test_ledger_root_writes_the_ledger_under_another_folder_and_leaves_the_repository_alone(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    root = make_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]')], GAP_TESTS)
    shard = tmp_path / "shard"
    result = pytester.runpytest("verify", "--ledger-root", str(shard))
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["SOTA-001     verified         gap.cpu: passed"])  # the status this run's result gives
    assert not (root / "results").exists()
    assert ledger(shard)["verdict"] == "passed"
    assert store.read_ledger(shard).diagnostics == []


def _with_assertions(root: Path, evidence: str) -> None:
    """Cut SOTA-001 into one assertion whose evidence is ``evidence`` (YAML flow list)."""
    path = root / "claims" / "SOTA-001.yaml"
    path.write_text(
        path.read_text()
        + textwrap.dedent(f"""\
        assertions:
          - id: more
            filed: [Two is more than one.]
            source: {{kind: quoted, citations: [1]}}
            evidence: {evidence}
        """)
    )


def test_a_refuting_check_that_holds_contradicts_its_assertion_after_a_real_run(pytester: pytest.Pytester) -> None:
    from assay.overview import claim_states

    root = make_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]')], GAP_TESTS)
    _with_assertions(root, "[{check: gap, stance: refutes}]")
    pytester.runpytest("verify").assert_outcomes(passed=1)
    state = claim_states(load(root))["SOTA-001"]
    assert (state.status, state.counts) == ("contradicted", "cpu: 1 contradicted")


def test_checks_that_disagree_leave_their_assertion_inconclusive_after_a_real_run(pytester: pytest.Pytester) -> None:
    from assay.overview import claim_states

    tests = (
        GAP_TESTS
        + """
    @pytest.mark.claim("SOTA-001", "other")
    def test_other(evidence):
        evidence.metric("gap", 0.5)
    """
    )
    checks = [
        check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]'),
        check("other", "test_other", '[{metric: gap, op: ">", value: 1}]'),
    ]
    root = make_kb(pytester, checks, tests)
    _with_assertions(root, "[{check: gap, stance: supports}, {check: other, stance: supports}]")
    pytester.runpytest("verify").assert_outcomes(passed=1, failed=1)
    state = claim_states(load(root))["SOTA-001"]
    assert (state.status, state.counts) == ("inconclusive", "cpu: 1 inconclusive")


SEEDED_TESTS = """\
    import pytest

    @pytest.mark.claim("SOTA-001", "gap")
    def test_gap(evidence):
        per_seed = [2.5, 1.5, 0.5]
        evidence.metric("gap", sum(per_seed) / 3, unit="units", seeds=per_seed)
    """


def test_seeds_that_disagree_make_an_inconclusive_result_and_assertion_after_a_real_run(pytester: pytest.Pytester) -> None:
    from assay.overview import claim_states

    root = make_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]')], SEEDED_TESTS)
    _with_assertions(root, "[{check: gap, stance: supports}]")
    result = pytester.runpytest("verify")
    assert result.ret == 0  # an open question is not a broken check: the run does not fail for it
    assert result.parseoutcomes() == {"inconclusive": 1}
    result.stdout.fnmatch_lines(
        [
            "*assay: inconclusive checks (an open question: the run does not fail for it)*",
            "verify/test_kb.py::test_gap: SOTA-001/gap: The gap is positive. (the seeds disagree)",
            "  gap = 1.5 (mean of 3 seeds; 2 of 3 satisfy it), expected > 1",
        ]
    )
    record = ledger(root)
    assert record["verdict"] == "inconclusive"
    assert {k: record["expectation"][0][k] for k in ("outcome", "seeds", "seeds_holding", "seeds_total")} == {
        "outcome": "inconclusive",
        "seeds": "all",
        "seeds_holding": 2,
        "seeds_total": 3,
    }
    state = claim_states(load(root))["SOTA-001"]
    assert (state.checks[0].status, state.status, state.counts) == ("inconclusive", "inconclusive", "cpu: 1 inconclusive")


def test_an_expectation_on_the_mean_reads_its_interval_after_a_real_run(pytester: pytest.Pytester) -> None:
    wide = '[{metric: gap, op: ">", value: 1, seeds: mean}]'  # mean 1.5, 95 % interval -0.98 to 3.98: across 1
    root = make_kb(pytester, [check("gap", "test_gap", wide)], SEEDED_TESTS)
    assert pytester.runpytest("verify").parseoutcomes() == {"inconclusive": 1}
    [e] = ledger(root)["expectation"]
    assert (e["outcome"], e["seeds"], [round(x, 2) for x in e["interval"]]) == ("inconclusive", "mean", [-0.98, 3.98])
    narrow = '[{metric: gap, op: ">", value: -1.5, seeds: mean}]'  # wholly above -1.5: it holds, though one seed is low
    (root / "claims" / "SOTA-001.yaml").write_text(CLAIM.format(checks=check("gap", "test_gap", narrow)))
    pytester.runpytest("verify").assert_outcomes(passed=1)
    assert ledger(root)["expectation"][0]["outcome"] == "holds"
    failing = '[{metric: gap, op: ">", value: 9, seeds: mean}]'  # wholly below 9: a check made to fail fails the run
    (root / "claims" / "SOTA-001.yaml").write_text(CLAIM.format(checks=check("gap", "test_gap", failing)))
    result = pytester.runpytest("verify")
    assert (result.ret, result.parseoutcomes()) == (1, {"failed": 1})


def test_a_metric_recorded_in_another_unit_than_declared_is_an_error(pytester: pytest.Pytester) -> None:
    declared = "metrics: [{name: gap, unit: nats, measures: the gap}]\n"
    root = make_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]', declared)], SEEDED_TESTS)
    pytester.runpytest("verify").assert_outcomes(failed=1)
    record = ledger(root)
    assert record["verdict"] == "error"
    assert "metric 'gap' is recorded in 'units', but check 'gap' declares it in 'nats'" in record["message"]


def test_evidence_that_reads_one_expectation_of_a_known_failing_check_supports_after_a_real_run(pytester) -> None:
    from assay.overview import claim_states

    expect = '[{metric: gap, op: ">", value: 1}, {metric: control, op: ">", value: 1}]'  # control = 0: fails
    extra = "known_failing: the control does not hold at our scale\n"
    root = make_kb(pytester, [check("gap", "test_gap", expect, extra)], GAP_TESTS)
    _with_assertions(root, "[{check: gap, stance: supports, metrics: [gap]}]")
    pytester.runpytest("verify").assert_outcomes(xfailed=1)
    state = claim_states(load(root))["SOTA-001"]
    assert (state.checks[0].status, state.counts) == ("known-failing", "cpu: 1 supported")
    _with_assertions(root, "[{check: gap, stance: supports}]")  # reading all of them: the failed one counts
    (root / "claims" / "SOTA-001.yaml").write_text(
        (root / "claims" / "SOTA-001.yaml").read_text().split("assertions:")[0]
        + "assertions:"
        + (root / "claims" / "SOTA-001.yaml").read_text().split("assertions:")[2]
    )
    assert claim_states(load(root))["SOTA-001"].counts == "cpu: 1 contradicted"


def test_an_inconclusive_check_does_not_fail_a_run_under_xdist_either(pytester: pytest.Pytester) -> None:
    root = make_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]')], SEEDED_TESTS)
    result = pytester.runpytest_subprocess("verify", "-n", "1")
    assert (result.ret, result.parseoutcomes()) == (0, {"inconclusive": 1})
    assert ledger(root)["verdict"] == "inconclusive"


def test_stale_judges_a_changed_threshold_again_from_the_measurement_without_running_the_verifier(
    pytester: pytest.Pytester,
) -> None:
    root = make_kb(pytester, [check("gap", "test_gap", '[{metric: gap, op: ">", value: 1}]')], GAP_TESTS)
    pytester.runpytest("verify").assert_outcomes(passed=1)
    measured = ledger(root)
    claim = root / "claims" / "SOTA-001.yaml"
    claim.write_text(claim.read_text().replace("value: 1}", "value: 3}"))  # the judgement moved, the measurement did not
    result = pytester.runpytest("verify", "--stale")
    result.assert_outcomes()  # nothing ran: the verifier's result is fresh
    rejudged = ledger(root)
    assert (rejudged["verdict"], rejudged["expectation"][0]["outcome"]) == ("failed", "fails")
    assert rejudged["finished"] == measured["finished"] and rejudged["metrics"] == measured["metrics"]
    assert rejudged["rejudged"] is not None
    assert "re-judged SOTA-001/gap.cpu: passed -> failed" in result.stdout.str()
