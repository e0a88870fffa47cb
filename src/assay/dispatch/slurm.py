"""The SLURM executor: one job array through submitit, one array element per shard.

Each element runs ``assay.dispatch.task.run_task`` (pickled by submitit) on a node that sees the same
repository and Python environment (a shared file system, as submitit assumes). Options default from the
``[tool.assay.slurm]`` table of ``pyproject.toml``; the command line overrides them.

submitit reads job states from ``sacct``, which needs SLURM's accounting database. Many small clusters
(and the one ``scripts/slurm-local.sh`` starts) have none, so the states come from ``squeue --states=all``,
which keeps a finished job for ``MinJobAge`` seconds, and from ``sacct`` where squeue no longer knows it.
A task that ended with submitit's result file is done (or its function raised); one that ended without it
died, and the state says how: TIMEOUT, OUT_OF_MEMORY, NODE_FAIL, CANCELLED...
"""

from __future__ import annotations

import math
import pickle
import re
import shutil
import subprocess
from pathlib import Path

from assay.dispatch.runstate import RunState
from assay.dispatch.task import COMPLETED, Phase, TaskSpec, run_task
from assay.settings import SlurmSettings

#: SLURM states of a job that has not ended.
ACTIVE = {
    "PENDING",
    "CONFIGURING",
    "RUNNING",
    "COMPLETING",
    "REQUEUED",
    "REQUEUE_HOLD",
    "REQUEUE_FED",
    "RESIZING",
    "SUSPENDED",
    "STOPPED",
    "SIGNALING",
    "STAGE_OUT",
    "RESV_DEL_HOLD",
    "PREEMPTED",
}
#: How a job that ended without a result died, in words, and the kind of error its checks get.
DEATHS = {
    "TIMEOUT": ("timeout", "reached its time limit"),
    "DEADLINE": ("timeout", "reached its deadline"),
    "OUT_OF_MEMORY": ("crash", "ran out of memory"),
    "NODE_FAIL": ("crash", "lost its node"),
    "BOOT_FAIL": ("crash", "could not boot its node"),
    "CANCELLED": ("crash", "was cancelled"),
    "FAILED": ("crash", "failed"),
    "COMPLETED": ("crash", "ended without submitit's result file"),
    "GONE": ("crash", "is no longer known to the cluster and left no result"),
}
RUNNING = {"RUNNING", "COMPLETING", "SIGNALING", "STAGE_OUT"}
#: Polls a task may go unseen by squeue and sacct, after it was seen, before it counts as gone.
UNSEEN_POLLS = 3
#: Polls a task may go unseen before it was ever seen (squeue lists a job as soon as sbatch returns).
NEVER_SEEN_POLLS = 30


def available() -> str | None:
    """Why SLURM cannot be used from here (None when sbatch, squeue and scancel are on the PATH)."""
    missing = [b for b in ("sbatch", "squeue", "scancel", "srun") if shutil.which(b) is None]
    return f"{', '.join(missing)} not found: this machine is not a SLURM login node" if missing else None


def default_minutes(longest_s: float) -> int:
    """A task's time limit when none is given: twice its recorded time plus five minutes, in whole minutes."""
    return max(1, math.ceil((2 * longest_s + 300) / 60))


