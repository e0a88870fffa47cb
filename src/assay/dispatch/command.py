"""The ``assay verify`` command: its options, and the shell that turns them into a ``Request``."""

from __future__ import annotations

import argparse

from pydantic import ValidationError

from assay.dispatch import controller, plan, slurm
from assay.settings import SettingsProblem, SlurmSettings, settings


def cmd_verify(args: argparse.Namespace) -> int:
    """Plan and run the checks, here (pytest-xdist) or as a SLURM job array, then merge their results into results/.

    Selection: --claim (repeatable), --device, --stale (missing, stale or errored results only), --budget
    (most stale first, while their recorded time fits; a check never run counts as its timeout). The local
    executor runs one `pytest verify -n W`; the slurm executor splits the plan into --tasks shards balanced
    by recorded time and submits them as one array through submitit, with defaults from [tool.assay.slurm]
    in pyproject.toml. Each task writes its own ledger under build/verify/<run>/; the run ends with
    `assay merge`'s rules. A task that dies (killed, out of memory, over its time limit) has its unfinished
    checks recorded as errors naming its log; Ctrl-C cancels the tasks; --resume takes over a run whose
    controller stopped. --settle reruns the checks with an inconclusive expectation on fresh seeds, as `assay plan`
    plans them, and keeps the result each settles beside its own.

    example: assay verify --executor slurm --stale --budget 30m --partition gpu --gpus-per-task 1
    """
    from assay.diagnostics import UsageProblem
    from assay.records.knowledge_base import load

    kb = load(args.root)
    try:
        options = _slurm_options(args)
        if args.resume:
            return controller.resume(kb, options)
        return controller.start(kb, _request(args, options))
    except (plan.PlanProblem, controller.RunProblem, SettingsProblem) as e:
        raise UsageProblem(str(e)) from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--claim", action="append", default=[], metavar="ID", help="only this claim's checks (repeatable)")
    p.add_argument(
        "--device",
        choices=("auto", "cpu", "cuda"),
        default="auto",
        help="the device to verify on (auto: cuda with --gpus-per-task or a local GPU, else cpu)",
    )
    p.add_argument("--stale", action="store_true", help="only checks whose result is missing, stale or an error")
    p.add_argument("--budget", metavar="T", help="recorded time to spend, most stale first (30m, 2h, 1:30:00)")
    p.add_argument("--executor", choices=("local", "slurm"), default="local")
    p.add_argument("--tasks", type=int, metavar="N", help="slurm: shards in the array (default: about 5 minutes each)")
    p.add_argument("--workers", type=int, default=2, metavar="W", help="local: xdist workers")
    p.add_argument("--partition", help="slurm partition")
    p.add_argument("--gpus-per-task", type=int, metavar="N")
    p.add_argument("--cpus-per-task", type=int, metavar="N", help="also the task's xdist workers")
    p.add_argument("--time", metavar="T", help="slurm time limit per task (default: twice the longest shard + 5 min)")
    p.add_argument("--mem", metavar="M", help="slurm memory per task (8G)")
    p.add_argument("--array-parallelism", type=int, metavar="N", help="tasks of the array running at once")
    p.add_argument(
        "--settle",
        "--confirm",
        dest="settle",
        action="store_true",
        help="run each check on fresh seeds the engine chooses (after every seed read), read alone: a check with an "
        "inconclusive expectation on the number of seeds that would decide it (assay plan), and a check whose seeded "
        "expectation was fixed with or after its result on as many as the record reads, to confirm it; with --budget, "
        "the plans that fit, cheapest first",
    )
    p.add_argument("--dry-run", action="store_true", help="print the plan and its shards; run nothing")
    p.add_argument("--resume", action="store_true", help="take over the last run (build/verify/state.json) and merge it")


def _slurm_options(args: argparse.Namespace) -> SlurmSettings:
    """[tool.assay.slurm] with the command line's values over it."""
    base = settings(args.root)
    options = ("partition", "gpus_per_task", "cpus_per_task", "mem", "array_parallelism", "time")
    given = {name: getattr(args, name) for name in options if getattr(args, name) is not None}
    try:
        return SlurmSettings.model_validate({**base.model_dump(), **given})
    except ValidationError as e:
        err = e.errors(include_url=False)[0]
        raise SettingsProblem(f"--{str(err['loc'][0]).replace('_', '-')}: {err['msg'].lower()}") from None


def _request(args: argparse.Namespace, options: SlurmSettings) -> controller.Request:
    if args.executor == "slurm" and not args.dry_run and (why := slurm.available()):
        raise controller.RunProblem(f"--executor slurm: {why}")
    time_min = max(1, -(-int(plan.parse_duration(options.time)) // 60)) if options.time is not None else None
    return controller.Request(
        device=_device(args.device, args.executor, options),
        executor=args.executor,
        claims=args.claim,
        stale=args.stale,
        budget_s=plan.parse_duration(args.budget) if args.budget else None,
        tasks=args.tasks,
        workers=args.workers,
        slurm=options,
        time_min=time_min,
        dry_run=args.dry_run,
        settle=args.settle,
    )


def _device(asked: str, executor: str, options: SlurmSettings) -> str:
    if executor == "slurm":
        if asked == "cuda" and not options.gpus_per_task:
            raise controller.RunProblem("--device cuda on SLURM needs --gpus-per-task 1 or more")
        return asked if asked != "auto" else ("cuda" if options.gpus_per_task else "cpu")
    if asked == "cpu":
        return asked
    import torch

    if asked == "cuda" and not torch.cuda.is_available():
        raise controller.RunProblem(f"--device cuda: torch {torch.__version__} sees no CUDA device on this machine")
    return "cuda" if torch.cuda.is_available() else "cpu"
