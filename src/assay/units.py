"""The units a record declares, read as quantities: a percent and a fraction convert through pint, by the unit, and
are never relabelled (a fraction 0.1843 is 18.43 %, never "0.1843 points").

A declared unit is a scale followed by words that qualify it: ``% top-1``, ``fraction per doubling of s``. Only
the scales below are read; any other unit (``nats``, ``MSE``) is its own, and converts to nothing but itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import pint

#: The scales a declared unit may begin with, as pint units of the number recorded. ``accuracy points`` is a
#: difference of two accuracies that our verifiers record as a fraction: shown in percentage points.
SCALES = {"%": "percent", "percent": "percent", "fraction": "dimensionless", "accuracy points": "dimensionless"}

#: The scales shown in another unit than recorded, with the word they are shown with.
SHOWN_AS = {"accuracy points": ("percent", "points")}


@dataclass(frozen=True)
class Unit:
    """A declared unit read: its scale (a key of SCALES), what it is per (``doubling of s``) and the rest of its words."""

    scale: str
    per: str
    words: str


@lru_cache(maxsize=1)
def _registry() -> pint.UnitRegistry:
    return pint.UnitRegistry()


def read(unit: str | None) -> Unit | None:
    """``unit`` as a scale with its qualifiers; None where it does not begin with a scale of SCALES."""
    text = " ".join((unit or "").split())
    for scale in sorted(SCALES, key=len, reverse=True):
        if text == scale or text.startswith(scale + " ") or (scale == "%" and text.startswith("%")):
            rest = text[len(scale) :].strip()
            per = re.search(r"\bper (.+)$", rest)
            return Unit(scale, per.group(1) if per else "", rest[: per.start()].strip() if per else rest)
    return None


def convertible(a: str | None, b: str | None) -> bool:
    """Whether a number in unit ``a`` can be written in unit ``b``: the same unit, or scales of one dimension that
    are per the same thing (a rate per doubling never converts to a level)."""
    if (a or "") == (b or ""):
        return True
    ra, rb = read(a), read(b)
    return ra is not None and rb is not None and ra.per == rb.per


def convert(value: float, a: str | None, b: str | None) -> float:
    """``value`` in unit ``a`` written in unit ``b`` (``convertible`` must hold): 0.676 fraction is 67.6 %."""
    if (a or "") == (b or ""):
        return value
    ra, rb = read(a), read(b)
    if ra is None or rb is None or ra.per != rb.per:
        raise ValueError(f"{a!r} does not convert to {b!r}")
    q = _registry().Quantity(value, SCALES[ra.scale])
    return float(q.to(SCALES[rb.scale]).magnitude)


def shown(value: float, unit: str | None) -> tuple[float, str]:
    """``value`` in the unit a reader is shown it in, with that unit's words: a scale of SHOWN_AS converts
    (0.1843 accuracy points is 18.43 points), any other unit is kept as declared."""
    r = read(unit)
    if r is None or r.scale not in SHOWN_AS:
        return value, unit or ""
    target, word = SHOWN_AS[r.scale]
    q = _registry().Quantity(value, SCALES[r.scale]).to(target)
    rest = " ".join(w for w in (r.words, f"per {r.per}" if r.per else "") if w)
    return float(q.magnitude), f"{word} {rest}".strip()
