"""What a verification run has done so far: tasks queued, running, done or dead; checks by status.

The counts come from the tasks' own results folders, so they are what the merge will bring in: each file is read
once, then again only when it changes, by the one rule for reading a file (``files.read_regular``: a result file
linked out of its task's folder counts as an error, unread). In a terminal one line is redrawn with a bar; into a
file or a pipe a line is printed each time the counts change.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from pydantic import ValidationError

from assay import vocabulary
from assay.dispatch.task import Phase
from assay.files import Unreadable, read_regular
from assay.ledger.layout import result_file
from assay.ledger.result import Result

BAR = 24


@dataclass
class Counts:
    """Tasks by phase and checks by status."""

    planned: int
    tasks: Counter = field(default_factory=Counter)
    checks: Counter = field(default_factory=Counter)

    @property
    def done(self) -> int:
        return sum(self.checks.values())

    def line(self) -> str:
        tasks = ", ".join(f"{self.tasks[p]} {p}" for p in ("queued", "running", "done", "died") if self.tasks[p])
        order = [name for name in vocabulary.CHECK if name in self.checks] + sorted(set(self.checks) - set(vocabulary.CHECK))
        checks = ", ".join(f"{self.checks[name]} {name}" for name in order if self.checks[name])
        return f"{self.done}/{self.planned} checks" + (f" ({checks})" if checks else "") + f"; tasks: {tasks or 'none'}"


class Progress:
    """Counts read from the task folders, and the line that shows them."""

    def __init__(self, planned: int, folders: list[Path], device: str, out: TextIO | None = None):
        self.planned = planned
        self.folders = folders
        self.device = device
        self.out = out or sys.stdout
        self.tty = self.out.isatty()
        self.start = time.monotonic()
        self._seen: dict[Path, tuple[int, str]] = {}
        self._last = ""

    def counts(self, phases: dict[int, Phase]) -> Counts:
        counts = Counts(self.planned, Counter(p.phase for p in phases.values()))
        for folder in self.folders:
            for path in sorted(Path(folder).glob(result_file("*", "*", self.device))):
                status = self._status(Path(folder), path)
                if status:
                    counts.checks[status] += 1
        return counts

    def _status(self, folder: Path, path: Path) -> str:
        try:
            mtime = path.stat().st_mtime_ns
        except OSError:
            return ""
        seen = self._seen.get(path)
        if seen is None or seen[0] != mtime:
            try:
                seen = (mtime, Result.model_validate_json(read_regular(folder, path)).status)
            except (OSError, Unreadable, ValidationError):
                seen = (mtime, "error")  # an unreadable file counts as the error it is
            self._seen[path] = seen
        return seen[1]

    def show(self, counts: Counts, final: bool = False) -> None:
        elapsed = _clock(time.monotonic() - self.start)
        text = f"{counts.line()}; {elapsed}"
        if self.tty:
            filled = round(BAR * counts.done / counts.planned) if counts.planned else BAR
            self.out.write(f"\r\033[K[{'#' * filled}{'-' * (BAR - filled)}] {text}" + ("\n" if final else ""))
            self.out.flush()
        elif counts.line() != self._last:
            self.out.write(text + "\n")
            self.out.flush()
        self._last = counts.line()


def _clock(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m}m{s:02d}s" if m else f"{s}s"
