"""Judging a run: the check's expectation evaluated against the metrics, and the verdict of a run.

No pytest here. The plugin classifies each phase of a test into an ``Outcome`` (from the exception
types it saw, never from message text); ``verdict_of`` turns a run's outcomes into the ledger
verdict, and ``evaluate`` the expectation into ``Evaluated`` entries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from assay.model import Check, Claim
from assay.results import ErrorKind, Evaluated, PaperNumber, Verdict

#: What one phase of a verifier's test came to.
OutcomeKind = Literal["passed", "not-met", "known-failing", "xpassed", "skipped", "error", "timeout", "crash"]


class ExpectationNotMet(AssertionError):
    """A check's expectation did not hold for the measured metrics (``evaluated`` has each comparison)."""

    def __init__(self, message: str, evaluated: list[Evaluated] | None = None):
        super().__init__(message)
        self.evaluated = evaluated or []


class VerifierError(Exception):
    """The verifier did something its check cannot use: a metric missing or not finite, a bad figure name."""


class CheckTimeout(Exception):
    """The verifier ran past its CPU-time or wall-clock limit."""


@dataclass(frozen=True)
class Outcome:
    """One phase of a run (``setup``, ``call``, or the ``crash`` the controller saw), classified."""

    kind: OutcomeKind
    message: str = ""
    when: str = "call"


def evaluate(claim: Claim, check: Check, metrics: dict[str, float]) -> list[Evaluated]:
    """Each expectation of ``check`` with the measured value; raises ``VerifierError`` for a missing metric."""
    reported = {r.id: r for r in claim.reported}
    out = []
    for exp in check.expect:
        if exp.metric not in metrics:
            raise VerifierError(f"{claim.id}/{check.id}: the verifier did not record metric '{exp.metric}' "
                                f"(recorded: {', '.join(sorted(metrics)) or 'none'})")
        measured = metrics[exp.metric]
        r = reported.get(exp.reported) if exp.reported else None
        paper = PaperNumber(value=r.value, unit=r.unit, source=r.source, locator=r.locator) if r else None
        out.append(Evaluated(**exp.model_dump(), measured=measured, holds=exp.holds(measured), paper=paper))
    return out


def failure_message(claim: Claim, check: Check, failed: list[Evaluated]) -> str:
    """Names claim, check, metric, measured value, expectation, and the paper's number where there is one."""
    lines = [f"{claim.id}/{check.id}: {check.tests}"]
    for e in failed:
        within = f" within {e.tol:g}" if e.tol is not None else ""
        line = f"  {e.metric} = {e.measured:.6g}, expected {e.op} {e.value:g}{within}"
        if e.paper:
            line += f" (paper: {e.paper.value:g} {e.paper.unit}, {e.paper.source} {e.paper.locator})"
        lines.append(line)
    return "\n".join(lines)


def judge(claim: Claim, check: Check, metrics: dict[str, object]) -> list[Evaluated]:
    """Check the metrics are finite numbers, evaluate the expectation, raise ``ExpectationNotMet`` if it fails."""
    __tracebackhide__ = True  # the reader wants the verdict, not the engine's frames
    for name, value in metrics.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
            raise VerifierError(f"metric {name!r} is {value!r}, not a finite number; record metrics with evidence.metric()")
    evaluated = evaluate(claim, check, {k: float(v) for k, v in metrics.items()})  # type: ignore[arg-type]
    failed = [e for e in evaluated if not e.holds]
    if failed:
        raise ExpectationNotMet(failure_message(claim, check, failed), evaluated)
    return evaluated


ERROR_KINDS: dict[str, ErrorKind] = {"error": "error", "timeout": "timeout", "crash": "crash"}


def verdict_of(outcomes: list[Outcome]) -> tuple[Verdict | Literal["skipped"], str]:
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
        if o.kind == "known-failing":
            return "known-failing", o.message
        if o.kind == "xpassed":
            return "failed", "declared known-failing, but the expectation held"
    return "error", "the run ended before the verifier finished"
