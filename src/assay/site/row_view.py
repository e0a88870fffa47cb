"""What a row of a claim's assertions table shows beside its words: the expectations that decided its verdict (as
the engine computed it, ``assay.status.Finding``), each with its seeds and registration, and the paper's numbers
beside them as typed pairs (``assay.pairing``). Views only: the template decides the markup."""

from __future__ import annotations

from dataclasses import dataclass

from assay import pairing, units, vocabulary
from assay.ledger.result import Evaluated
from assay.site import check_view
from assay.site.markup import number, quantity, source_href
from assay.site.views import ClaimView
from assay.status import Finding
from assay.vocabulary import Status


@dataclass(frozen=True)
class PairView:
    """A paper's number beside ours, as the row shows it."""

    transfer: Status  # a status of vocabulary.PAIR
    ours: str  # ``0.2268 fraction (22.68 %)``
    paper: str  # ``>10 % (points)``
    says: str
    where: str  # ``LIT-591 Table 3``
    href: str
    differs: tuple[str, ...]
    compared: str  # what the transfer compares, in words


def deciding(found: Finding | None, checks: dict[str, check_view.CheckView], device: str) -> list:
    """The measures of the expectations that decided ``found`` on ``device``, in the engine's order."""
    if found is None:
        return []
    out = []
    for check, metric in dict.fromkeys(found.deciding):
        run = next((r for r in checks[check].runs if r.device == device), None) if check in checks else None
        out += [m for m in (run.measures if run else []) if m.metric == metric][:1]
    return out


def pairs(view: ClaimView, found: Finding | None, device: str, text: str, cited: set[str]) -> list[PairView]:
    """The paper's numbers the deciding expectations carry (a linked ``reported`` number, a ``source_value``), and
    those the row's sentence carries from the sources it cites, each beside the first deciding expectation."""
    claim = view.claim
    evaluated = _evaluated(view, found, device)
    out: list[pairing.Pair] = []
    for check_id, ev in evaluated:
        check = next(c for c in claim.checks if c.id == check_id)
        spec = next((x for x in check.expect if x.metric == ev.metric), None)
        if spec is not None and isinstance(ev.measured, float):
            out += pairing.of_expectation(claim, check, spec, ev.measured)
    if evaluated and isinstance(evaluated[0][1].measured, float):
        check_id, ev = evaluated[0]
        check = next(c for c in claim.checks if c.id == check_id)
        m = check.metric(ev.metric)
        ours = pairing.Side(ev.measured, m.unit if m else "", m.quantity if m else None)
        linked = {p.says for p in out}
        out += [
            pairing.of_reported(check, ev.metric, ours, r)
            for r in pairing.carried(text, [r for r in claim.reported if r.source in cited])
            if r.what not in linked
        ]
    rank = list(vocabulary.PAIR)  # the pair that compares most first; one the record links before one it implies
    out.sort(key=lambda p: rank.index(p.transfer))
    return [_view(p) for p in out]


def _evaluated(view: ClaimView, found: Finding | None, device: str) -> list[tuple[str, Evaluated]]:
    if found is None:
        return []
    states = {s.check: s for s in view.state.checks if s.device == device and s.result is not None}
    out = []
    for check, metric in dict.fromkeys(found.deciding):
        ev = next((e for e in states[check].result.expectation if e.metric == metric), None) if check in states else None
        out += [(check, ev)] if ev is not None else []
    return out


def _view(p: pairing.Pair) -> PairView:
    value, word = units.shown(p.ours.value, p.ours.unit)
    ours = f"{number(value)} {word}".strip()
    converted = p.ours_in_paper_unit
    if converted is not None and (p.ours.unit or "") != (p.paper.unit or ""):
        ours += f" ({number(converted)} {p.paper.unit})"
    return PairView(
        vocabulary.PAIR[p.transfer],
        ours,
        quantity(p.paper.value, p.paper.unit, p.paper.bound).strip(),
        p.says,
        f"{p.source} {p.locator}".strip(),
        source_href(p.source, p.locator) if p.source else "",
        p.differs,
        _compared(p),
    )


def _compared(p: pairing.Pair) -> str:
    agrees = p.agrees
    if p.transfer == "different-quantity" or agrees is None:
        return "not compared"
    if p.transfer == "direction-only":
        return "same sign as the paper's" if agrees else "the opposite sign to the paper's"
    return "meets the paper's number" if agrees else "short of the paper's number"
