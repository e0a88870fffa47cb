"""The key above a claim's assertions: what each chip of the table means, and the facets it is filtered by.

A reader meets the chips (a verdict, the source's stance, an evidence tier, closure) before any legend; the key
defines the ones the page shows, where they stand. The meanings come from where each vocabulary is declared: the
statuses from ``assay.vocabulary``, the source's stance and the tiers from the schema's field descriptions
(``SourceSays.kind``, ``Check.tier``), so none is written twice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from assay import vocabulary
from assay.experiment import Check
from assay.model import SourceSays
from assay.vocabulary import Status

#: The source's stance as the table shows it: a word of its own, never one of our verdicts (``contradicted``).
SOURCE_WORDS = {
    "quoted": "quoted",
    "paraphrased": "paraphrased",
    "not-in-source": "not in source",
    "contradicted": "says otherwise",
}


@dataclass(frozen=True)
class Term:
    """One chip of the page with its meaning: a status (drawn as its chip) or a plain word."""

    word: str
    meaning: str
    status: Status | None = None
    plain: bool = False  # a word as the table prints it (the source's stance), not a chip


@dataclass(frozen=True)
class Key:
    """The terms of one claim page's assertions table, by what they qualify, the empty left out."""

    sections: list[tuple[str, list[Term]]]


@dataclass(frozen=True)
class Facets:
    """What the assertions can be filtered by: verdicts, devices and tiers present, as (value, label), and the
    heading of every verdict group in the table's order (a filter by device regroups the rows by their verdict there)."""

    verdicts: list[tuple[str, str]]
    devices: list[tuple[str, str]]
    tiers: list[tuple[str, str]]
    headings: list[tuple[str, str]]


def _listed(description: str | None) -> dict[str, str]:
    """``name (meaning)`` pairs of a field description: ```quoted` (a citation has these words), toy (tiny...)``."""
    return {m.group(1): m.group(2) for m in re.finditer(r"`?([a-z][a-z-]*)`? \(([^()]*)\)", description or "")}


@lru_cache(maxsize=1)
def source_meanings() -> dict[str, str]:
    return _listed(SourceSays.model_fields["kind"].description)


@lru_cache(maxsize=1)
def tier_meanings() -> dict[str, str]:
    return _listed(Check.model_fields["tier"].description)


@dataclass(frozen=True)
class Mark:
    """How a row marks the discrepancies its filed words overlap: its flag, the label before their links in its
    fold, and the flag's meaning in the key."""

    flag: str
    label: str
    meaning: str


#: A discrepancy where the source says something else than the filed words.
OTHERWISE = Mark(
    "≠ source",
    "≠ The source says otherwise",
    "The seed's words here differ from what its source says: the fold names the discrepancy.",
)

#: How a row marks its discrepancies, by what its source says of it (``SourceSays.kind``), where not ``OTHERWISE``:
#: a source that is silent on the filed words does not say otherwise.
MARKS = {
    "not-in-source": Mark(
        "∅ source",
        "∅ Not in the source",
        "The seed's words here are ones its source does not state: the fold names the discrepancy.",
    ),
}


@dataclass(frozen=True)
class Shown:
    """What a page's rows show beyond their verdicts: the reasons they give, the registrations of their deciding
    expectations, the transfers of their pairs with a paper's number, and the discrepancy flags they carry."""

    reasons: list[Status]
    registrations: list[Status]
    pairs: list[Status]
    flags: list[Mark] = field(default_factory=list)


def key(
    claim: Status, freshness: Status, closure: Status, *, verdicts: list[str], sources: list[str], tiers: list[str], shown: Shown
) -> Key:
    """The key of a page whose rows show the verdicts ``verdicts``, the source stances ``sources``, what ``shown``
    lists, and whose checks have the tiers ``tiers`` (each in the page's order, repeats allowed), under the claim's own
    three chips. Every word a row can give is defined here."""
    seen_s = list(dict.fromkeys(s for s in sources if s))
    seen_t = list(dict.fromkeys(tiers))

    def chips(statuses: list[Status]) -> list[Term]:
        return [Term(s.name, s.meaning, s) for s in dict.fromkeys(statuses)]

    sections = [
        (
            "The claim",
            [Term(claim.name, claim.meaning, claim), Term(f"freshness: {freshness.name}", freshness.meaning, freshness)],
        ),
        ("Our verdict", chips([vocabulary.ASSERTION[v] for v in verdicts if v in vocabulary.ASSERTION])),
        ("Why", chips(shown.reasons)),
        ("When it was fixed", chips(shown.registrations)),
        ("Beside the paper's", chips(shown.pairs)),
        (
            "The source",
            [Term(SOURCE_WORDS.get(s, s), _sentence(source_meanings().get(s, "")), plain=True) for s in seen_s]
            + [Term(m.flag, m.meaning) for m in dict.fromkeys(shown.flags)],
        ),
        ("Evidence tier", [Term(f"tier: {t}", _sentence(tier_meanings().get(t, ""))) for t in seen_t]),
        ("Closure", [Term(f"closure: {closure.name}", closure.meaning, closure)]),
    ]
    return Key([(title, terms) for title, terms in sections if terms])


def _sentence(text: str) -> str:
    return (text[:1].upper() + text[1:] + ".") if text else ""


def facets(headings: list[tuple[str, str]], verdicts: set[str], devices: list[str], tiers: list[str]) -> Facets:
    """The filters of an assertions table: each verdict of ``headings`` (group, heading) that a row has on some
    device, each declared device and each evidence tier present."""
    return Facets([(g, h) for g, h in headings if g in verdicts], [(d, d) for d in devices], [(t, t) for t in tiers], headings)