class SlurmExecutor:
    name = "slurm"

    def __init__(self, root: Path, options: SlurmSettings, minutes: int):
        self.root = Path(root)
        self.options = options
        self.minutes = minutes
        self.poll_s = options.poll_s
        self._seen: dict[int, str] = {}
        self._unseen: dict[int, int] = {}

    @property
    def workers(self) -> int:
        return self.options.cpus_per_task

    def submit(self, state: RunState) -> None:
        import submitit

        folder = self.root / state.folder / "slurm"
        executor = submitit.SlurmExecutor(folder=folder, max_num_timeout=0)
        # submitit asks SLURM for SIGUSR2 to every process 90 s before the limit, to requeue checkpointable jobs; a
        # check is not one, and a process still starting dies of it. Only the batch shell gets it here, and ignores it.
        params = {
            "job_name": "assay-verify",
            "time": self.minutes,
            "cpus_per_task": self.options.cpus_per_task,
            "array_parallelism": self.options.array_parallelism,
            "stderr_to_stdout": True,
            "additional_parameters": {"signal": "B:USR2@90"},
            "setup": ["trap '' USR2", *self.options.setup],
        }
        params |= {key: getattr(self.options, key) for key in ("partition", "mem", "gpus_per_task") if getattr(self.options, key)}
        executor.update_parameters(**params)
        specs = [
            TaskSpec(root=str(self.root), folder=str(self.root / t.folder), device=state.device, workers=self.workers)
            for t in state.tasks
        ]
        jobs = executor.map_array(run_task, specs)
        state.job_id = jobs[0].job_id.split("_")[0]
        state.submitit_folder = folder.relative_to(self.root).as_posix()
        for task, job in zip(state.tasks, jobs):
            task.job_id = job.job_id
            task.log = Path(job.paths.stdout).relative_to(self.root).as_posix()

    def poll(self, state: RunState) -> dict[int, Phase]:
        states = job_states(state.job_id or "")
        return {task.index: self._phase(state, task.index, task.job_id or "", states) for task in state.tasks}

    def _phase(self, state: RunState, index: int, job_id: str, states: dict[str, str]) -> Phase:
        slurm = self._state(index, states.get(job_id))
        outcome = self._outcome(state, job_id)
        if outcome is not None and outcome[0] != "success":
            text = str(outcome[1]).strip()
            return Phase("died", "error", f"SLURM task {job_id} raised {text.splitlines()[-1] if text else 'an exception'}")
        code = int(outcome[1]["exit_code"]) if outcome is not None and isinstance(outcome[1], dict) else None
        if code in COMPLETED:
            return Phase("done")
        if slurm in ACTIVE:  # running; or pytest was killed and SLURM has not said why yet (submitit outlives SIGTERM)
            return Phase("running" if slurm in RUNNING else "queued")
        if slurm is None and code is None:
            return Phase("queued")  # not yet seen by squeue
        if slurm is not None and (slurm != "COMPLETED" or code is None):
            kind, words = DEATHS.get(slurm, ("crash", f"ended in state {slurm}"))
            return Phase("died", kind, f"SLURM task {job_id} {words} ({slurm}) before the check finished")
        why = f"was killed by signal {-code}" if code < 0 else f"ended with exit code {code}"
        return Phase("died", "error" if code > 0 else "crash", f"pytest {why} in SLURM task {job_id} (see its log)")

    def _state(self, index: int, seen: str | None) -> str | None:
        """The task's SLURM state; GONE once it has been unseen for a few polls after it was seen, None before."""
        if seen:
            self._seen[index], self._unseen[index] = seen, 0
            return seen
        self._unseen[index] = self._unseen.get(index, 0) + 1
        if index in self._seen and self._unseen[index] >= UNSEEN_POLLS:
            return self._seen[index] if self._seen[index] not in ACTIVE else "GONE"
        if index not in self._seen and self._unseen[index] >= NEVER_SEEN_POLLS:
            return "GONE"  # e.g. resumed long after squeue forgot it, on a cluster without sacct
        return self._seen.get(index)

    def _outcome(self, state: RunState, job_id: str) -> tuple[str, object] | None:
        """submitit's result file of an array element: ("success", value) or ("error", traceback)."""
        if not state.submitit_folder or not job_id:
            return None
        path = self.root / state.submitit_folder / f"{job_id}_0_result.pkl"
        if not path.is_file():
            return None
        try:
            with open(path, "rb") as fh:
                return pickle.load(fh)
        except (OSError, pickle.UnpicklingError, EOFError):
            return None  # being written

    def cancel(self, state: RunState) -> None:
        if state.job_id:
            subprocess.run(["scancel", state.job_id], capture_output=True, timeout=60)


def job_states(job_id: str) -> dict[str, str]:
    """``{"1234_5": "RUNNING", ...}`` for the elements of an array (or one job): squeue, then sacct for the rest."""
    if not job_id:
        return {}
    states = _parse(_ask(["squeue", "--array", "--states=all", "--noheader", "--format=%i|%T", "--jobs", job_id]))
    if not states or any(s not in ACTIVE for s in states.values()):
        for key, value in _parse(
            _ask(["sacct", "--noheader", "--parsable2", "--allocations", "--format=JobID,State", "--jobs", job_id])
        ).items():
            states.setdefault(key, value)
    return states


def _ask(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout if done.returncode == 0 else ""


def _parse(text: str) -> dict[str, str]:
    """Lines ``ID|STATE`` (``CANCELLED by 0`` -> ``CANCELLED``; ``12_[3-5%2]`` expanded) as a dict."""
    out = {}
    for line in text.splitlines():
        if "|" not in line:
            continue
        jid, state = line.split("|", 1)
        state = state.split()[0] if state.strip() else "UNKNOWN"
        m = re.fullmatch(r"([0-9]+)_\[([0-9,\-]+)(%[0-9]+)?\]", jid.strip())
        if m:
            for part in m[2].split(","):
                lo, _, hi = part.partition("-")
                for i in range(int(lo), int(hi or lo) + 1):
                    out[f"{m[1]}_{i}"] = state
        elif re.fullmatch(r"[0-9]+(_[0-9]+)?", jid.strip()):
            out[jid.strip()] = state
    return out
