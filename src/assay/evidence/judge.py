"""Judging a run: the check's expectation evaluated against the metrics, and the verdict of a run.

No pytest here. The plugin classifies each phase of a test into a ``PhaseOutcome`` (from the exception
types it saw, never from message text); ``verdict_of`` turns a run's outcomes into the ledger
verdict, and ``evaluate`` the expectation into ``Evaluated`` entries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from assay.experiment import Check, Expectation
from assay.ledger.result import Counterpart, ErrorKind, Evaluated, PaperNumber, Verdict
from assay.model import Claim
from assay.statistics import mean_interval

#: What one phase of a verifier's test came to.
OutcomeKind = Literal["passed", "not-met", "inconclusive", "known-failing", "xpassed", "skipped", "error", "timeout", "crash"]


class ExpectationNotMet(AssertionError):
    """A check's expectation did not hold for the measured metrics (``evaluated`` has each comparison)."""

    def __init__(self, message: str, evaluated: list[Evaluated] | None = None):
        super().__init__(message)
        self.evaluated = evaluated or []


class ExpectationInconclusive(Exception):
    """The seeds disagree about an expectation (none failed outright): the run decides nothing."""

    def __init__(self, message: str, evaluated: list[Evaluated] | None = None):
        super().__init__(message)
        self.evaluated = evaluated or []


class VerifierError(Exception):
    """The verifier did something its check cannot use: a metric missing or not finite, a bad figure name."""


class CheckTimeout(BaseException):
    """The verifier ran past its CPU-time or wall-clock limit. A ``BaseException``, so that a verifier's
    ``except Exception`` does not swallow it (and ``limits.limited`` raises it again when the body ends)."""


@dataclass(frozen=True)
class PhaseOutcome:
    """One phase of a run (``setup``, ``call``, or the ``crash`` the controller saw), classified."""

    kind: OutcomeKind
    message: str = ""
    when: str = "call"


def evaluate(
    claim: Claim, check: Check, metrics: dict[str, float], seeds: dict[str, list[float]] | None = None
) -> list[Evaluated]:
    """Each expectation of ``check`` read against the measured value or its per-seed values.

    Raises ``VerifierError`` for a metric the verifier did not record."""
    reported = {r.id: r for r in claim.reported}
    seeds = seeds or {}
    out = []
    for exp in check.expect:
        if exp.metric not in metrics:
            raise VerifierError(
                f"{claim.id}/{check.id}: the verifier did not record metric '{exp.metric}' "
                f"(recorded: {', '.join(sorted(metrics)) or 'none'})"
            )
        r = reported.get(exp.reported) if exp.reported else None
        paper = (
            PaperNumber(value=r.value, bound=r.bound, unit=r.unit, quantity=r.quantity, source=r.source, locator=r.locator)
            if r
            else None
        )
        spec = check.metric(exp.metric)
        reading = read_seeds(exp, metrics[exp.metric], seeds.get(exp.metric, []))
        against = [_counterpart(claim, check, exp, name, metrics, seeds) for name in exp.against]
        out.append(
            Evaluated(
                **exp.model_dump(exclude={"seeds", "interval", "against", "source_value", "identity"}),
                **reading,
                paper=paper,
                unit=spec.unit if spec else None,
                against=against,
                discriminates=all(c.outcome == "fails" for c in against) if against else None,
            )
        )
    return out


def _counterpart(
    claim: Claim, check: Check, exp: Expectation, name: str, metrics: dict[str, float], seeds: dict[str, list[float]]
) -> Counterpart:
    """``exp``'s comparison on the counterpart metric ``name``, read as ``exp`` is read (the same seed reading)."""
    if name not in metrics:
        raise VerifierError(
            f"{claim.id}/{check.id}: the verifier did not record metric '{name}', a counterpart of '{exp.metric}' "
            f"(recorded: {', '.join(sorted(metrics)) or 'none'})"
        )
    reading = read_seeds(exp, metrics[name], seeds.get(name, []))
    reading.pop("holds")
    return Counterpart(metric=name, **reading)


