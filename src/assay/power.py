"""How many seeds would decide an open question: a planning figure per expectation, from the ledger, and the
settling plan ``assay verify --settle`` runs.

An expectation is open when it reads per-seed values by their mean and is inconclusive, or holds or fails by a
margin under one standard error of its mean. Its plan: the seeds read, their mean and sd, and the least number of
seeds n at which the Student's t interval at the expectation's level, half-width t(1 - (1 - level)/2, n - 1)
sd / sqrt(n), would lie wholly on one side of the threshold *if the mean and the sd held* (a planning figure, not a
promise: fresh seeds give a fresh mean). Past ``MAX_SEEDS`` it is "not decidable at this scale". An ``all`` reading
whose seeds disagree cannot be decided by more seeds: each one added is one more chance to disagree. The cost is
the ledger's CPU (or, on a GPU, wall) seconds per seed read, times n.

A settling run reads n fresh seeds, disjoint from every seed read before: a record's own seeds lie below
``SETTLING_FROM`` (``assay.experiment.Seeds``), and a settling run takes the seeds after the highest any run of the
check read, from ``SETTLING_FROM`` on. Its verdict comes from its own seeds alone, so adding seeds to an earlier
reading until an interval clears is impossible by construction.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from assay.experiment import SETTLING_FROM, Check
from assay.ledger.inputs import InputParts
from assay.ledger.result import Evaluated, Result
from assay.ledger.store import Ledger
from assay.model import Claim
from assay.records.knowledge_base import KnowledgeBase
from assay.statistics import mean_sd, t_quantile

#: The most seeds a plan proposes; beyond it a question is not decidable at this scale.
MAX_SEEDS = 64


@dataclass(frozen=True)
class Plan:
    """The planning figure of one open expectation on one device."""

    claim: str
    check: str
    device: str
    metric: str
    expectation: str  # 'gap > 0.1 (mean)'
    outcome: str
    seeds_read: int
    mean: float
    sd: float
    seeds_needed: int | None  # None: not decidable by more seeds at this scale
    seconds: float | None  # what seeds_needed fresh seeds cost, where the ledger says
    why: str

    @property
    def words(self) -> str:
        """The plan in one line, as `assay plan`, `assay show` and the claim page give it: why, and the cost."""
        return self.why + (f"; about {self.seconds:.0f} s" if self.seconds is not None else "")

    @property
    def read(self) -> str:
        """What the seeds read measured, as the plans give it: ``5 seeds read, mean 0.12, sd 0.03``."""
        return f"{self.seeds_read} seeds read, mean {self.mean:.4g}, sd {self.sd:.3g}"


def needed(mean: float, sd: float, threshold: float, level: float) -> int | None:
    """The least n (2..MAX_SEEDS) whose t interval at ``level`` around ``mean`` with spread ``sd`` excludes
    ``threshold``; None when none does."""
    gap = abs(mean - threshold)
    if gap == 0:
        return None
    if sd == 0:
        return 2
    for n in range(2, MAX_SEEDS + 1):
        if t_quantile(0.5 + level / 2, n - 1) * sd / math.sqrt(n) < gap:
            return n
    return None


def open_plans(check: Check, result: Result) -> list[Plan]:
    """The plans of ``result``'s open expectations (see the module's docstring)."""
    plans = []
    per_seed_cost = _seconds_per_seed(result)
    for k, ev in enumerate(result.expectation):
        spec = check.expect[k] if k < len(check.expect) and check.expect[k].metric == ev.metric else None
        values = result.metrics[ev.metric].seeds if ev.metric in result.metrics else []
        if ev.seeds == "all" and ev.outcome == "inconclusive":
            why = (
                f"{ev.seeds_holding} of {ev.seeds_total} seeds hold it: more seeds cannot decide an `all` reading "
                "whose seeds disagree"
            )
            plans.append(_plan(result, ev, values, None, None, why))
            continue
        if ev.seeds != "mean" or len(values) < 2 or ev.op == "==":
            continue
        mean, sd = mean_sd(values)
        se = sd / math.sqrt(len(values))
        if ev.outcome != "inconclusive" and abs(mean - ev.value) >= se:
            continue
        level = spec.interval if spec is not None and spec.interval else 0.95
        n = needed(mean, sd, ev.value, level)
        cost = n * per_seed_cost if n is not None and per_seed_cost is not None else None
        if n is None:
            away = abs(mean - ev.value) / se if se else 0.0
            why = (
                f"the mean {mean:.4g} lies {away:.2f} standard errors from {ev.value:g}: not decidable at this scale "
                f"(over {MAX_SEEDS} seeds)"
            )
        else:
            side = "holds" if (spec.holds(mean) if spec is not None else ev.outcome == "holds") else "fails"
            why = (
                f"{n} fresh seeds would decide it ({side}: the interval clear of {ev.value:g}) if the mean {mean:.4g} "
                f"and sd {sd:.3g} held; a planning figure"
            )
        plans.append(_plan(result, ev, values, n, cost, why))
    return plans


def _plan(result: Result, ev: Evaluated, values: list[float], n: int | None, cost: float | None, why: str) -> Plan:
    mean, sd = mean_sd(values) if values else (ev.measured, 0.0)
    return Plan(
        result.claim,
        result.check,
        result.device,
        ev.metric,
        f"{ev.metric} {ev.op} {ev.value:g} ({ev.seeds})",
        ev.outcome,
        len(values),
        mean,
        sd,
        n,
        cost,
        why,
    )


def _seconds_per_seed(result: Result) -> float | None:
    """CPU seconds (wall on a GPU) of the result per seed it read; None where it read no seeds."""
    read = len(result.seeds_used or []) or max((e.seeds_total or 0 for e in result.expectation), default=0)
    spent = result.cpu_s if result.device == "cpu" and result.cpu_s else result.duration_s
    return spent / read if read else None


def measured(
    kb: KnowledgeBase, ledger: Ledger, claims: list[str] | None = None, device: str | None = None
) -> Iterator[tuple[Claim, Check, str, Result]]:
    """Every measured result of the checks of ``claims`` (by default all), in id order, with its claim, check and
    device; ``device``: only those on it."""
    for cid in sorted(claims or kb.claims):
        claim = kb.claims[cid]
        for check in claim.checks:
            for dev in (d for d in check.devices if device in (None, d)):
                result = ledger.get((cid, check.id, dev))
                if result is not None and result.measured:
                    yield claim, check, dev, result


def plans(kb: KnowledgeBase, ledger: Ledger, claims: list[str] | None = None) -> list[Plan]:
    """Every open expectation's plan, on every device a result exists for."""
    return [plan for _, check, _, result in measured(kb, ledger, claims) for plan in open_plans(check, result)]


