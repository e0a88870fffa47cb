"""One task of a verification run: ``pytest verify`` over its checks, writing the ledger into its own folder.

A task's folder holds ``checks.txt`` (the verifiers to run, one per line, read by pytest as ``@checks.txt``)
and ``results/``, which the plugin writes as each check ends (``--ledger-root``), so a task killed halfway
keeps what it finished. ``run_task`` is what a SLURM array element runs (submitit pickles it); the local
executor runs the same command line. The checks of a task that died without finishing them are recorded
by ``lost`` as errors of those checks, which the merge keeps beside any earlier measurement.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from assay import files
from assay.dispatch.runstate import PlannedCheck, TaskRecord
from assay.ledger import store
from assay.ledger.fresh import fresh_result
from assay.ledger.result import ErrorKind, Result, timestamp
from assay.records.knowledge_base import KnowledgeBase

ARGS_FILE = "checks.txt"
#: A settling run's plan for the task's checks (``assay.evidence.settling``), where it is one.
SETTLE_FILE = "settle.json"
#: Where a task run by ``python -m assay.dispatch.task`` leaves its end: pytest's exit code and the wall time.
EXIT_FILE = "exit.json"
#: pytest's exit codes that mean it ran to its end: all passed, some failed, none collected.
COMPLETED = (0, 1, 5)


@dataclass
class Phase:
    """Where a task stands: ``queued``, ``running``, ``done``, or ``died`` (with the error kind and why)."""

    phase: str
    kind: str = "crash"
    reason: str = ""

    @property
    def final(self) -> bool:
        return self.phase in ("done", "died")


@dataclass(frozen=True)
class TaskSpec:
    """What a task needs to run, all of it picklable: absolute paths, the device, its xdist workers."""

    root: str
    folder: str
    device: str
    workers: int
    python: str = sys.executable


def write_args(folder: Path, checks: list[PlannedCheck]) -> None:
    """The task's ``checks.txt``: one verifier node id per line, each once."""
    folder.mkdir(parents=True, exist_ok=True)
    verifiers = list(dict.fromkeys(c.verifier for c in checks))
    files.write_atomic(folder / ARGS_FILE, "\n".join(verifiers) + "\n")


def command(spec: TaskSpec) -> list[str]:
    """The pytest command line of a task (run in the repository's root)."""
    return [
        spec.python,
        "-m",
        "pytest",
        f"@{Path(spec.folder) / ARGS_FILE}",
        "--device",
        spec.device,
        "--ledger-root",
        spec.folder,
        "-n",
        str(max(1, spec.workers)),
        "--dist",
        "loadgroup",  # the checks of one experiment (experiment:) on one worker, as make verify runs them
        "-q",
        "-rN",
        *(["--settle-plan", str(Path(spec.folder) / SETTLE_FILE)] if (Path(spec.folder) / SETTLE_FILE).is_file() else []),
    ]


def run_task(spec: TaskSpec) -> dict[str, float]:
    """Run one task to its end; returns pytest's exit code and the wall time. What a SLURM array element runs."""
    # The SLURM executor asks for the warning before the time limit (SIGUSR2) to reach only the batch shell; should
    # it reach the task anyway, it is ignored here and, inherited, in pytest and its workers: the default action
    # would kill pytest at once. The limit itself ends the task, and the controller records what did not finish.
    signal.signal(signal.SIGUSR2, signal.SIG_IGN)
    start = time.monotonic()
    proc = subprocess.Popen(command(spec), cwd=spec.root, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    while True:
        try:
            code = proc.wait()
            break
        except KeyboardInterrupt:
            continue  # pytest, in the same process group, got the same Ctrl-C: it stops after writing what finished
    return {"exit_code": float(code), "seconds": round(time.monotonic() - start, 3)}


def read_exit(folder: Path) -> dict[str, float] | None:
    """What ``main`` left in a task's folder, or None when the task has not ended (or died)."""
    try:
        return json.loads((Path(folder) / EXIT_FILE).read_text())
    except (OSError, ValueError):
        return None


def main(argv: list[str] | None = None) -> int:
    """``python -m assay.dispatch.task SPEC_JSON``: run one task and leave its end in ``exit.json`` beside it."""
    spec = TaskSpec(**json.loads((argv or sys.argv[1:])[0]))
    end = run_task(spec)
    files.write_atomic(Path(spec.folder) / EXIT_FILE, json.dumps(end) + "\n")
    return int(end["exit_code"])


def finished(folder: Path, device: str) -> dict[tuple[str, str], Result]:
    """The results a task's folder holds, by (claim, check), for ``device``."""
    ledger = store.read_ledger(folder)
    return {(c, k): r for (c, k, d), r in ledger.results.items() if d == device}


def lost(
    kb: KnowledgeBase, device: str, task: TaskRecord, kind: ErrorKind, message: str, done: set[tuple[str, str]]
) -> list[Result]:
    """An error result for each check of ``task`` that did not finish (not in ``done``)."""
    from assay.ledger.environment import capture
    from assay.ledger.inputs import InputParts

    inputs = InputParts(kb.root)
    now = timestamp()
    environment = capture(device)
    out = []
    for planned in task.checks:
        check = kb.check(planned.claim, planned.check)
        if check is None or (planned.claim, planned.check) in done:
            continue
        out.append(
            fresh_result(
                planned.claim,
                check.id,
                device,
                verdict="error",
                message=message,
                tier=check.tier,
                parts=inputs.parts(kb.claims[planned.claim], check, device),
                environment=environment,
                finished=now,
                kind=kind,
            )
        )
    return out


if __name__ == "__main__":
    sys.exit(main())
