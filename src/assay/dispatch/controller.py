"""The loop of ``assay verify``: plan, submit, watch, record the checks of dead tasks, merge.

Every run has a folder ``build/verify/<run>/`` with one folder per task (its checks and its ledger) and
the state file ``build/verify/state.json``, saved after each change, so ``--resume`` can take over a run
whose controller stopped. Ctrl-C cancels the tasks and merges what they finished; it records no errors
(an interrupted run is no evidence against a check). A task that died (killed, out of memory, over its
time limit, its node lost) has its unfinished checks recorded as errors naming its log; the merge keeps
each beside the check's last completed measurement.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TextIO

from assay import files
from assay.diagnostics import printable
from assay.dispatch import plan, runstate
from assay.dispatch.local import LocalExecutor
from assay.dispatch.progress import Progress
from assay.dispatch.runstate import PlannedCheck, RunState, TaskRecord
from assay.dispatch.slurm import SlurmExecutor, available, default_minutes
from assay.dispatch.task import SETTLE_FILE, Phase, finished, lost, write_args
from assay.ledger import store
from assay.ledger.layout import RESULTS
from assay.ledger.merge import MergeReport, merge
from assay.ledger.result import timestamp
from assay.records.knowledge_base import KnowledgeBase
from assay.settings import SlurmSettings
from assay.status import RUN_REASONS


class Executor(Protocol):
    name: str
    poll_s: float

    def submit(self, state: RunState) -> None: ...
    def poll(self, state: RunState) -> dict[int, Phase]: ...
    def cancel(self, state: RunState) -> None: ...


class RunProblem(Exception):
    """The run cannot start or resume; one line for the user."""


@dataclass
class Request:
    """What ``assay verify`` was asked for."""

    device: str
    executor: str = "local"
    claims: list[str] = field(default_factory=list)
    stale: bool = False
    budget_s: float | None = None
    tasks: int | None = None
    workers: int = 2
    slurm: SlurmSettings = field(default_factory=SlurmSettings)
    time_min: int | None = None
    dry_run: bool = False
    settle: bool = False


def start(kb: KnowledgeBase, request: Request, out: TextIO | None = None) -> int:
    """Plan and run; returns the exit status (0 all ran and held, 1 a check failed or errored, 130 interrupted)."""
    out = out or sys.stdout
    previous = _state(kb)
    if previous is not None and not previous.merged and not request.dry_run:
        raise RunProblem(
            f"run {previous.run} has not been merged yet: finish it with `assay verify --resume` "
            f"(or delete {runstate.STATE_FILE.as_posix()} to abandon it)"
        )
    settles: dict[str, dict] = {}
    if request.settle:
        selection, settles = _settling(kb, request, out)
    else:
        selection = plan.select(
            kb, store.read_ledger(kb.root), request.device, claims=request.claims, stale=request.stale, budget_s=request.budget_s
        )
    if not selection.planned:
        print(f"nothing to run on {request.device}" + (" within the budget" if selection.over_budget else ""), file=out)
        return 0
    n = 1 if request.executor == "local" else (request.tasks or plan.default_tasks(selection.planned))
    shards = plan.balance(selection.planned, n)
    _print_plan(selection, shards, request, out)
    if request.dry_run:
        return 0
    state = _new_state(kb, request, shards, settles)
    executor = _executor(kb.root, request, max(s.seconds for s in shards))
    _submit(kb, executor, state)
    where = f"SLURM job {state.job_id}" if state.job_id else "this machine"
    print(f"run {state.run}: {len(state.tasks)} task(s) on {where}; build/verify/{state.run}/", file=out)
    return watch(kb, state, executor, out)


def resume(kb: KnowledgeBase, slurm: SlurmSettings, out: TextIO | None = None) -> int:
    """Take over the last run: watch its tasks to their end, then merge."""
    out = out or sys.stdout
    state = _state(kb)
    if state is None:
        raise RunProblem(f"no run to resume: {runstate.STATE_FILE.as_posix()} does not exist")
    if state.merged:
        print(f"run {state.run} is finished and merged; nothing to resume", file=out)
        return 0
    if state.executor == "slurm" and (why := available()):
        raise RunProblem(f"run {state.run} is a SLURM job array, and {why}")
    executor: Executor = SlurmExecutor(kb.root, slurm, 0) if state.executor == "slurm" else LocalExecutor(kb.root)
    print(f"resuming run {state.run} ({state.executor}" + (f", SLURM job {state.job_id})" if state.job_id else ")"), file=out)
    return watch(kb, state, executor, out)


def _submit(kb: KnowledgeBase, executor: Executor, state: RunState) -> None:
    """Start the tasks and save the state that names them; a failed or interrupted submission leaves nothing running."""
    try:
        executor.submit(state)
    except KeyboardInterrupt:
        executor.cancel(state)
        raise RunProblem("interrupted while submitting; nothing was left running") from None
    except Exception as e:  # noqa: BLE001 - sbatch's refusal (a bad partition, a limit), in its own words
        lines = [line for line in str(e).splitlines() if line.strip()]
        why = lines[-1] if lines else type(e).__name__
        raise RunProblem(f"the {executor.name} executor could not start the tasks: {why}") from None
    runstate.save(kb.root, state)


def _state(kb: KnowledgeBase) -> RunState | None:
    try:
        return runstate.load(kb.root)
    except ValueError as e:
        raise RunProblem(str(e)) from None


def _print_plan(selection: plan.Selection, shards: list[plan.Shard], request: Request, out: TextIO) -> None:
    why = {w: sum(p.why == w for p in selection.planned) for w in RUN_REASONS}
    reasons = ", ".join(f"{n} {w}" for w, n in why.items() if n)
    print(
        f"plan: {len(selection.planned)} check(s) on {request.device} ({reasons}), {selection.seconds:.0f} s recorded, "
        f"{len(shards)} task(s), the longest {max(s.seconds for s in shards):.0f} s",
        file=out,
    )
    if selection.over_budget:
        print(f"  {len(selection.over_budget)} check(s) left out by the budget", file=out)
    if request.dry_run:
        for shard in shards:
            print(f"  task {shard.index}: {shard.seconds:.0f} s: " + ", ".join(p.label for p in shard.checks), file=out)


def _settling(kb: KnowledgeBase, request: Request, out: TextIO) -> tuple[plan.Selection, dict[str, dict]]:
    """The settling runs that fit the budget, cheapest first (``assay.power``), and what each task's plan says."""
    from assay.power import settle_plans

    ledger = store.read_ledger(kb.root)
    chosen, skipped = settle_plans(kb, ledger, request.device, request.claims)
    for line in skipped:
        print(printable(f"not settled: {line}"), file=out)
    inputs, planned, settles = plan.InputParts(kb.root), [], {}
    for s in chosen:
        claim = kb.claims[s.claim]
        check = claim.check(s.check)
        result = ledger.get((s.claim, s.check, s.device))
        planned.append(dataclasses.replace(plan.of_check(inputs, ledger, claim, check, s.device), seconds=s.seconds))
        before = {
            "verdict": result.verdict,
            "finished": result.finished,
            "seeds": result.seeds_used or check.seeds.values,
            "expectation": [e.model_dump(mode="json") for e in result.expectation],
        }
        settles[f"{s.claim}/{s.check}"] = {"seeds": s.seeds, "plan": s.plan, "before": before}
    selection = plan.within(planned, request.budget_s)
    for p in selection.planned:
        print(printable(f"settle {p.label}.{p.device}: {settles[p.label]['plan']}; about {p.seconds:.0f} s"), file=out)
    for p in selection.over_budget:
        print(printable(f"not settled: {p.label}.{p.device}: about {p.seconds:.0f} s, over the budget"), file=out)
    return selection, {p.label: settles[p.label] for p in selection.planned}


