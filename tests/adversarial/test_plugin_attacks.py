"""Attacks through the pytest plugin: verifiers that crash, hang, lie in their evidence or interrupt the
run, two verifiers for one check, a results/ that cannot be written, and bad options. Nothing a verifier
does may stop the other checks, and an error never replaces a completed measurement."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from assay.evidence import limits

from ..test_pytest_plugin import GAP_TESTS, check, ledger, make_kb

pytest_plugins = ["pytester"]

GAP = '[{metric: gap, op: ">", value: 1}]'


def two_checks(pytester: pytest.Pytester, bad_body: str, extra: str = "") -> Path:
    """SOTA-001 with a good check `gap` and a check `bad` whose verifier body is ``bad_body``."""
    tests = (
        textwrap.dedent(GAP_TESTS)
        + '\n@pytest.mark.claim("SOTA-001", "bad")\ndef test_bad(evidence):\n'
        + "".join(f"    {line}\n" for line in bad_body.splitlines())
    )
    return make_kb(pytester, [check("gap", "test_gap", GAP), check("bad", "test_bad", GAP, extra)], tests)


def test_a_verifier_that_kills_its_worker_is_recorded_as_a_crash_beside_its_last_measurement(pytester):
    root = two_checks(pytester, "evidence.metric('gap', 2.0)")
    pytester.runpytest_subprocess("verify", "-n", "1").assert_outcomes(passed=2)
    test = root / "verify" / "test_kb.py"
    test.write_text(test.read_text().replace("evidence.metric('gap', 2.0)", "import os; os._exit(1)"))
    result = pytester.runpytest_subprocess("verify", "-n", "1")
    result.assert_outcomes(passed=1, failed=1)
    data = ledger(root, "bad")
    assert data["verdict"] == "passed"  # the last completed measurement stays
    assert data["last_error"]["kind"] == "crash"
    assert data["last_error"]["message"] == "the process running the verifier died (os._exit, a segfault, or killed for memory)"
    assert ledger(root, "gap")["verdict"] == "passed"


@pytest.mark.parametrize(
    ("body", "how"),
    [
        ("import os; os._exit(3)", "ended with exit status 3 before its test finished"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", "was killed by SIGTERM"),
    ],
)
def test_a_verifier_that_kills_its_process_without_xdist_is_a_crash_and_the_later_checks_still_run(pytester, body, how):
    # the README's adding-a-claim steps run plain `pytest verify`: the run must survive it as a worker's death is
    root = two_checks(pytester, "evidence.metric('gap', 2.0)")
    pytester.runpytest_subprocess("verify").assert_outcomes(passed=2)
    test = root / "verify" / "test_kb.py"
    # the crashing check runs first, so a run that died with it would leave the good check unrun
    bad = f'@pytest.mark.claim("SOTA-001", "bad")\ndef test_bad(evidence):\n    {body}\n\n'
    test.write_text("import pytest\n\n" + bad + textwrap.dedent(GAP_TESTS).replace("import pytest\n", ""))
    result = pytester.runpytest_subprocess("verify")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([f"*the process running the verifier {how}*"])
    data = ledger(root, "bad")
    assert data["verdict"] == "passed"  # the last completed measurement stays, with the crash beside it
    assert data["last_error"]["kind"] == "crash"
    assert data["last_error"]["message"] == f"the process running the verifier {how}"  # the parent saw how
    assert ledger(root, "gap")["verdict"] == "passed"


def test_native_code_past_its_limit_is_ended_without_xdist_too(pytester):
    body = "import re\nre.match(r'(a+)+$', 'a' * 40 + 'b')  # catastrophic backtracking: C code, never checks signals"
    root = two_checks(pytester, body, "timeout: 0.5\n")
    pytester.runpytest_subprocess("verify", "-o", "assay_wall_floor_s=1").assert_outcomes(passed=1, failed=1)
    error = ledger(root, "bad")["last_error"]
    assert error["kind"] == "timeout"
    assert error["message"].endswith("and did not stop within 10 s (native code)")
    assert ledger(root, "gap")["verdict"] == "passed"


def test_in_process_runs_the_verifiers_in_pytests_own_process(pytester):
    two_checks(pytester, "import os\nevidence.metric('gap', 2.0 if os.getpid() == int(os.environ['RUNNER']) else 0.0)")
    pytester.makeconftest("import os\nos.environ['RUNNER'] = str(os.getpid())\n")
    pytester.runpytest_subprocess("verify", "--in-process").assert_outcomes(passed=2)
    pytester.runpytest_subprocess("verify").assert_outcomes(passed=1, failed=1)  # forked: another pid


def test_a_metric_set_to_nan_by_hand_is_an_error_of_that_check_only(pytester):
    root = two_checks(pytester, "evidence.metrics['gap'] = float('nan')")
    result = pytester.runpytest("verify")
    result.assert_outcomes(passed=1, failed=1)
    assert ledger(root, "bad")["last_error"]["message"].startswith(
        "VerifierError: metric 'gap' is nan, not a finite number; record metrics with evidence.metric()"
    )
    assert ledger(root, "gap")["verdict"] == "passed"


def test_a_figure_name_that_is_a_path_is_an_error_of_that_check_only(pytester):
    root = two_checks(pytester, "evidence.figure('sub/dir', None)")
    pytester.runpytest("verify").assert_outcomes(passed=1, failed=1)
    assert ledger(root, "bad")["last_error"]["message"].startswith("VerifierError: figure name 'sub/dir' must be snake_case")
    assert not (root / "results" / "SOTA-001" / "sub").exists()


def test_a_keyboard_interrupt_raised_by_a_verifier_does_not_end_the_run(pytester):
    root = two_checks(pytester, "raise KeyboardInterrupt")
    result = pytester.runpytest("verify")
    result.assert_outcomes(passed=1, failed=1)
    assert ledger(root, "bad")["last_error"]["message"].startswith("VerifierError: the verifier raised KeyboardInterrupt itself")


#: A CPU limit's message: on a loaded machine (this one is shared) the check was rerun alone, and says so.
CPU_TIMEOUT = (
    r"timed out: the verifier used [0-9.]+ s of CPU time"
    r"( when rerun alone \(the first run stopped at it, (load [0-9.]+ on [0-9]+ cores|it had [0-9]+% of a core)\))?"
    r", over its limit of 0\.5 s"
)


def test_a_cpu_bound_verifier_past_its_cpu_limit_times_out_and_the_run_goes_on(pytester, monkeypatch):
    monkeypatch.setattr(limits, "contended", lambda used, elapsed: None)  # a quiet machine: no rerun
    root = two_checks(pytester, "while True:\n    pass", "timeout: 0.5\n")
    pytester.runpytest("verify").assert_outcomes(passed=1, failed=1)
    error = ledger(root, "bad")["last_error"]
    assert error["kind"] == "timeout"
    assert re.fullmatch(r"timed out: the verifier used [0-9.]+ s of CPU time, over its limit of 0\.5 s", error["message"])


@pytest.mark.parametrize(
    "escape",
    [
        "try:\n    spin(1.5)\nexcept Exception:\n    pass\nspin(1.5)",  # swallows the timeout, goes on
        "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nspin(1.5)",  # never hears it
    ],
    ids=["except-exception", "sigalrm-ignored"],
)
def test_a_verifier_cannot_catch_or_ignore_its_timeout(pytester, escape):
    spin = "import time\ndef spin(s):\n    t = time.process_time()\n    while time.process_time() - t < s:\n        pass\n"
    root = two_checks(pytester, spin + escape + "\nevidence.metric('gap', 2.0)", "timeout: 0.5\n")
    pytester.runpytest_subprocess("verify").assert_outcomes(passed=1, failed=1)
    error = ledger(root, "bad")["last_error"]
    assert error["kind"] == "timeout"
    assert re.fullmatch(CPU_TIMEOUT, error["message"]), error["message"]


def test_a_parametrized_verifier_is_an_error_not_several_results_for_one_check(pytester):
    tests = textwrap.dedent(GAP_TESTS).replace(
        "def test_gap(evidence):", "@pytest.mark.parametrize('k', [1, 2])\ndef test_gap(evidence, k):"
    )
    root = make_kb(pytester, [check("gap", "test_gap", GAP)], tests)
    result = pytester.runpytest_subprocess("verify")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*is one of several parametrized tests marked for SOTA-001/gap; a check has one test*"])
    assert not (root / "results" / "SOTA-001" / "gap.cpu.json").exists()


def test_native_code_past_its_limit_is_ended_under_xdist_and_recorded_as_a_timeout(pytester):
    body = "import re\nre.match(r'(a+)+$', 'a' * 40 + 'b')  # catastrophic backtracking: C code, never checks signals"
    root = two_checks(pytester, body, "timeout: 0.5\n")
    started = time.monotonic()
    pytester.runpytest_subprocess("verify", "-n", "1", "-o", "assay_wall_floor_s=1")
    assert time.monotonic() - started < 60
    error = ledger(root, "bad")["last_error"]
    assert error["kind"] == "timeout"
    assert error["message"] == (
        "timed out: the verifier ran past its limit (0.5 s of CPU time, 5 s of wall time) "
        "and did not stop within 10 s (native code)"
    )
    assert ledger(root, "gap")["verdict"] == "passed"


def test_checks_keep_to_their_cpu_limit_while_other_processes_load_the_machine(pytester):
    body = "import time\nend = time.process_time() + 1.0\nwhile time.process_time() < end:\n    pass\nevidence.metric('gap', 2.0)"
    root = two_checks(pytester, body, "timeout: 3\n")
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(3)]
    try:
        pytester.runpytest_subprocess("verify", "-n", "1").assert_outcomes(passed=2)
    finally:
        for hog in hogs:
            hog.kill()
    bad = ledger(root, "bad")
    assert bad["verdict"] == "passed"
    assert 1.0 <= bad["cpu_s"] < 3  # what the limit reads: the verifier's own CPU time, whatever the load


def test_a_second_test_marked_for_the_same_check_fails_and_does_not_write(pytester):
    tests = textwrap.dedent(GAP_TESTS) + (
        '\n@pytest.mark.claim("SOTA-001", "gap")\ndef test_impostor(evidence):\n    evidence.metric("gap", 0.0)\n'
    )
    root = make_kb(pytester, [check("gap", "test_gap", GAP)], tests)
    result = pytester.runpytest("verify")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*verify/test_kb.py::test_impostor is marked for SOTA-001/gap, whose verifier is "
            "verify/test_kb.py::test_gap; a check has one verifier (see `assay check`)"
        ]
    )
    assert ledger(root)["verdict"] == "passed"


def test_a_results_folder_that_cannot_be_written_is_reported_and_the_run_fails(pytester):
    root = make_kb(pytester, [check("gap", "test_gap", GAP)], GAP_TESTS)
    (root / "results").write_text("a file where the ledger folder should be")
    result = pytester.runpytest("verify")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["assay: error: could not write results/SOTA-001/gap.cpu.json: *"])
    assert "INTERNALERROR" not in result.stdout.str()


def test_a_results_link_leading_outside_is_refused_before_anything_is_written(pytester, tmp_path):
    root = make_kb(pytester, [check("gap", "test_gap", GAP)], GAP_TESTS)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / "results").symlink_to(outside, target_is_directory=True)
    result = pytester.runpytest_subprocess("verify")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # refused before any check runs, not after each has run
    result.stderr.fnmatch_lines(
        [
            "ERROR: results/ is a link to a folder outside the knowledge base; pytest verify runs and writes only inside "
            "it (make results/ a folder of the knowledge base)"
        ]
    )
    assert list(outside.iterdir()) == []


def test_a_verifier_module_linked_outside_is_not_run_and_writes_no_result(pytester, tmp_path):
    root = make_kb(pytester, [check("gap", "test_gap", GAP)], GAP_TESTS)
    outside = tmp_path / "test_kb.py"
    (root / "verify" / "test_kb.py").rename(outside)
    (root / "verify" / "test_kb.py").symlink_to(outside)
    result = pytester.runpytest_subprocess("verify")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*verify/test_kb.py::test_gap is not run: verify/test_kb.py is a link to a file outside the knowledge base "
            "(see `assay check`)"
        ]
    )
    assert not (root / "results").exists()


def test_a_local_module_a_verifier_imports_through_a_link_outside_stops_its_check(pytester, tmp_path):
    tests = "from verify import helper  # noqa: F401\n" + textwrap.dedent(GAP_TESTS)
    root = make_kb(pytester, [check("gap", "test_gap", GAP)], tests)
    (tmp_path / "helper.py").write_text("X = 1\n")
    (root / "verify" / "helper.py").symlink_to(tmp_path / "helper.py")
    result = pytester.runpytest_subprocess("verify")
    result.stdout.fnmatch_lines(["*is not run: verify/helper.py is a link to a file outside the knowledge base*"])
    assert not (root / "results").exists()


def test_a_check_whose_package_file_is_missing_is_not_run_and_writes_no_result(pytester, installed_package):
    # the verifier would read the package's data through its own code: an input Assay cannot hash is an unknown input
    root = make_kb(pytester, [check("gap", "test_gap", GAP, "reads: [package:assay_probe_pkg/data/gone.csv]\n")], GAP_TESTS)
    result = pytester.runpytest_subprocess("verify")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*verify/test_kb.py::test_gap is not run: package:assay_probe_pkg/data/gone.csv is not a file of the "
            "installed package assay_probe_pkg (see `assay check`)"
        ]
    )
    assert not (root / "results").exists()


def test_a_check_whose_package_file_is_there_runs_and_records_its_digest(pytester, installed_package):
    root = make_kb(pytester, [check("gap", "test_gap", GAP, "reads: [package:assay_probe_pkg/data/table.csv]\n")], GAP_TESTS)
    pytester.runpytest_subprocess("verify").assert_outcomes(passed=1)
    digest = hashlib.sha256(b"a,b\n1,2\n").hexdigest()[:16]
    assert ledger(root)["inputs"]["parts"]["data:package:assay_probe_pkg/data/table.csv"] == digest


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--shard", "abc"], "ERROR: --shard 'abc': expected I/N with 1 <= I <= N, e.g. --shard 2/4"),
        (["--shard", "3/2"], "ERROR: --shard '3/2': expected I/N with 1 <= I <= N, e.g. --shard 2/4"),
        (["--claim", "NOPE"], "ERROR: --claim NOPE: 'NOPE' is not a claim of this knowledge base"),
        (
            ["--claim", "SOTA-01"],
            "ERROR: --claim SOTA-01: 'SOTA-01' is not a claim of this knowledge base; did you mean 'SOTA-001'?",
        ),
        (
            ["--claim", "sota-1"],
            "ERROR: --claim sota-1: 'sota-1' is not a claim of this knowledge base; did you mean 'SOTA-001'?",
        ),
        (
            ["--claim", "SOTA-001", "--check", "gpa"],
            "ERROR: --check gpa: no claim of --claim SOTA-001 has a check 'gpa'; did you mean 'gap'?",
        ),
    ],
)
def test_a_bad_option_is_a_usage_error_naming_it(pytester, args, message):
    make_kb(pytester, [check("gap", "test_gap", GAP)], GAP_TESTS)
    result = pytester.runpytest("verify", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


def test_device_cuda_without_a_gpu_is_a_usage_error(pytester):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    make_kb(pytester, [check("gap", "test_gap", GAP)], GAP_TESTS)
    result = pytester.runpytest("verify", "--device", "cuda")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --device cuda: torch * sees no CUDA device on this machine; use --device cpu, or auto"])


def test_the_plugin_is_inert_without_claim_tests_no_git_no_thread_count(pytester, tmp_path):
    spy = tmp_path / "bin"
    spy.mkdir()
    (spy / "git").write_text(f"#!/bin/sh\ntouch {tmp_path}/git-was-run\n")
    (spy / "git").chmod(0o755)
    pytester.makepyfile(
        test_plain="import torch\n\ndef test_plain():\n    assert torch.get_num_threads() == THREADS\n".replace(
            "THREADS", str(__import__("os").cpu_count())
        )
    )
    import os

    env_path = f"{spy}:{os.environ['PATH']}"
    pytester._monkeypatch.setenv("PATH", env_path)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1)
    assert not (tmp_path / "git-was-run").exists()
    assert not (pytester.path / "results").exists()


def test_compare_reruns_without_replacing_and_flags_a_verdict_that_moved_with_the_same_inputs(pytester, monkeypatch):
    tests = """\
        import os
        import pytest

        @pytest.mark.claim("SOTA-001", "gap")
        def test_gap(evidence):
            evidence.metric("gap", float(os.environ.get("GAP", "2.0")))
        """
    root = make_kb(pytester, [check("gap", "test_gap", GAP)], tests)
    pytester.runpytest("verify").assert_outcomes(passed=1)
    before = ledger(root)
    monkeypatch.setenv("GAP", "0.5")
    result = pytester.runpytest("verify", "--compare")
    result.stdout.fnmatch_lines(
        [
            "*assay: reruns compared with the ledger (not written)*",
            "SOTA-001/gap.cpu: passed -> failed; largest metric change |Δ| 1.5 (gap); 0 of 1 metrics identical; "
            "same environment; verdict changed with the same inputs: flagged unstable",
        ]
    )
    after = ledger(root)
    assert after["metrics"] == before["metrics"] and after["verdict"] == "passed"  # not replaced
    assert after["unstable"]["verdicts"] == ["passed", "failed"]
    from assay.overview import claim_states
    from assay.records.knowledge_base import load

    assert claim_states(load(root))["SOTA-001"].checks[0].flags == ["unstable"]


def test_a_rerun_that_changes_the_verdict_with_the_same_inputs_is_flagged_unstable(pytester, monkeypatch):
    tests = GAP_TESTS.replace(
        'evidence.metric("gap", 2.0)', 'import os\n        evidence.metric("gap", float(os.environ.get("GAP", "2.0")))'
    )
    root = make_kb(pytester, [check("gap", "test_gap", GAP)], tests)
    pytester.runpytest("verify").assert_outcomes(passed=1)
    monkeypatch.setenv("GAP", "0.5")
    pytester.runpytest("verify").assert_outcomes(failed=1)
    data = ledger(root)
    assert (data["verdict"], data["unstable"]["verdicts"]) == ("failed", ["passed", "failed"])
    json.dumps(data)


def test_a_verdict_that_moved_with_the_same_inputs_fails_the_run_even_when_its_test_passed(pytester, monkeypatch):
    tests = GAP_TESTS.replace(
        'evidence.metric("gap", 2.0)', 'import os\n        evidence.metric("gap", float(os.environ.get("GAP", "2.0")))'
    )
    make_kb(pytester, [check("gap", "test_gap", GAP)], tests)
    monkeypatch.setenv("GAP", "0.5")
    pytester.runpytest("verify").assert_outcomes(failed=1)
    monkeypatch.setenv("GAP", "2.0")
    result = pytester.runpytest("verify")
    result.assert_outcomes(passed=1)
    assert result.ret == 1  # the evidence did not hold still: CI must see it
    result.stdout.fnmatch_lines(["assay: error: SOTA-001/gap.cpu: passed (was failed with the same inputs: flagged unstable)"])


def test_a_bad_claim_option_is_a_usage_error_under_xdist_too_not_an_internal_error(pytester):
    make_kb(pytester, [check("gap", "test_gap", GAP)], GAP_TESTS)
    result = pytester.runpytest_subprocess("verify", "-n", "2", "--claim", "NOPE")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --claim NOPE: 'NOPE' is not a claim of this knowledge base"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_a_figure_written_straight_into_the_record_with_a_path_for_a_name_is_an_error_of_that_check_only(pytester):
    root = two_checks(pytester, "evidence.metric('gap', 2.0)\nevidence.figures['../../escape'] = '<svg/>'")
    result = pytester.runpytest("verify")
    result.assert_outcomes(passed=1, failed=1)
    assert "INTERNALERROR" not in result.stdout.str()
    assert ledger(root, "bad")["last_error"]["message"].startswith("VerifierError: figure name '../../escape' must be snake_case")
    assert ledger(root, "gap")["verdict"] == "passed"


def test_an_oversized_record_is_an_error_beside_the_last_measurement_not_a_lost_one(pytester, monkeypatch):
    root = two_checks(pytester, "evidence.metric('gap', 2.0)\nevidence.note('x' * int(__import__('os').environ['NOTE']))")
    monkeypatch.setenv("NOTE", "10")
    pytester.runpytest("verify").assert_outcomes(passed=2)
    monkeypatch.setenv("NOTE", str(9 * 2**20))  # 9 MiB: the ledger file would be past what its reader reads
    pytester.runpytest("verify").assert_outcomes(passed=1, failed=1)
    data = ledger(root, "bad")
    assert data["verdict"] == "passed"  # the last measurement is kept, and stays readable
    assert data["last_error"]["message"].startswith(
        "VerifierError: the notes hold 9437184 characters, more than the 65536 a result keeps"
    )


def test_a_result_past_the_ledgers_size_within_each_bound_is_an_error_beside_the_last_measurement_and_fails_the_run(
    pytester, monkeypatch
):
    wide = (  # 999 metrics, each name and unit within its bound, 99,900 per-seed values: 8.9 MiB as written
        "evidence.metric('gap', 2.0)\n"
        "for i in range(int(__import__('os').environ['WIDE'])):\n"
        "    evidence.metric('m' * 4000 + str(i), 0.0, unit='u' * 4000, seeds=[0.5] * 100)"
    )
    root = two_checks(pytester, wide)
    monkeypatch.setenv("WIDE", "0")
    pytester.runpytest("verify").assert_outcomes(passed=2)
    monkeypatch.setenv("WIDE", "998")
    result = pytester.runpytest("verify")
    result.assert_outcomes(passed=2)  # the verifier did nothing wrong by its own bounds; the ledger refuses the file
    assert result.ret == 1
    data = ledger(root, "bad")
    assert (data["verdict"], sorted(data["metrics"])) == ("passed", ["gap"])  # the last measurement, readable
    assert data["last_error"]["message"] == (
        "the result cannot be kept: it is 8.9 MiB as written, more than the 8 MiB a ledger file holds; record less "
        "(fewer metrics, seeds or notes, shorter text)"
    )


def test_a_check_stopped_at_its_cpu_limit_on_a_loaded_machine_is_rerun_once_alone_before_it_is_an_error(pytester, monkeypatch):
    monkeypatch.setattr(limits, "contended", lambda used, elapsed: "load 9.0 on 2 cores")
    first_try = (  # stuck the first time only, as a check starved by a loaded machine would be
        "import pathlib\n"
        "mark = pathlib.Path('tried')\n"
        "if not mark.exists():\n"
        "    mark.write_text('')\n"
        "    while True:\n"
        "        pass\n"
        "evidence.note('second try')\n"
        "evidence.metric('gap', 2.0)"
    )
    root = two_checks(pytester, first_try, "timeout: 0.5\n")
    pytester.runpytest("verify").assert_outcomes(passed=2)
    bad = ledger(root, "bad")
    assert (bad["verdict"], bad["last_error"], bad["notes"]) == ("passed", None, ["second try"])  # afresh, once


def test_a_check_stopped_again_when_rerun_alone_is_an_error_that_says_it_was_rerun(pytester, monkeypatch):
    monkeypatch.setattr(limits, "contended", lambda used, elapsed: "load 9.0 on 2 cores")
    root = two_checks(pytester, "while True:\n    pass", "timeout: 0.5\n")
    pytester.runpytest("verify").assert_outcomes(passed=1, failed=1)
    message = ledger(root, "bad")["last_error"]["message"]
    assert re.fullmatch(
        r"timed out: the verifier used [0-9.]+ s of CPU time when rerun alone \(the first run stopped at it, "
        r"load 9\.0 on 2 cores\), over its limit of 0\.5 s",
        message,
    ), message


def test_a_checks_limit_follows_the_cpu_its_last_result_used_so_two_busy_loops_beside_n_2_make_no_error(pytester):
    body = "s = 0\nfor i in range(2_000_000):  # a fixed amount of work\n    s += i * i\nevidence.metric('gap', 2.0)"
    root = two_checks(pytester, body, "timeout: 30\n")
    pytester.runpytest("verify").assert_outcomes(passed=2)
    used = ledger(root, "bad")["cpu_s"]
    claim = root / "claims" / "SOTA-001.yaml"
    claim.write_text(claim.read_text().replace("timeout: 30", f"timeout: {used / 2:.3f}"))  # under what it uses
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        pytester.runpytest_subprocess("verify", "-n", "2").assert_outcomes(passed=2)
    finally:
        for hog in hogs:
            hog.kill()
    bad = ledger(root, "bad")
    assert (bad["verdict"], bad["last_error"]) == ("passed", None)  # within 3 x the CPU of its last result


def test_a_check_whose_helper_module_declares_utf7_is_not_run(pytester):
    tests = "from verify import helper  # noqa: F401\n" + textwrap.dedent(GAP_TESTS)
    root = make_kb(pytester, [check("gap", "test_gap", GAP)], tests)
    (root / "verify" / "helper.py").write_text("# -*- coding: utf-7 -*-\nX = 1  # +AAo-X = 2\n")
    result = pytester.runpytest_subprocess("verify")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*verify/test_kb.py::test_gap is not run: verify/helper.py declares the coding 'utf-7' on line 1, in which "
            "Python runs other text than Assay reads; Python modules of a knowledge base are UTF-8 (see `assay check`)"
        ]
    )
    assert not (root / "results").exists()
