"""The rule that every citation quotes a passage of its source, at the locator it gives.

A quote equal to a passage at its locator is found from the digests of the records' outlines
(``assay.records.outline``), without reading a record; any other quote (a span of a passage, one that elides)
reads the claim and its source, once each, and is compared as ``assay.records.passages`` says. A source that keeps
no passages yet is named once, with the number of quotes left unchecked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import NamedTuple

from assay.diagnostics import Diagnostic
from assay.records.document import Loaded
from assay.records.knowledge_base import KnowledgeBase
from assay.records.passages import alike, closeness, difference, holds, normalise
from assay.records.placeholders import placeholders

#: Below this likeness (difflib's ratio) the closest passage is named, not its difference: it is another text.
UNLIKE = 0.6


class Held(NamedTuple):
    """A passage as it is compared: its locator and words normalised, and its locator as written."""

    locator: str
    exact: str
    shown: str


def diagnostics(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """A diagnostic for each citation whose quote is no passage of its source at its locator, and one for each cited
    source that keeps no passages."""
    kept = {sid: f.outline.passages for sid, f in kb.source_files.items()}
    unchecked: Counter[str] = Counter()
    read: dict[str, list[Held]] = {}  # the passages of the sources read so far
    for f in kb.claim_files.values():
        for n, (sid, locator, quote) in enumerate(f.outline.quotes):
            if sid not in kept:
                continue  # not a valid source: reported where it is named, or where it is
            if not kept[sid]:
                unchecked[sid] += 1
            elif (locator, quote) not in kept[sid]:
                yield from _citation(kb, f, n, read)
    for sid, count in sorted(unchecked.items()):
        yield kb.by_id[sid].diag(
            ("id",),
            "source-without-passages",
            f"{sid} keeps no passages, so {count} quote{'s' if count > 1 else ''} citing it "
            f"{'are' if count > 1 else 'is'} not checked against its words",
            "add under passages: each passage its claims quote (locator, exact, prefix, suffix), and read_from",
        )


def _citation(kb: KnowledgeBase, f: Loaded, n: int, read: dict[str, list[Held]]) -> Iterator[Diagnostic]:
    """The diagnostic of citation ``n`` of the claim in ``f``, if its quote is no passage of its source at its locator."""
    claim, cited = f.record, f.record.citations[n]
    if " ".join(cited.quote.split()) in placeholders().texts:
        return  # what assay new wrote: a placeholder diagnostic says so
    if cited.source not in read:
        source = kb.sources[cited.source]
        read[cited.source] = [Held(normalise(p.locator), normalise(p.exact), p.locator) for p in source.passages]
    held, quote, locator = read[cited.source], normalise(cited.quote), normalise(cited.locator)
    if any(p.locator == locator and holds(quote, p.exact) for p in held):
        return
    where = f"citation {n + 1} of {claim.id}"
    elsewhere = [p.shown for p in held if holds(quote, p.exact)]
    if elsewhere:
        yield f.diag(
            ("citations", n, "locator"),
            "locator-mismatch",
            f"{where}: the quote is {cited.source}'s passage at {elsewhere[0]!r}, not at {cited.locator!r}",
            "give the passage's locator, or correct the passage's if this one is right",
        )
        return
    closest = max(held, key=lambda p: (closeness(quote, p.exact), p.locator == locator))
    ratio, marks = difference(quote, closest.exact)
    nearest = f"its passage at {closest.shown!r} ({alike(ratio)})"
    yield f.diag(
        ("citations", n, "quote"),
        "quote-not-in-source",
        f"{where}: the quote is not a passage of {cited.source}; "
        + (f"the closest is {nearest}: {marks}" if ratio >= UNLIKE else f"none is like it (the closest is {nearest})"),
        "[-x-] is the source's, {+x+} the quote's; quote the source's words exactly (… marks an elision), "
        f"or add the passage to {cited.source}'s passages",
    )