@dataclass(frozen=True)
class Settle:
    """One check's settling run: its fresh seeds, what it costs, and the plan in words."""

    claim: str
    check: str
    device: str
    seeds: list[int]
    seconds: float
    plan: str


def settle_plans(
    kb: KnowledgeBase, ledger: Ledger, device: str, claims: list[str] | None = None
) -> tuple[list[Settle], list[str]]:
    """The settling runs of the checks on ``device`` with a fresh result whose verifier reads seeds through the record:
    each check with an inconclusive expectation that more seeds could decide (at the seeds the most demanding of them
    needs; the others are named as left open), and each check with a seeded expectation fixed only with or after its
    result (post-hoc, with-result, moved) and not yet confirmed, on as many fresh seeds as the record reads. Cheapest
    first. Also, one line for each such check that will not be settled, and why. The seeds are the engine's: after
    every seed any run of the check has read, from ``SETTLING_FROM`` on."""
    from assay.ledger.registration import Registry
    from assay.status import run_reason

    inputs, registry = InputParts(kb.root), Registry(kb.root)
    chosen, skipped = [], []
    for claim, check, _, result in measured(kb, ledger, claims, device):
        cid = claim.id
        open_somewhere = any(e.outcome == "inconclusive" for e in result.expectation)
        unfixed = _unfixed(registry, cid, check, ledger, result)
        if not open_somewhere and not unfixed:
            continue
        label = f"{cid}/{check.id}.{device}"
        if run_reason(ledger, (cid, check.id, device), inputs.parts(claim, check, device), inputs) != "fresh":
            skipped.append(f"{label}: its result is not fresh; rerun it first (assay verify --stale)")
            continue
        if check.seeds is None:
            skipped.append(f"{label}: its verifier does not read its seeds from the record (seeds:)")
            continue
        first = max(SETTLING_FROM, max(_seen(registry, cid, check, result), default=-1) + 1)
        if unfixed and all(g.tried for g in unfixed):  # confirmed or not, once: more fresh seeds would be shopping
            skipped.append(f"{label}: run on fresh seeds since its expectations last moved; that result stands")
            continue
        if unfixed:
            unfixed = [g.metric for g in unfixed]
            n = check.seeds.count
            plan = f"{n} fresh seeds from {first} to confirm {', '.join(unfixed)} (fixed with or after its result)"
            chosen.append(Settle(cid, check.id, device, list(range(first, first + n)), _cost(result, n), plan))
            continue
        if result.settling is not None:
            skipped.append(f"{label}: already settled with these inputs, and still inconclusive")
            continue
        open_ = [p for p in open_plans(check, result) if p.outcome == "inconclusive"]
        decidable = [p for p in open_ if p.seeds_needed is not None and p.seconds is not None]
        if not decidable:
            undecided = next((p for p in open_ if p.seeds_needed is None), None)
            skipped.append(f"{label}: {undecided.why if undecided else 'no open expectation has a plan'}")
            continue
        n = max(p.seeds_needed for p in decidable)
        words = "; ".join(f"{p.expectation}: {p.read}" for p in decidable)
        left = [p.expectation for p in open_ if p not in decidable]
        tail = f"; not decidable at this scale, and left open: {', '.join(left)}" if left else ""
        plan = f"{n} fresh seeds from {first} ({words}); the largest number any of them needs{tail}"
        chosen.append(Settle(cid, check.id, device, list(range(first, first + n)), max(p.seconds for p in decidable), plan))
    chosen.sort(key=lambda s: (s.seconds, s.claim, s.check))
    return chosen, skipped