def _new_state(kb: KnowledgeBase, request: Request, shards: list[plan.Shard], settles: dict | None = None) -> RunState:
    run = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    base = runstate.STATE_FILE.parent / run
    tasks = []
    for shard in shards:
        checks = [
            PlannedCheck(
                claim=p.claim,
                check=p.check,
                verifier=p.verifier,
                inputs_hash=p.inputs_hash,
                tier=kb.claims[p.claim].check(p.check).tier,
            )
            for p in shard.checks
        ]
        folder = base / f"task-{shard.index}"
        write_args(kb.root / folder, checks)
        mine = {p.label: settles[p.label] for p in shard.checks if p.label in (settles or {})}
        if mine:
            files.write_atomic(kb.root / folder / SETTLE_FILE, json.dumps(mine, indent=2) + "\n")
        tasks.append(TaskRecord(index=shard.index, checks=checks, seconds=round(shard.seconds, 3), folder=folder.as_posix()))
    return RunState(
        run=run,
        executor=request.executor,
        device=request.device,
        tasks=tasks,
        started=timestamp(),
    )


def _executor(root: Path, request: Request, longest_s: float) -> Executor:
    if request.executor == "local":
        return LocalExecutor(root, request.workers)
    return SlurmExecutor(root, request.slurm, request.time_min or default_minutes(longest_s))


