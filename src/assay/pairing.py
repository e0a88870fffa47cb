"""A paper's number beside ours as a typed pair: what the two may be compared for, computed from the record.

The transfer of a pair (a key of ``vocabulary.PAIR``): ``same-quantity`` (the same kind of number, in units that
convert, from the same setting: compared), ``direction-only`` (the same kind of number from another setting, or a
setting not stated: only the sign is compared) or ``different-quantity`` (another kind of number, one not declared,
or units that do not convert: side by side, never compared). A setting is the check's ``setting`` (data, model,
steps), stated once per check; the pair names each term that differs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assay import units
from assay.experiment import Check, Expectation
from assay.model import Claim, Reported

TERMS = ("data", "model", "steps")


@dataclass(frozen=True)
class Side:
    """One number of a pair: its value, bound (``>``), unit and kind (``quantity``)."""

    value: float
    unit: str
    quantity: str | None
    bound: str | None = None


@dataclass(frozen=True)
class Pair:
    """Ours beside the paper's, with the transfer between them and what differs."""

    metric: str
    ours: Side
    paper: Side
    transfer: str  # a key of vocabulary.PAIR
    differs: tuple[str, ...]  # each setting term (or the unit) that differs, in words
    says: str  # where the paper states it: its words or what the reported number is
    source: str
    locator: str

    @property
    def ours_in_paper_unit(self) -> float | None:
        """Ours written in the paper's unit, where the two convert (0.2268 fraction is 22.68 %)."""
        if self.transfer == "different-quantity" or not units.convertible(self.ours.unit, self.paper.unit):
            return None
        return units.convert(self.ours.value, self.ours.unit, self.paper.unit)

    @property
    def agrees(self) -> bool | None:
        """What the transfer compares: for the same quantity, whether ours meets the paper's number (its bound kept,
        else at least as large in the direction of its sign); in direction only, whether the signs agree; else None."""
        if self.transfer == "different-quantity":
            return None
        mine = self.ours_in_paper_unit if self.ours_in_paper_unit is not None else self.ours.value
        if self.transfer == "direction-only":
            return (mine > 0) == (self.paper.value > 0) if mine and self.paper.value else mine == self.paper.value
        if self.paper.bound in (">", ">="):
            return mine > self.paper.value if self.paper.bound == ">" else mine >= self.paper.value
        if self.paper.bound in ("<", "<="):
            return mine < self.paper.value if self.paper.bound == "<" else mine <= self.paper.value
        return abs(mine) >= abs(self.paper.value) and (mine >= 0) == (self.paper.value >= 0)


def transfer(ours: Side, paper: Side, check: Check) -> tuple[str, tuple[str, ...]]:
    """The transfer of ``ours`` beside ``paper`` for a number of ``check``, and what differs between them."""
    same = ours.quantity is not None and ours.quantity == paper.quantity and units.convertible(ours.unit, paper.unit)
    unit = () if (ours.unit or "") == (paper.unit or "") else (f"unit: ours {ours.unit or 'none'}, the paper's {paper.unit}",)
    if not same:
        kind = f"quantity: ours {ours.quantity or 'not declared'}, the paper's {paper.quantity or 'not declared'}"
        return "different-quantity", (kind, *unit)
    differs = setting_differs(check)
    return ("same-quantity" if not differs else "direction-only"), (*differs, *unit)


def setting_differs(check: Check) -> tuple[str, ...]:
    """Each term of the check's setting where ours is not the source's, in words; a setting not stated differs."""
    if check.setting is None:
        return (f"setting: not stated (a {check.tier} check)",)
    ours, source = check.setting.ours, check.setting.source
    return tuple(
        f"{t}: ours {getattr(ours, t)}; the paper's {getattr(source, t)}"
        for t in TERMS
        if _words(getattr(ours, t)) != _words(getattr(source, t))
    )


def _words(text: str) -> str:
    return " ".join(text.lower().split())


def of_expectation(claim: Claim, check: Check, exp: Expectation, measured: float) -> list[Pair]:
    """The pairs an expectation carries: its linked ``reported`` number and its ``source_value`` (stated in the
    metric's unit, of the quantity it tests)."""
    spec = check.metric(exp.metric)
    unit, quantity = (spec.unit, spec.quantity) if spec else ("", None)
    ours = Side(measured, unit, quantity or exp.metric)
    out = []
    reported = next((r for r in claim.reported if r.id == exp.reported), None) if exp.reported else None
    if reported is not None:
        out.append(of_reported(check, exp.metric, Side(measured, unit, quantity), reported))
    if exp.source_value is not None:
        sv = exp.source_value
        cited = claim.citations[sv.citation - 1] if sv.citation <= len(claim.citations) else None
        paper = Side(sv.value, unit, quantity or exp.metric)
        kind, differs = transfer(ours, paper, check)
        where = (cited.source, cited.locator) if cited is not None else ("", "")
        out.append(Pair(exp.metric, ours, paper, kind, differs, sv.says, *where))
    return out


def of_reported(check: Check, metric: str, ours: Side, r: Reported) -> Pair:
    """Ours beside the reported number ``r``."""
    paper = Side(r.value, r.unit, r.quantity, r.bound)
    kind, differs = transfer(ours, paper, check)
    return Pair(metric, ours, paper, kind, differs, r.what, r.source, r.locator)


_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.])")


def carried(text: str, reported: list[Reported]) -> list[Reported]:
    """The reported numbers whose value a sentence carries (``rotation ... 67.6 %`` carries a reported 67.6)."""
    values = {float(m) for m in _NUMBER.findall(text or "")}
    return [r for r in reported if r.value in values]
