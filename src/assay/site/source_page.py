"""A source's page: what it is, its BibTeX and ``citation_*`` tags, every passage its claims quote under one heading
each, the numbers and discrepancies its claims take from it, and its comparisons.

A passage's heading is its locator as the source's record gives it (``passages:``); each claim's quote is shown
as the words of the passage that holds it, once, with every claim that quotes it. A number or a discrepancy names
its place in its claim's own words and quotes nothing: it stands under the passage at that place, or, where no
passage is there, in a list of the other places, so that no passage appears under two differently worded headings.
"""

from __future__ import annotations

from dataclasses import dataclass

from assay import citation
from assay.model import Claim, Comparison, Discrepancy, Source
from assay.records.passages import holds, normalise
from assay.site import search
from assay.site.markup import anchor, record_doc
from assay.site.pages import Output, breadcrumb, source_links
from assay.site.template import render
from assay.site.views import SETTLED, Located, SiteIndex


@dataclass(frozen=True)
class Quoted:
    """Words of the source as its passage has them (or as a claim quotes them, where the record keeps no passage
    holding the quote), and the claims that quote them, in id order."""

    words: str
    claims: list[str]


@dataclass(frozen=True)
class Named:
    """A number or a discrepancy a claim takes from the source. ``elsewhere``: the claim gives its place in other
    words than the heading it stands under (or names more places); ``at``: then the anchor its claim's page links
    to, where no element above has it."""

    item: Located
    elsewhere: bool = False
    at: str | None = None


@dataclass(frozen=True)
class Passage:
    """A place in the source that claims quote: its anchor, its locator, its words, and what claims take from there;
    or, with no words quoted, a place no passage stands at, which claims name for a number or a discrepancy (its
    anchor as a claim gives it)."""

    slug: str
    locator: str
    quoted: list[Quoted]
    named: list[Named]


@dataclass(frozen=True)
class Found:
    """An assertion of a claim that files a sentence of the source, with its verdict (on the device its claim's
    verdicts are read on) and the anchor of its row on the claim's page."""

    claim: str
    assertion: str
    verdict: str  # a key of vocabulary.ASSERTION
    href: str  # docs-relative: claims/SOTA-361.md#assertion-composition-is-the-task


@dataclass(frozen=True)
class Takeaway:
    """A takeaway of the source with what we found: the assertions that file its words, what does not hold first,
    and the places where the source's own text says otherwise."""

    words: str
    found: list[Found]
    differs: list[tuple[str, Discrepancy]]  # (claim, a discrepancy it notes against the source for these words)

    @property
    def open(self) -> int:
        """How many of its assertions do not hold (``views.SETTLED``)."""
        return sum(f.verdict not in SETTLED for f in self.found)


@dataclass(frozen=True)
class ComparisonRow:
    source: str  # the other source
    title: str | None
    comparison: Comparison  # where, why, and the decision that governs it
    decision_known: bool
    inbound: bool  # the other source compares itself with this one


def page(ix: SiteIndex, source: Source) -> Output:
    here = record_doc(source.id)
    passages, places = _passages(ix, source)
    citing = sorted({p.claim for p in ix.cited_by.get(source.id, [])})
    comparisons = _comparisons(ix, source)
    toc = [
        (slug, title)
        for slug, title, on in (
            ("takeaways", "What we found", source.takeaways),
            ("claims", "Claims that cite it", citing),
            ("note", "Note", source.note),
            ("cited-passages", "Cited passages", passages or places),
            ("compared-against", "Compared against", comparisons),
            ("cite", "Cite it", True),
        )
        if on
    ]
    html = render(
        "source.html",
        here=here,
        s=source,
        trail=breadcrumb("sources", source.id),
        links=source_links(source),
        takeaways=takeaways(ix, source, citing),
        cited_year=citation.year(source),
        bibtex=citation.bibtex(source),
        csl=citation.csl_json([citation.csl(source)]),
        venue=citation.venue(source),
        posted=citation.first_posted(source),
        passages=passages,
        places=places,
        citing=[ix.summaries[c] for c in citing if c in ix.summaries],
        comparisons=comparisons,
        anthology=ix.anthology_title(source.anthology.number) if source.anthology else "",
    )
    meta = citation.highwire(source)
    return Output.page(here, f"{source.id} {source.title}", html, search=search.source(ix, source), toc=toc, meta=meta)


