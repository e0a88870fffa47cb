"""Judging a measurement: a check's expectations read against the metrics a run recorded, and the verdict they
give. The one rule the plugin writes a result by, every reader re-judges a result by (``rejudge``: the record as it
stands, against the recorded per-seed values), and a merge vets another machine's result by. No pytest here
(``assay.evidence.judge`` turns a verifier's run into these calls).
"""

from __future__ import annotations

import math

from assay import reading
from assay.experiment import Check, Expectation
from assay.ledger.result import Counterpart, Evaluated, PaperNumber, Result, Verdict
from assay.model import Claim
from assay.precision import beside


class VerifierError(Exception):
    """The verifier did something its check cannot use: a metric missing or not finite, a bad figure name."""


def evaluate(
    claim: Claim, check: Check, metrics: dict[str, float], seeds: dict[str, list[float]] | None = None
) -> list[Evaluated]:
    """Each expectation of ``check`` read against the measured value or its per-seed values.

    Raises ``VerifierError`` for a metric the verifier did not record."""
    reported = {r.id: r for r in claim.reported}
    seeds = seeds or {}
    out = []
    for exp in check.expect:
        reading = read_seeds(exp, _recorded(claim, check, metrics, exp.metric), seeds.get(exp.metric, []))
        r = reported.get(exp.reported) if exp.reported else None
        paper = (
            PaperNumber(value=r.value, bound=r.bound, unit=r.unit, quantity=r.quantity, source=r.source, locator=r.locator)
            if r
            else None
        )
        spec = check.metric(exp.metric)
        against = [_counterpart(claim, check, exp, name, metrics, seeds) for name in exp.against]
        if check.tier == "analytic":  # an exact fact of the other condition may be one constant (0 by construction)
            against = [c.model_copy(update={"flag": None}) if c.flag == "constant" else c for c in against]
        out.append(
            Evaluated(
                **exp.model_dump(exclude={"seeds", "interval", "against", "source_value", "identity", "no_size_because"}),
                **reading,
                paper=paper,
                unit=spec.unit if spec else None,
                against=against,
                discriminates=all(c.outcome == "fails" and c.flag is None for c in against) if against else None,
            )
        )
    return out


def flag_of(counterpart: list[float], effect: list[float]) -> str | None:
    """Why a counterpart's per-seed values are no measurement of another condition: the same constant on every seed,
    or an exact affine function of the effect's own values (``-m``, ``1 - m``, ``2 m``); None when they are a
    measurement. Over fewer than two seeds nothing can be told."""
    n = len(counterpart)
    if n < 2:
        return None
    if max(counterpart) == min(counterpart):
        return "constant"
    if len(effect) != n or max(effect) == min(effect):
        return None
    # the least-squares line through (effect, counterpart); an exact fit, to rounding, is a derived value
    mx, my = math.fsum(effect) / n, math.fsum(counterpart) / n
    sxx = math.fsum((x - mx) ** 2 for x in effect)
    slope = math.fsum((x - mx) * (y - my) for x, y in zip(effect, counterpart)) / sxx
    scale = max(abs(y) for y in counterpart) or 1.0
    residual = max(abs(my + slope * (x - mx) - y) for x, y in zip(effect, counterpart))
    return "derived" if n >= 3 and residual <= 1e-9 * scale else None


def _counterpart(
    claim: Claim, check: Check, exp: Expectation, name: str, metrics: dict[str, float], seeds: dict[str, list[float]]
) -> Counterpart:
    """``exp``'s comparison on the counterpart metric ``name``, read as ``exp`` is read (the same seed reading)."""
    reading = read_seeds(exp, _recorded(claim, check, metrics, name, f", a counterpart of '{exp.metric}'"), seeds.get(name, []))
    reading.pop("holds")
    reading.pop("level", None)
    return Counterpart(metric=name, **reading, flag=flag_of(seeds.get(name, []), seeds.get(exp.metric, [])))


def _recorded(claim: Claim, check: Check, metrics: dict[str, float], name: str, role: str = "") -> float:
    """``metrics[name]``, or ``VerifierError`` where the verifier did not record it (``role``: what it is, in words)."""
    if name not in metrics:
        recorded = ", ".join(sorted(metrics)) or "none"
        raise VerifierError(f"{claim.id}/{check.id}: the verifier did not record metric '{name}'{role} (recorded: {recorded})")
    return metrics[name]


def read_seeds(exp: Expectation, value: float, per_seed: list[float]) -> dict:
    """How ``exp`` comes out on one metric (``assay.reading.read``, with the expectation's own reading)."""
    return reading.read(exp.op, exp.value, exp.tol, exp.seeds, exp.interval, value, per_seed)


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
    line = f"{e.metric} = {beside(e.measured, e.value, 6)}{unit}{how}, expected {e.op} {e.value:g}{within}"
    if e.paper:
        line += f" (paper: {e.paper.bound or ''}{e.paper.value:g} {e.paper.unit}, {e.paper.source} {e.paper.locator})"
    return line


def verdict_from(claim: Claim, check: Check, evaluated: list[Evaluated]) -> tuple[Verdict, str]:
    """The verdict of a measurement from its evaluated expectations, with its message: the one rule that the plugin
    writes by and every reader re-judges by. A regime expectation that does not hold comes first (out-of-regime);
    then a failing comparison (failed, or known-failing where the record declares it); then seeds that disagree
    (inconclusive); else passed (failed for a known failure that held)."""
    regime = [e for e in evaluated if e.regime and e.outcome != "holds"]
    if regime:
        head = f"{claim.id}/{check.id}: {check.tests} (out of regime: the run did not reach what its test needs)"
        return "out-of-regime", "\n".join([head, *("  " + describe(e) for e in regime)])
    failed = [e for e in evaluated if e.outcome == "fails"]
    if failed:
        return ("known-failing" if check.known_failing else "failed"), failure_message(claim, check, failed)
    undecided = [e for e in evaluated if e.outcome == "inconclusive"]
    if undecided:
        message = failure_message(claim, check, undecided)
        return "inconclusive", message.replace(f"{check.tests}", f"{check.tests} (the seeds disagree)", 1)
    if check.known_failing:
        return "failed", "declared known-failing, but the expectation held"
    return "passed", ""


def per_seed(result: Result) -> tuple[dict[str, float], dict[str, list[float]]]:
    """A result's recorded measurements: each metric's value, and its per-seed values where there are several."""
    return {k: m.value for k, m in result.metrics.items()}, {k: list(m.seeds) for k, m in result.metrics.items() if m.seeds}


def rejudge(claim: Claim, check: Check, result: Result) -> Result:
    """``result`` judged again from its recorded per-seed measurements against the record's expectations as they
    stand: its ``expectation`` and ``verdict`` as the plugin would write them now. A stored outcome is never
    believed. Raises ``VerifierError`` where the record reads a metric the measurement did not record."""
    if not result.measured:
        return result
    metrics, seeds = per_seed(result)
    evaluated = evaluate(claim, check, metrics, seeds)
    verdict, message = verdict_from(claim, check, evaluated)
    if evaluated == result.expectation and verdict == result.verdict:
        return result
    return result.model_copy(update={"expectation": evaluated, "verdict": verdict, "message": message})
