"""How a measured number is written beside the threshold it is compared with: never so rounded that it reads as the
threshold when it is not, so that a failing value is never shown as meeting it (0.5000001 beside > 0.5 is written
0.5000001, not 0.5)."""

from __future__ import annotations

import math

#: The most significant digits a number is written with; a float carries 17.
MOST = 17


def beside(value: float, threshold: float | None, digits: int = 4) -> str:
    """``value`` with ``digits`` significant digits, or as many more as it takes to tell it from ``threshold``."""
    if not math.isfinite(value):
        return str(value)
    n = digits
    text = f"{value:.{n}g}"
    while threshold is not None and value != threshold and n < MOST and float(text) == float(f"{threshold:.{n}g}"):
        n += 1
        text = f"{value:.{n}g}"
    return text