def _unfixed(registry, cid: str, check: Check, ledger: Ledger, result: Result) -> list:
    """The seeded expectations of ``check`` that a supported verdict cannot rest on yet: fixed with or after their
    result and not confirmed on fresh seeds (none where the history is missing: nothing here could tell)."""
    seeded = {e.metric for e in result.expectation if e.seeds != "value" and not e.control and not e.regime}
    if not seeded or check.role == "apparatus":
        return []
    results = {d: ledger.get((cid, check.id, d)) for d in check.devices}
    return [g for g in registry.of(cid, check, results) if g.metric in seeded and not g.fixed]


def _seen(registry, cid: str, check: Check, result: Result) -> set[int]:
    """Every seed a run of ``check`` has read: the record's, the result's, and every committed result's."""
    seen = {*check.seeds.values, *(result.seeds_used or [])}
    if registry.history.available:
        for versions in registry.history.check(cid, check.id).results.values():
            seen |= {s for _, v in versions if v is not None for s in v.seeds}
    return seen


def _cost(result: Result, n: int) -> float:
    per_seed = _seconds_per_seed(result)
    return per_seed * n if per_seed is not None else float(result.cpu_s or result.duration_s)


def report(kb: KnowledgeBase, ledger: Ledger, claims: list[str] | None = None) -> list[str]:
    """``assay plan``'s lines: each open expectation's plan, then the settling runs ``assay verify --settle`` would
    make, and the total they cost."""
    lines = []
    found = plans(kb, ledger, claims)
    for p in found:
        lines.append(f"{p.claim}/{p.check}.{p.device} {p.expectation}: {p.outcome}, {p.read}")
        lines.append(f"    {p.words}")
    if not found:
        lines.append("no open expectation: every one read by its mean is decided by more than a standard error")
    devices = sorted({d for c in kb.claims.values() for k in c.checks for d in k.devices})
    for device in devices:
        chosen, skipped = settle_plans(kb, ledger, device, claims)
        if chosen or skipped:
            total = sum(s.seconds for s in chosen)
            lines.append(
                f"settling on {device}: {len(chosen)} check(s), about {total:.0f} s (assay verify --settle --device {device})"
            )
            lines += [f"    {s.claim}/{s.check}: {s.plan}" for s in chosen]
            lines += [f"    not settled: {line}" for line in skipped]
    return lines
