"""The state file of a verification run: ``build/verify/state.json``, what ``assay verify --resume`` reads.

It names the run's folder, the executor, the device, the SLURM array's job id and, per task, its checks,
its results folder and its log, so a controller that was stopped (a closed terminal, a lost connection)
can be started again and pick up the array where it is. Written atomically after every change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.files import write_atomic

STATE_FILE = Path("build") / "verify" / "state.json"


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlannedCheck(_Part):
    """One check a task runs."""

    claim: str
    check: str
    verifier: str
    inputs_hash: str = Field(description="The check's inputs in the repository when the run was planned.")
    tier: str


class TaskRecord(_Part):
    """One task: a shard of the plan, run by one pytest process (with its xdist workers)."""

    index: int
    checks: list[PlannedCheck]
    seconds: float = Field(description="The recorded time of its checks together.")
    folder: str = Field(description="Its own folder (relative to the root); the ledger is written to folder/results/.")
    job_id: str | None = Field(None, description="The SLURM job id of this array element (`1234_5`).")
    log: str | None = Field(None, description="Its log (relative to the root).")
    ended: str | None = Field(None, description="How it ended, once the controller saw it end: `done`, or why it died.")


class RunState(_Part):
    """A verification run, from its plan to its merge."""

    format: Literal[1] = 1
    run: str = Field(description="The run's id: its folder's name under build/verify/.")
    executor: Literal["local", "slurm"]
    device: str
    started: str
    job_id: str | None = Field(None, description="The SLURM array's job id.")
    submitit_folder: str | None = Field(None, description="submitit's folder of pickles and logs (relative to the root).")
    tasks: list[TaskRecord]
    merged: bool = False
    interrupted: bool = False

    @property
    def folder(self) -> Path:
        return STATE_FILE.parent / self.run


def save(root: Path, state: RunState) -> None:
    write_atomic(Path(root) / STATE_FILE, state.model_dump_json(indent=2) + "\n")


def load(root: Path) -> RunState | None:
    """The last run's state, or None when there is none; raises ``ValueError`` naming the file when it is unreadable."""
    path = Path(root) / STATE_FILE
    if not path.is_file():
        return None
    try:
        return RunState.model_validate_json(path.read_bytes())
    except ValidationError as e:
        raise ValueError(
            f"{STATE_FILE.as_posix()} is not a state file of this Assay ({e.error_count()} problem(s)); delete it to start afresh"
        ) from None
