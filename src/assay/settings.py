"""The ``[tool.assay.*]`` settings of a knowledge base's pyproject.toml, as models: the cluster's
(``[tool.assay.slurm]``, the defaults of ``assay verify --executor slurm``), read and checked with the line of
any bad field.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class SlurmSettings(BaseModel):
    """``[tool.assay.slurm]`` in pyproject.toml: the defaults of ``assay verify --executor slurm``."""

    model_config = ConfigDict(extra="forbid")

    partition: str | None = Field(None, description="The partition to submit to (the cluster's default when unset).")
    time: str | None = Field(
        None,
        description="Time limit of each task (`30m`, `2h`, `1:00:00`); "
        "unset: twice the longest shard's recorded time plus 5 minutes.",
    )
    cpus_per_task: int = Field(1, ge=1, description="CPUs per task; the task runs that many xdist workers.")
    gpus_per_task: int = Field(0, ge=0, description="GPUs per task; with any, the checks run on `cuda`.")
    mem: str | None = Field(None, description="Memory per task, in SLURM's words (`8G`).")
    array_parallelism: int = Field(64, ge=1, description="How many tasks of the array may run at once.")
    setup: list[str] = Field(default_factory=list, description="Shell lines run before each task (`module load ...`).")
    poll_s: float = Field(5.0, gt=0, description="Seconds between two looks at the array's states.")


class SettingsProblem(Exception):
    """A bad ``[tool.assay.slurm]`` table; the message names the file, line and field."""


def settings(root: Path) -> SlurmSettings:
    """The ``[tool.assay.slurm]`` table of ``root/pyproject.toml`` (defaults when there is none)."""
    path = Path(root) / "pyproject.toml"
    if not path.is_file():
        return SlurmSettings()
    text = path.read_text(encoding="utf-8")
    try:
        table = tomllib.loads(text).get("tool", {}).get("assay", {}).get("slurm", {})
    except tomllib.TOMLDecodeError as e:
        raise SettingsProblem(f"pyproject.toml: {e}") from None
    try:
        return SlurmSettings.model_validate(table)
    except ValidationError as e:
        err = e.errors(include_url=False)[0]
        key = str(err["loc"][0]) if err["loc"] else "slurm"
        raise SettingsProblem(f"pyproject.toml:{_line_of(text, key)}: [tool.assay.slurm] {key}: {err['msg'].lower()}") from None


def _line_of(text: str, key: str) -> int:
    """The line of ``key = ...`` in the ``[tool.assay.slurm]`` table (1 when it cannot be found)."""
    inside = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith("["):
            inside = line.strip() == "[tool.assay.slurm]"
        elif inside and re.match(rf"\s*{re.escape(key)}\s*=", line):
            return n
    return 1
