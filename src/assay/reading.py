"""How a comparison comes out on one metric's measurements: its one value, every seed (``all``), or the mean's
interval (``mean``). The one rule the plugin judges by, every reader re-judges by, and the history re-reads a past
result by, so that no stored outcome is ever believed.

``all``: held by every seed -> holds, by none -> fails, by some -> inconclusive. ``mean``: the two-sided Student's t
interval of the mean at the level lies wholly on the holding side -> holds, wholly on the other -> fails, across the
threshold -> inconclusive (for ``==``: inside the tolerance band, apart from it, or across its edge).
"""

from __future__ import annotations

import math

from assay.statistics import mean_interval


def holds(op: str, threshold: float, tol: float | None, x: float) -> bool:
    """Whether ``x`` satisfies ``op threshold`` (``==``: within ``tol``)."""
    if op == "==":
        return abs(x - threshold) <= (tol or 0.0)
    return {">": x > threshold, ">=": x >= threshold, "<": x < threshold, "<=": x <= threshold}[op]


def read(
    op: str, threshold: float, tol: float | None, how: str | None, level: float | None, value: float, per_seed: list[float]
) -> dict:
    """The reading of one metric: ``measured``, ``holds``, ``outcome``, ``seeds`` and, by the reading, how many seeds
    held, how many were read and the mean's interval (``how``: ``all``, ``mean`` or None for the default)."""
    how = how or ("all" if per_seed else "value")
    if how == "value" or not per_seed:
        return _reading(value, "holds" if holds(op, threshold, tol, value) else "fails", "value")
    n = len(per_seed)
    mean = math.fsum(per_seed) / n
    if how == "all":
        k = sum(holds(op, threshold, tol, x) for x in per_seed)
        return _reading(mean, "holds" if k == n else "fails" if k == 0 else "inconclusive", "all", seeds_holding=k, seeds_total=n)
    level = level or 0.95
    low, high = mean_interval(per_seed, level)
    if op == "==":
        band = (threshold - (tol or 0.0), threshold + (tol or 0.0))
        inside, apart = band[0] <= low and high <= band[1], high < band[0] or low > band[1]
        outcome = "holds" if inside else "fails" if apart else "inconclusive"
    else:
        ends = holds(op, threshold, tol, low) + holds(op, threshold, tol, high)
        outcome = "holds" if ends == 2 else "fails" if ends == 0 else "inconclusive"
    return _reading(mean, outcome, "mean", seeds_total=n, interval=(low, high), level=level)


def _reading(measured: float, outcome: str, seeds: str, **more: object) -> dict:
    return {"measured": measured, "holds": outcome == "holds", "outcome": outcome, "seeds": seeds, **more}
