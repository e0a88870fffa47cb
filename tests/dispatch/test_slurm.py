"""``assay verify --executor slurm`` on a real one-node SLURM (scripts/slurm-local.sh), with real tiny verifiers.

Three runs share the cluster while the tests watch. An array of two tasks: one finishes, the other is killed
with scancel halfway (after its first check finished); its controller is killed after submitting, and
`assay verify --resume` takes over. A task that runs past its one-minute time limit. A run interrupted with
Ctrl-C. SLURM counts time limits in whole minutes and checks them every 30 s, so the tests take 60 to 100 s.
They run on one xdist worker (`--dist loadgroup`), which starts the cluster once.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assay.ledger import store
from assay.ledger.result import Result
from tests.conftest import write_result
from tests.verify_kb import make_verify_kb

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "slurm-local.sh"
DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "srun")
MISSING = [d for d in DAEMONS if shutil.which(d, path=os.environ.get("PATH", "") + ":/usr/sbin") is None]

pytestmark = [
    pytest.mark.skipif(
        bool(MISSING),
        reason=f"SLURM is not installed ({', '.join(MISSING)} not found); `make slurm` installs Debian's slurm-wlm and munge",
    ),
    pytest.mark.xdist_group("slurm"),
]

#: The plan's timeouts put "early" and "killed" in one task and the quick ones in the other.
CHECKS = {"early": 50, "killed": 50, "quick-a": 60, "quick-b": 40}


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    """A running one-node cluster; its environment (SLURM_CONF) for the commands the tests run."""
    folder = tmp_path_factory.mktemp("slurm")
    env = {**os.environ, "PATH": os.environ.get("PATH", "") + ":/usr/sbin"}
    started = subprocess.run(["bash", str(SCRIPT), "start", str(folder)], capture_output=True, text=True, env=env)
    assert started.returncode == 0, started.stderr
    env["SLURM_CONF"] = str(folder / "slurm.conf")
    yield env
    stopped = subprocess.run(["bash", str(SCRIPT), "stop", str(folder)], capture_output=True, text=True, env=env)
    assert stopped.returncode == 0, stopped.stderr
    assert not any((folder / "run" / f"{d}.pid").exists() for d in ("munged", "slurmctld", "slurmd"))


def assay(root: Path, env: dict, *args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "assay.cli", "--root", str(root), "verify", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        **kw,
    )


def wait_for(predicate, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"waited {seconds:.0f} s for {what}")


def state_of(root: Path) -> dict | None:
    try:
        return json.loads((root / "build" / "verify" / "state.json").read_text())
    except (OSError, ValueError):
        return None


class Scenario:
    """The array of two tasks, started when first asked for and watched to its end by ``finish``."""

    def __init__(self, root: Path, marks: Path, env: dict):
        self.root, self.marks, self.env = root, marks, env
        self.first = assay(root, env, "--executor", "slurm", "--device", "cpu", "--tasks", "2", "--time", "10")
        self.state = wait_for(lambda: (s := state_of(root)) and s.get("job_id") and s, 120, "the array's submission")
        self.first.kill()  # the controller dies; the array runs on
        self.first.wait()
        self.resumed = assay(root, env, "--resume")
        self.output: str | None = None

    def task_of(self, check: str) -> dict:
        return next(t for t in self.state["tasks"] if any(c["check"] == check for c in t["checks"]))

    def finish(self) -> str:
        if self.output is None:
            wait_for(lambda: (self.marks / "killed").exists(), 300, "the check 'killed' to start")
            subprocess.run(["scancel", self.task_of("killed")["job_id"]], env=self.env, check=True)
            self.output, _ = self.resumed.communicate(timeout=300)
        return self.output


def new_kb(tmp_path_factory: pytest.TempPathFactory, checks: dict[str, float], env: dict) -> tuple[Path, dict]:
    root = make_verify_kb(tmp_path_factory.mktemp("kb") / "kb", checks)
    marks = root.parent / "marks"
    marks.mkdir()
    return root, {**env, "ASSAY_TEST_MARKS": str(marks)}


@pytest.fixture(scope="session")
def scenario(cluster, tmp_path_factory: pytest.TempPathFactory):
    root, env = new_kb(tmp_path_factory, CHECKS, cluster)
    # an earlier measurement of the check that will be killed: the error must not replace it. Its recorded
    # duration is its timeout's, so the plan's shards are those CHECKS gives.
    path = write_result(root, "SOTA-001", "killed", "cpu", "passed", gap=2.0, control=0.0)
    earlier = store.read_result(root, path).model_copy(update={"duration_s": float(CHECKS["killed"])})
    store.write_result(root, earlier)
    run = Scenario(root, Path(env["ASSAY_TEST_MARKS"]), env)
    yield run
    if run.resumed.poll() is None:  # a test failed before the run ended
        run.resumed.kill()
        run.resumed.communicate()


@pytest.fixture(scope="session")
def overtime(cluster, tmp_path_factory: pytest.TempPathFactory):
    """A run of one check that sleeps past the task's time limit of one minute."""
    root, env = new_kb(tmp_path_factory, {"overtime": 100}, cluster)
    proc = assay(root, env, "--executor", "slurm", "--device", "cpu", "--time", "1")
    yield root, proc
    if proc.poll() is None:
        proc.kill()
        proc.communicate()


