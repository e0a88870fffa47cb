"""The local executor: the whole plan as one ``pytest -n W`` on this machine, as ``make verify`` runs it.

pytest-xdist balances the checks over the workers as they finish, so the plan is not split into shards
here. The process is started in its own session, so the controller's Ctrl-C reaches it only through
``cancel`` (SIGINT: pytest stops after the running checks and writes what finished), and a controller that
is closed leaves it running: ``--resume`` waits for it by its pid.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import asdict
from pathlib import Path

from assay.dispatch.runstate import RunState, TaskRecord
from assay.dispatch.task import COMPLETED, Phase, TaskSpec, read_exit


class LocalExecutor:
    name = "local"
    poll_s = 1.0

    def __init__(self, root: Path, workers: int = 2):
        self.root = Path(root)
        self.workers = workers
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    def submit(self, state: RunState) -> None:
        for task in state.tasks:
            folder = self.root / task.folder
            spec = TaskSpec(root=str(self.root), folder=str(folder), device=state.device, workers=self.workers)
            log = folder / "pytest.log"
            runner = [spec.python, "-m", "assay.dispatch.task", json.dumps(asdict(spec))]
            with open(log, "wb") as out:
                proc = subprocess.Popen(
                    runner,
                    cwd=self.root,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    env={**os.environ, "PYTHONUNBUFFERED": "1"},
                )
            self.procs[task.index] = proc
            task.job_id = f"pid:{proc.pid}"
            task.log = log.relative_to(self.root).as_posix()

    def poll(self, state: RunState) -> dict[int, Phase]:
        return {task.index: self._phase(task) for task in state.tasks}

    def _phase(self, task: TaskRecord) -> Phase:
        proc = self.procs.get(task.index)
        if proc is not None:
            code = proc.poll()
        else:  # resumed: the process of an earlier controller, known by its pid
            pid = int(task.job_id.split(":", 1)[1]) if task.job_id and task.job_id.startswith("pid:") else None
            code = None if pid is not None and _alive(pid) else -1
        if code is None:
            return Phase("running")
        end = read_exit(self.root / task.folder)
        if end is not None and int(end["exit_code"]) in COMPLETED:
            return Phase("done")
        if end is not None:
            return Phase("died", "error", f"pytest ended with exit code {int(end['exit_code'])} (see its log)")
        why = f"was killed by signal {-code}" if code < -1 else "ended without leaving its exit code"
        return Phase("died", "crash", f"the local pytest process {why} before the check finished")

    def cancel(self, state: RunState) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGINT)  # its own process group: the runner, pytest and its workers
        deadline = time.monotonic() + 30
        for proc in self.procs.values():
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[-1].split()[0] == "Z")
