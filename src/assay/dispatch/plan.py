"""Which checks to run, and how to split them into shards of about equal recorded time.

Selection reads the ledger once: per check declared for the device, whether its result is missing, an
error, stale (an input in the repository changed) or fresh, when it last finished, and how long it took.
A check never measured is planned at its ``timeout`` (CPU seconds: the most it may take). The most stale
come first: missing, then errors, then stale results oldest first, then fresh ones oldest first. A budget
takes checks in that order while their recorded time still fits, skipping any that would not.

Shards are balanced by the longest-processing-time rule: longest check first, each to the shard with the
least time so far, which keeps the longest shard within 4/3 of the best possible split.
"""

from __future__ import annotations

import heapq
import math
import re
from dataclasses import dataclass, field

from assay.diagnostics import UsageProblem
from assay.fingerprints import input_hash
from assay.ledger.inputs import InputParts
from assay.ledger.store import Ledger
from assay.records.knowledge_base import KnowledgeBase
from assay.records.lookup import record_ids
from assay.status import RUN_REASONS, run_reason


@dataclass(frozen=True)
class Planned:
    """One check to run on one device, with what the ledger says about it."""

    claim: str
    check: str
    device: str
    verifier: str
    seconds: float  # recorded duration, or the check's timeout when it never ran
    recorded: bool  # whether ``seconds`` was measured
    why: str  # one of status.RUN_REASONS, most stale first: the order of the plan
    finished: str  # when its last result finished ("" when there is none)
    inputs_hash: str = ""  # the inputs in the repository now

    @property
    def label(self) -> str:
        return f"{self.claim}/{self.check}"

    @property
    def order(self) -> tuple[int, str, str, str]:
        return (RUN_REASONS.index(self.why), self.finished, self.claim, self.check)


@dataclass
class Selection:
    """The planned checks in order, and those a budget left out."""

    planned: list[Planned] = field(default_factory=list)
    over_budget: list[Planned] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return sum(p.seconds for p in self.planned)


class PlanProblem(Exception):
    """What the user asked for cannot be planned (an unknown claim, a bad duration)."""


def select(
    kb: KnowledgeBase,
    ledger: Ledger,
    device: str,
    *,
    claims: list[str] | None = None,
    stale: bool = False,
    budget_s: float | None = None,
) -> Selection:
    """The checks of ``claims`` (all when empty) declared for ``device``, most stale first, within ``budget_s``."""
    try:
        record_ids(kb, claims or [])
    except UsageProblem as e:
        raise PlanProblem(str(e)) from None
    inputs = InputParts(kb.root)
    candidates = []
    for cid in sorted(claims or kb.claims):
        claim = kb.claims[cid]
        for check in claim.checks:
            if device not in check.devices:
                continue
            planned = of_check(inputs, ledger, claim, check, device)
            if not (stale and planned.why == "fresh"):
                candidates.append(planned)
    candidates.sort(key=lambda p: p.order)
    return within(candidates, budget_s)


def of_check(inputs: InputParts, ledger: Ledger, claim, check, device: str) -> Planned:
    """``check`` of ``claim`` on ``device`` as the plan takes it, from what ``ledger`` says of it."""
    key = (claim.id, check.id, device)
    result = ledger.get(key)
    parts = inputs.parts(claim, check, device)
    why = run_reason(ledger, key, parts, inputs)
    recorded = result is not None and result.measured
    return Planned(
        claim.id,
        check.id,
        device,
        check.verifier,
        result.duration_s if recorded else float(check.timeout),
        recorded,
        why,
        result.finished if result is not None else "",
        input_hash(parts),
    )


def within(ordered: list[Planned], budget_s: float | None) -> Selection:
    if budget_s is None:
        return Selection(list(ordered))
    selection, left = Selection(), budget_s
    for p in ordered:
        if p.seconds <= left:
            selection.planned.append(p)
            left -= p.seconds
        else:
            selection.over_budget.append(p)
    return selection


@dataclass
class Shard:
    """The checks one task runs, and their recorded time together."""

    index: int
    checks: list[Planned] = field(default_factory=list)
    seconds: float = 0.0


def balance(planned: list[Planned], n: int) -> list[Shard]:
    """``planned`` split into at most ``n`` non-empty shards by the longest-processing-time rule (deterministic)."""
    if n < 1:
        raise PlanProblem(f"the number of tasks must be at least 1, not {n}")
    shards = [Shard(i) for i in range(min(n, len(planned)))]
    heap = [(0.0, i) for i in range(len(shards))]
    for p in sorted(planned, key=lambda p: (-p.seconds, p.claim, p.check)):
        seconds, i = heapq.heappop(heap)
        shards[i].checks.append(p)
        shards[i].seconds = seconds + p.seconds
        heapq.heappush(heap, (shards[i].seconds, i))
    for shard in shards:
        shard.checks.sort(key=lambda p: (p.claim, p.check))  # a task runs its checks in a readable order
    return shards


def default_tasks(planned: list[Planned], per_task_s: float = 300.0) -> int:
    """As many tasks as give each about ``per_task_s`` of recorded time (a task's start costs seconds), at least one."""
    total = sum(p.seconds for p in planned)
    return max(1, min(len(planned), math.ceil(total / per_task_s)))


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> float:
    """``"30m"`` -> 1800.0; also ``90s``, ``2h``, ``1h30m``, plain seconds ``45``, and SLURM's ``H:MM:SS`` / ``MM:SS``."""
    text = str(text).strip()
    if re.fullmatch(r"[0-9]+(\.[0-9]+)?", text):
        return float(text)
    if re.fullmatch(r"[0-9]+(:[0-9]{1,2}){1,2}", text):
        parts = [int(x) for x in text.split(":")]
        return float(sum(v * 60**i for i, v in enumerate(reversed(parts))))
    pieces = re.findall(r"([0-9]+(?:\.[0-9]+)?)\s*([smhd])", text.lower())
    if not pieces or re.sub(r"[0-9.]+\s*[smhd]|\s", "", text.lower()):
        raise PlanProblem(f"{text!r} is not a duration; write e.g. 30m, 90s, 1h30m or 1:30:00")
    return float(sum(float(v) * _UNITS[u] for v, u in pieces))
