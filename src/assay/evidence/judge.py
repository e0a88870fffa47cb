"""Judging a run: the check's expectation evaluated against the metrics, and the verdict of a run.

No pytest here. The plugin classifies each phase of a test into a ``PhaseOutcome`` (from the exception
types it saw, never from message text); ``verdict_of`` turns a run's outcomes into the ledger
verdict, and ``evaluate`` the expectation into ``Evaluated`` entries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, get_args

from assay.experiment import Check
from assay.ledger.judgement import VerifierError, evaluate, verdict_from  # noqa: F401 - VerifierError is read from here too
from assay.ledger.result import ErrorKind, Evaluated, Verdict
from assay.model import Claim

#: What one phase of a verifier's test came to.
OutcomeKind = Literal[
    "passed", "not-met", "inconclusive", "out-of-regime", "known-failing", "xpassed", "skipped", "error", "timeout", "crash"
]


class ExpectationJudged(Exception):
    """A check's expectations, judged on the measured metrics, stop its test: ``evaluated`` has each comparison."""

    def __init__(self, message: str, evaluated: list[Evaluated] | None = None):
        super().__init__(message)
        self.evaluated = evaluated or []


class ExpectationNotMet(ExpectationJudged, AssertionError):
    """A check's expectation did not hold for the measured metrics."""


class ExpectationInconclusive(ExpectationJudged):
    """The seeds disagree about an expectation (none failed outright): the run decides nothing."""


class ExpectationOutOfRegime(ExpectationInconclusive):
    """A regime expectation did not hold: the run never reached the regime its words speak of, so its other
    expectations decide nothing. Not a broken check, and not an open question of seeds: its own outcome."""


class CheckTimeout(BaseException):
    """The verifier ran past its CPU-time or wall-clock limit. A ``BaseException``, so that a verifier's
    ``except Exception`` does not swallow it (and ``limits.limited`` raises it again when the body ends)."""


@dataclass(frozen=True)
class PhaseOutcome:
    """One phase of a run (``setup``, ``call``, or the ``crash`` the controller saw), classified."""

    kind: OutcomeKind
    message: str = ""
    when: str = "call"


def judge(claim: Claim, check: Check, metrics: dict[str, object], seeds: dict[str, list[float]] | None = None) -> list[Evaluated]:
    """Check the metrics are finite numbers and the declared units match, evaluate the expectation; raise
    ``ExpectationOutOfRegime`` if a regime expectation does not hold, else ``ExpectationNotMet`` if a comparison
    fails, ``ExpectationInconclusive`` if none fails and the seeds disagree."""
    __tracebackhide__ = True  # the reader wants the verdict, not the engine's frames
    for name, value in metrics.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
            raise VerifierError(f"metric {name!r} is {value!r}, not a finite number; record metrics with evidence.metric()")
    evaluated = evaluate(claim, check, {k: float(v) for k, v in metrics.items()}, seeds)  # type: ignore[arg-type]
    verdict, message = verdict_from(claim, check, evaluated)
    if verdict == "out-of-regime":
        raise ExpectationOutOfRegime(message, evaluated)
    if verdict in ("failed", "known-failing") and any(e.outcome == "fails" for e in evaluated):
        raise ExpectationNotMet(message, evaluated)
    if verdict == "inconclusive":
        raise ExpectationInconclusive(message, evaluated)
    return evaluated


def verdict_of(outcomes: list[PhaseOutcome]) -> tuple[Verdict | Literal["skipped"], str]:
    """The ledger verdict of a run from its phases' outcomes (setup first), with its message."""
    for o in outcomes:
        if o.kind == "skipped":
            return "skipped", o.message
        if o.kind in get_args(ErrorKind):
            return "error", o.message
        if o.kind == "passed" and o.when == "call":
            return "passed", ""
        if o.kind == "not-met":
            return "failed", o.message
        if o.kind in ("inconclusive", "out-of-regime", "known-failing"):  # the verdict of the same name
            return o.kind, o.message
        if o.kind == "xpassed":
            return "failed", "declared known-failing, but the expectation held"
    return "error", "the run ended before the verifier finished"