def watch(kb: KnowledgeBase, state: RunState, executor: Executor, out: TextIO) -> int:
    """Poll the tasks to their end with progress shown; then record the dead tasks' checks and merge."""
    folders = [kb.root / t.folder for t in state.tasks]
    progress = Progress(sum(len(t.checks) for t in state.tasks), folders, state.device, out)
    try:
        while True:
            phases = executor.poll(state)
            progress.show(progress.counts(phases))
            if all(p.final for p in phases.values()):
                break
            time.sleep(executor.poll_s)
    except KeyboardInterrupt:
        print("\ninterrupted: cancelling the run's tasks", file=out)
        executor.cancel(state)
        state.interrupted = True
        _merge(kb, state, folders, out)
        return 130
    progress.show(progress.counts(phases), final=True)
    lost_folder = kb.root / state.folder / "lost"
    n_lost = _record_deaths(kb, state, phases, lost_folder, out)
    report = _merge(kb, state, folders + [lost_folder], out)
    return 1 if n_lost or report.problems or _any_bad(folders, state.device) else 0


def _record_deaths(kb: KnowledgeBase, state: RunState, phases: dict[int, Phase], folder: Path, out: TextIO) -> int:
    """Write an error result for each unfinished check of each dead task; returns how many."""
    n = 0
    for task in state.tasks:
        phase = phases[task.index]
        task.ended = "done" if phase.phase == "done" else phase.reason
        if phase.phase != "died":
            continue
        done = set(finished(kb.root / task.folder, state.device))
        message = f"{phase.reason}; log: {task.log or 'none'}"
        dead = lost(kb, state.device, task, phase.kind, message, done)  # type: ignore[arg-type]
        for result in dead:
            with store.locked(folder, result.claim):
                store.write_result(folder, result)
        n += len(dead)
        print(
            printable(
                f"task {task.index} died: {phase.reason}; {len(dead)} unfinished check(s) recorded as "
                f"errors ({phase.kind}), {len(done)} finished check(s) kept; log: {task.log}"
            ),
            file=out,
        )
    runstate.save(kb.root, state)
    return n


def _merge(kb: KnowledgeBase, state: RunState, folders: list[Path], out: TextIO) -> MergeReport:
    report = merge(kb, [f for f in folders if (f / RESULTS).is_dir()])
    for d in report.problems:
        print(d.render(), file=out)
    for line in report.conflicts:
        print(printable(f"conflict: {line}"), file=out)
    print(
        f"merged into results/: {len(report.added)} added, {len(report.replaced)} replaced, {len(report.kept)} kept, "
        f"{len(report.conflicts)} conflict(s)",
        file=out,
    )
    state.merged = True
    runstate.save(kb.root, state)
    return report


def _any_bad(folders: list[Path], device: str) -> bool:
    """Whether a task's ledger holds a failed check or an error (the exit status of pytest, for the whole run)."""
    return any(r.status in ("failed", "error") for f in folders for r in finished(f, device).values())
