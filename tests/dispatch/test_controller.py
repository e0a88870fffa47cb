"""``assay verify`` with the local executor, its plan, its state file, and the errors it reports (no SLURM needed)."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assay import cli
from assay.dispatch import runstate
from assay.dispatch.progress import Progress
from assay.dispatch.task import Phase
from assay.ledger import store
from assay.ledger.layout import result_file
from tests.conftest import write_result
from tests.verify_kb import make_verify_kb


def verify(root: Path, *args: str) -> int:
    return cli.main(["--root", str(root), "verify", *args])


def test_a_dry_run_prints_the_plan_and_its_shards_and_runs_nothing(tmp_path, capsys):
    root = make_verify_kb(tmp_path / "kb", {"a": 30, "b": 20, "c": 10})
    assert verify(root, "--dry-run", "--device", "cpu", "--executor", "slurm", "--tasks", "2") == 0
    assert capsys.readouterr().out == (
        "plan: 3 check(s) on cpu (3 missing), 60 s recorded, 2 task(s), the longest 30 s\n"
        "  task 0: 30 s: SOTA-001/a\n"
        "  task 1: 30 s: SOTA-001/b, SOTA-001/c\n"
    )
    assert not (root / "build").exists()


def test_nothing_to_run_is_said_and_is_no_error(tmp_path, capsys):
    root = make_verify_kb(tmp_path / "kb", {"a": 30})
    assert verify(root, "--device", "cpu", "--budget", "10s") == 0
    assert capsys.readouterr().out == "nothing to run on cpu within the budget\n"


def test_resume_without_a_run_is_a_usage_error(tmp_path, capsys):
    root = make_verify_kb(tmp_path / "kb", {"a": 30})
    assert verify(root, "--resume") == 2
    assert capsys.readouterr().err == "assay: error: no run to resume: build/verify/state.json does not exist\n"


def test_a_run_not_yet_merged_must_be_resumed_before_another_starts(tmp_path, capsys):
    root = make_verify_kb(tmp_path / "kb", {"a": 30})
    runstate.save(
        root,
        runstate.RunState(
            run="20260101-000000", executor="slurm", device="cpu", tasks=[], started="2026-01-01T00:00:00Z", job_id="12"
        ),
    )
    assert verify(root, "--device", "cpu") == 2
    assert capsys.readouterr().err == (
        "assay: error: run 20260101-000000 has not been merged yet: finish it with `assay verify --resume` "
        "(or delete build/verify/state.json to abandon it)\n"
    )


@pytest.mark.parametrize(
    "line, message",
    [
        ("cpus_per_task = 0", "cpus_per_task: input should be greater than or equal to 1"),
        ("gpus = 1", "gpus: extra inputs are not permitted"),
    ],
)
def test_a_bad_slurm_table_names_the_file_line_and_field(tmp_path, capsys, line, message):
    root = make_verify_kb(tmp_path / "kb", {"a": 30}, slurm=f"poll_s = 1\n{line}")
    assert verify(root, "--executor", "slurm", "--dry-run") == 2
    assert capsys.readouterr().err == f"assay: error: pyproject.toml:7: [tool.assay.slurm] {message}\n"


def test_the_slurm_executor_needs_slurm_on_this_machine(tmp_path, capsys, monkeypatch):
    root = make_verify_kb(tmp_path / "kb", {"a": 30})
    monkeypatch.setenv("PATH", str(tmp_path))  # no sbatch here
    assert verify(root, "--executor", "slurm", "--device", "cpu") == 2
    assert capsys.readouterr().err == (
        "assay: error: --executor slurm: sbatch, squeue, scancel, srun not found: this machine is not a SLURM login node\n"
    )


def test_cuda_on_slurm_needs_gpus_per_task(tmp_path, capsys):
    root = make_verify_kb(tmp_path / "kb", {"a": 30})
    assert verify(root, "--executor", "slurm", "--device", "cuda", "--dry-run") == 2
    assert capsys.readouterr().err == "assay: error: --device cuda on SLURM needs --gpus-per-task 1 or more\n"


def test_a_local_run_that_dies_keeps_what_finished_and_records_the_rest_as_errors(tmp_path):
    root = make_verify_kb(tmp_path / "kb", {"quick-a": 10, "killed": 50})
    marks = tmp_path / "marks"
    marks.mkdir()
    env = {**os.environ, "ASSAY_TEST_MARKS": str(marks)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay.cli", "--root", str(root), "verify", "--device", "cpu"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 180
    state = None
    while time.monotonic() < deadline:
        state = json.loads((root / runstate.STATE_FILE).read_text()) if (root / runstate.STATE_FILE).exists() else None
        task = root / state["tasks"][0]["folder"] if state else None
        if task and (marks / "killed").exists() and (task / "results" / "SOTA-001" / "quick-a.cpu.json").exists():
            break
        time.sleep(0.25)
    else:
        proc.kill()
        pytest.fail(f"the checks did not start: {proc.communicate()[0]}")
    os.killpg(int(state["tasks"][0]["job_id"].removeprefix("pid:")), signal.SIGKILL)  # the task and its workers
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 1, out
    log = state["tasks"][0]["log"]
    assert (
        f"task 0 died: the local pytest process was killed by signal 9 before the check finished; 1 unfinished "
        f"check(s) recorded as errors (crash), 1 finished check(s) kept; log: {log}"
    ) in out
    quick = store.read_result(root, store.ledger_path(root, "SOTA-001", "quick-a", "cpu"))
    killed = store.read_result(root, store.ledger_path(root, "SOTA-001", "killed", "cpu"))
    assert (quick.verdict, killed.verdict, killed.last_error.kind) == ("passed", "error", "crash")
    assert killed.last_error.message == f"the local pytest process was killed by signal 9 before the check finished; log: {log}"
    assert "merged into results/: 2 added, 0 replaced, 0 kept, 0 conflict(s)" in out
    assert verify(root, "--resume") == 0  # merged: nothing left to resume


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def progress_with(tmp_path: Path, out: io.StringIO) -> tuple[Progress, Path]:
    folder = tmp_path / "task-0"
    make_verify_kb(tmp_path / "kb", {"a": 10, "b": 10})
    return Progress(3, [folder], "cpu", out), folder


def finish(root: Path, folder: Path, check: str, verdict: str) -> None:
    path = write_result(root, "SOTA-001", check, "cpu", verdict, gap=2.0)
    (folder / "results" / "SOTA-001").mkdir(parents=True, exist_ok=True)
    path.rename(folder / "results" / "SOTA-001" / path.name)


def test_progress_prints_a_line_when_the_counts_change_into_a_file(tmp_path):
    out = io.StringIO()
    progress, folder = progress_with(tmp_path, out)
    running = {0: Phase("running"), 1: Phase("queued")}
    progress.show(progress.counts(running))
    progress.show(progress.counts(running))  # unchanged: no line
    finish(tmp_path / "kb", folder, "a", "passed")
    finish(tmp_path / "kb", folder, "b", "error")
    progress.show(progress.counts({0: Phase("done"), 1: Phase("died")}))
    lines = [line.rsplit(";", 1)[0] for line in out.getvalue().splitlines()]
    assert lines == ["0/3 checks; tasks: 1 queued, 1 running", "2/3 checks (1 passed, 1 error); tasks: 1 done, 1 died"]


def test_progress_redraws_one_line_with_a_bar_in_a_terminal(tmp_path):
    out = Terminal()
    progress, folder = progress_with(tmp_path, out)
    finish(tmp_path / "kb", folder, "a", "failed")
    progress.show(progress.counts({0: Phase("running")}))
    progress.show(progress.counts({0: Phase("done")}), final=True)
    first, second = out.getvalue().split("\r\033[K")[1:]
    assert first.startswith("[########----------------] 1/3 checks (1 failed); tasks: 1 running; ")
    assert second.startswith("[########----------------] 1/3 checks (1 failed); tasks: 1 done; ")
    assert second.endswith("\n") and "\n" not in first


def test_progress_counts_a_result_file_linked_out_of_its_task_folder_as_an_error_without_reading_it(tmp_path):
    out = io.StringIO()
    progress, folder = progress_with(tmp_path, out)
    finish(tmp_path / "kb", folder, "a", "passed")
    outside = tmp_path / "outside"
    finish(tmp_path / "kb", outside, "b", "passed")  # a result that passed, in a folder of no task
    name = result_file("SOTA-001", "b", "cpu")
    (folder / name).symlink_to(outside / name)
    progress.show(progress.counts({0: Phase("done")}))
    assert out.getvalue().rsplit(";", 1)[0] == "2/3 checks (1 passed, 1 error); tasks: 1 done"