def takeaways(ix: SiteIndex, source: Source, citing: list[str]) -> list[Takeaway]:
    """Each takeaway with the assertions of the claims citing the source whose filed words it holds (a claim files
    a seed's sentences word for word), what does not hold first, and the discrepancies its claims note against the
    source for its words."""
    claims = [(cid, ix.kb.claims[cid]) for cid in citing if cid in ix.kb.claims and cid in ix.summaries]
    out = []
    for words in source.takeaways:
        text = normalise(words)
        found = [f for cid, claim in claims for f in _found(ix, cid, claim, text)]
        found.sort(key=lambda f: f.verdict in SETTLED)  # stable: what does not hold first, each in record order
        differs = [
            (cid, d)
            for cid, claim in claims
            for d in claim.discrepancies
            if d.source == source.id and holds(normalise(d.filed), text)
        ]
        out.append(Takeaway(words, found, differs))
    return out


def _found(ix: SiteIndex, cid: str, claim: Claim, text: str) -> list[Found]:
    verdicts = dict(ix.summaries[cid].verdicts)
    return [
        Found(cid, a.id, verdicts.get(a.id, "not-run"), f"{record_doc(cid)}#assertion-{a.id}")
        for a in claim.assertions
        if any(holds(normalise(f), text) for f in a.filed)
    ]


def _passages(ix: SiteIndex, source: Source) -> tuple[list[Passage], list[Passage]]:
    """One heading per place claims quote, in the order of the source's passages (places without one after, by
    anchor); the numbers and discrepancies claims take from the source under the heading of their place, or of the
    first place they name, else in the other places. The anchors are ``cited-`` and the slug of a locator as claims
    give it, which their pages link to: each is on the page once."""
    kept: dict[str, list[tuple[str, str, str]]] = {}  # slug -> (locator, words normalised, words) of its passages
    order: dict[str, int] = {}  # a heading's place: its first passage's in the record
    for i, p in enumerate(source.passages):
        kept.setdefault(anchor(p.locator), []).append((p.locator, normalise(p.exact), p.exact))
        order.setdefault(anchor(p.locator), i)
    heads: dict[str, tuple[str, dict[str, list[str]]]] = {}  # slug -> (locator, words -> claims)
    for cit in ix.cited_by.get(source.id, []):
        slug, quote = anchor(cit.locator), normalise(cit.quote)
        held = next((p for p in kept.get(slug, ()) if holds(quote, p[1])), None)
        locator, words = (held[0], held[2]) if held else (cit.locator, cit.quote)
        claims = heads.setdefault(slug, (locator, {}))[1].setdefault(words, [])
        if cit.claim not in claims:
            claims.append(cit.claim)
    named: dict[str, list[Named]] = {slug: [] for slug in heads}
    others: dict[str, tuple[str, list[Named]]] = {}
    linked = set(heads)  # anchors already on the page
    for item in ix.located.get(source.id, []):
        slug, first = anchor(item.locator), anchor(item.locator.split(";")[0])
        if slug in heads:
            named[slug].append(Named(item))
        elif first in heads:
            named[first].append(Named(item, True, None if slug in linked else slug))
            linked.add(slug)
        else:
            others.setdefault(slug, (item.locator, []))[1].append(Named(item))
            linked.add(slug)
    passages = [
        Passage(slug, locator, [Quoted(w, sorted(c)) for w, c in quoted.items()], named[slug])
        for slug, (locator, quoted) in sorted(heads.items(), key=lambda h: (order.get(h[0], len(order)), h[0]))
    ]
    return passages, [Passage(slug, locator, [], items) for slug, (locator, items) in sorted(others.items())]


def _comparisons(ix: SiteIndex, source: Source) -> list[ComparisonRow]:
    """The sources it compares itself with, then those that compare themselves with it (``inbound``)."""

    def row(other: str, c: Comparison, inbound: bool) -> ComparisonRow:
        return ComparisonRow(other, ix.titles.get(other), c, c.decision in ix.decisions, inbound)

    rows = [row(c.source, c, False) for c in source.compared_against]
    for b in ix.backlinks.get(source.id, []):
        comp = ix.comparisons.get((b.source, source.id)) if b.type == "compared_against" else None
        if comp is not None:
            rows.append(row(b.source, comp, True))
    return rows
