"""The filed words of a claim: its sentences, and where each assertion's spans lie in them.

A claim's text is its statement and its conditions. An assertion quotes exact spans of that text
(whitespace aside: YAML folds lines); together the spans must touch every sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assay.model import Claim

# a sentence ends at . ! or ? followed by space and a capital, a digit or an opening quote/bracket;
# "e.g." and "i.e." and "et al." do not end one; the end mark is looked back at first, as it fails at most places
# (the same matches, four times faster than with the abbreviations looked back at first)
_END = re.compile(r"(?<=[.!?])(?<!\be\.g)(?<!\bi\.e)(?<!\bal)(?<!\bvs)\s+(?=[A-Z0-9\"'(\[“])")


@dataclass(frozen=True)
class Sentence:
    """A sentence of the claim's text: which field it is in (``statement`` or ``conditions[i]``) and where."""

    field: str
    start: int
    end: int
    text: str


def normalise(text: str) -> str:
    return " ".join(text.split())


def fields(claim: Claim) -> dict[str, str]:
    """The claim's filed text by field, whitespace normalised."""
    out = {"statement": normalise(claim.statement)}
    out.update({f"conditions[{i}]": normalise(c) for i, c in enumerate(claim.conditions)})
    return out


def sentences(claim: Claim, text_by_field: dict[str, str] | None = None) -> list[Sentence]:
    """Every sentence of the statement and the conditions (``text_by_field``: ``fields(claim)``, if already made)."""
    out = []
    for name, text in (text_by_field or fields(claim)).items():
        start = 0
        for m in list(_END.finditer(text)) + [None]:
            end = m.start() if m else len(text)
            if text[start:end].strip():
                out.append(Sentence(name, start, end, text[start:end]))
            start = m.end() if m else end
    return out


def locate(claim: Claim, span: str, text_by_field: dict[str, str] | None = None) -> tuple[str, int, int] | None:
    """Where ``span`` lies in the claim's text (field, start, end), or None when it is not there verbatim
    (``text_by_field``: ``fields(claim)``, if already made)."""
    needle = normalise(span)
    for name, text in (text_by_field or fields(claim)).items():
        at = text.find(needle)
        if at >= 0 and needle:
            return name, at, at + len(needle)
    return None


def uncovered(claim: Claim) -> list[Sentence]:
    """The sentences no assertion's span touches."""
    text = fields(claim)
    placed = [where for a in claim.assertions for span in a.filed if (where := locate(claim, span, text))]
    return [s for s in sentences(claim, text) if not any(overlap(where, (s.field, s.start, s.end)) for where in placed)]


def overlap(a: tuple[str, int, int], b: tuple[str, int, int]) -> bool:
    """Whether two places in the claim's text, each (field, start, end), share a character."""
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2]