def ledger(root: Path, check: str) -> Result:
    return store.read_result(root, store.ledger_path(root, "SOTA-001", check, "cpu"))


def test_ctrl_c_cancels_the_array_and_records_nothing(scenario, overtime, tmp_path_factory, cluster):
    root, env = new_kb(tmp_path_factory, {"overtime": 10}, cluster)  # the other runs are started first
    proc = assay(root, env, "--executor", "slurm", "--device", "cpu", "--time", "5")
    job = wait_for(lambda: (s := state_of(root)) and s.get("job_id"), 120, "the submission")
    time.sleep(1)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, out
    assert "interrupted: cancelling the run's tasks" in out
    squeue = subprocess.run(
        ["squeue", "--states=all", "--noheader", "--format=%i|%T", "--jobs", job], env=env, capture_output=True, text=True
    ).stdout
    assert squeue.strip().endswith("|CANCELLED"), squeue
    assert not (root / "results" / "SOTA-001" / "overtime.cpu.json").exists()
    assert state_of(root)["interrupted"] is True


def test_a_finished_task_merges_with_the_verdicts_of_a_local_run(scenario):
    out = scenario.finish()
    for check in ("early", "quick-a", "quick-b"):
        result = ledger(scenario.root, check)
        assert (result.verdict, result.last_error, result.metrics["gap"].value) == ("passed", None, 2.0), out


def test_a_killed_task_keeps_what_it_finished_and_its_other_checks_are_errors_naming_its_log(scenario):
    out = scenario.finish()
    task = scenario.task_of("killed")
    assert (
        f"task {task['index']} died: SLURM task {task['job_id']} was cancelled (CANCELLED) before the check finished; "
        f"1 unfinished check(s) recorded as errors (crash), 1 finished check(s) kept; log: {task['log']}" in out
    )
    killed = ledger(scenario.root, "killed")
    assert killed.verdict == "passed" and killed.finished == "2026-01-01T00:00:00Z"  # the measurement stays
    assert killed.last_error.kind == "crash"
    assert killed.last_error.message == (
        f"SLURM task {task['job_id']} was cancelled (CANCELLED) before the check finished; log: {task['log']}"
    )
    assert (scenario.root / task["log"]).is_file()
    assert ledger(scenario.root, "early").verdict == "passed"  # finished in the killed task before it died


def test_a_task_over_its_time_limit_is_a_timeout_of_its_checks(overtime):
    root, proc = overtime
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 1, out
    task = state_of(root)["tasks"][0]
    result = store.read_result(root, store.ledger_path(root, "SOTA-001", "overtime", "cpu"))
    assert (result.verdict, result.last_error.kind) == ("error", "timeout"), out
    assert result.last_error.message == (
        f"SLURM task {task['job_id']} reached its time limit (TIMEOUT) before the check finished; log: {task['log']}"
    )
    assert "DUE TO TIME LIMIT" in (root / task["log"]).read_text()


def test_the_resumed_controller_merges_everything_and_the_ledger_reads_clean(scenario):
    out = scenario.finish()
    assert scenario.resumed.returncode == 1, out  # a task died
    assert out.startswith(f"resuming run {scenario.state['run']} (slurm, SLURM job {scenario.state['job_id']})\n")
    assert "merged into results/: 3 added, 1 replaced, 0 kept, 0 conflict(s)" in out
    ledger_now = store.read_ledger(scenario.root)
    assert ledger_now.diagnostics == []
    assert sorted(k[1] for k in ledger_now.results) == sorted(CHECKS)
    assert state_of(scenario.root)["merged"] is True