def read_seeds(exp: Expectation, value: float, per_seed: list[float]) -> dict:
    """How an expectation comes out on one metric: its one value, every seed (``all``), or the mean's interval (``mean``).

    ``all``: held by every seed -> holds, by none -> fails, by some -> inconclusive. ``mean``: the two-sided
    Student's t interval of the mean at the declared level lies wholly on the holding side -> holds, wholly on the
    other -> fails, across the threshold -> inconclusive."""
    how = exp.seeds or ("all" if per_seed else "value")
    if how == "value" or not per_seed:
        ok = exp.holds(value)
        return {"measured": value, "holds": ok, "outcome": "holds" if ok else "fails", "seeds": "value"}
    n = len(per_seed)
    mean = math.fsum(per_seed) / n
    if how == "all":
        k = sum(exp.holds(x) for x in per_seed)
        outcome = "holds" if k == n else "fails" if k == 0 else "inconclusive"
        return {
            "measured": mean,
            "holds": outcome == "holds",
            "outcome": outcome,
            "seeds": "all",
            "seeds_holding": k,
            "seeds_total": n,
        }
    low, high = mean_interval(per_seed, exp.interval or 0.95)
    if exp.op == "==":  # the interval inside the tolerance band, disjoint from it, or across its edge
        band = (exp.value - (exp.tol or 0.0), exp.value + (exp.tol or 0.0))
        inside, apart = band[0] <= low and high <= band[1], high < band[0] or low > band[1]
        outcome = "holds" if inside else "fails" if apart else "inconclusive"
    else:  # a one-sided comparison: both ends of the interval on one side of the threshold, or not
        ends = exp.holds(low) + exp.holds(high)
        outcome = "holds" if ends == 2 else "fails" if ends == 0 else "inconclusive"
    return {
        "measured": mean,
        "holds": outcome == "holds",
        "outcome": outcome,
        "seeds": "mean",
        "seeds_total": n,
        "interval": (low, high),
    }


def failure_message(claim: Claim, check: Check, failed: list[Evaluated]) -> str:
    """Names claim, check, metric, measured value, expectation, and the paper's number where there is one."""
    lines = [f"{claim.id}/{check.id}: {check.tests}"]
    for e in failed:
        lines.append("  " + describe(e))
    return "\n".join(lines)


def describe(e: Evaluated) -> str:
    """``gap = 0.012 (mean of 5 seeds; 3 of 5 hold), expected >= 0.04 (paper: >10 %, LIT-591 Table 3)``."""
    within = f" within {e.tol:g}" if e.tol is not None else ""
    unit = f" {e.unit}" if e.unit else ""
    how = ""
    if e.seeds == "all":
        how = f" (mean of {e.seeds_total} seeds; {e.seeds_holding} of {e.seeds_total} satisfy it)"
    elif e.seeds == "mean" and e.interval:
        how = f" (mean of {e.seeds_total} seeds, interval {e.interval[0]:.4g} to {e.interval[1]:.4g})"
    line = f"{e.metric} = {e.measured:.6g}{unit}{how}, expected {e.op} {e.value:g}{within}"
    if e.paper:
        line += f" (paper: {e.paper.bound or ''}{e.paper.value:g} {e.paper.unit}, {e.paper.source} {e.paper.locator})"
    return line


def judge(claim: Claim, check: Check, metrics: dict[str, object], seeds: dict[str, list[float]] | None = None) -> list[Evaluated]:
    """Check the metrics are finite numbers and the declared units match, evaluate the expectation; raise
    ``ExpectationNotMet`` if a comparison fails, ``ExpectationInconclusive`` if none fails and the seeds disagree."""
    __tracebackhide__ = True  # the reader wants the verdict, not the engine's frames
    for name, value in metrics.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
            raise VerifierError(f"metric {name!r} is {value!r}, not a finite number; record metrics with evidence.metric()")
    evaluated = evaluate(claim, check, {k: float(v) for k, v in metrics.items()}, seeds)  # type: ignore[arg-type]
    failed = [e for e in evaluated if e.outcome == "fails"]
    if failed:
        raise ExpectationNotMet(failure_message(claim, check, failed), evaluated)
    undecided = [e for e in evaluated if e.outcome == "inconclusive"]
    if undecided:
        raise ExpectationInconclusive(
            failure_message(claim, check, undecided).replace(f"{check.tests}", f"{check.tests} (the seeds disagree)", 1),
            evaluated,
        )
    return evaluated


ERROR_KINDS: dict[str, ErrorKind] = {"error": "error", "timeout": "timeout", "crash": "crash"}


def verdict_of(outcomes: list[PhaseOutcome]) -> tuple[Verdict | Literal["skipped"], str]:
    """The ledger verdict of a run from its phases' outcomes (setup first), with its message."""
    for o in outcomes:
        if o.kind == "skipped":
            return "skipped", o.message
        if o.kind in ERROR_KINDS:
            return "error", o.message
        if o.kind == "passed" and o.when == "call":
            return "passed", ""
        if o.kind == "not-met":
            return "failed", o.message
        if o.kind == "inconclusive":
            return "inconclusive", o.message
        if o.kind == "known-failing":
            return "known-failing", o.message
        if o.kind == "xpassed":
            return "failed", "declared known-failing, but the expectation held"
    return "error", "the run ended before the verifier finished"
