"""The statistics of reading seeds: the Student's t interval of a mean, from ``scipy.stats``.

Planning figures (how many seeds would decide an expectation) build on the same quantiles.
"""

from __future__ import annotations

import functools
import math


def mean_sd(xs: list[float]) -> tuple[float, float]:
    """The mean of ``xs`` and their sample standard deviation (0 for a single value)."""
    n = len(xs)
    mean = math.fsum(xs) / n
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    return mean, sd


def mean_interval(xs: list[float], level: float) -> tuple[float, float]:
    """The two-sided Student's t confidence interval of the mean of ``xs`` (a point for one value or no spread)."""
    n = len(xs)
    mean, sd = mean_sd(xs)
    if n < 2:
        return mean, mean
    half = t_quantile(0.5 + level / 2, n - 1) * sd / math.sqrt(n)
    return mean - half, mean + half


@functools.lru_cache(maxsize=4096)
def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom."""
    from scipy import stats  # imported when a mean is read: the commands that never read one stay light

    return float(stats.t.ppf(p, df))
