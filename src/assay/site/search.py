"""What the search index holds for a record page: its words under its section anchors, without the markup.

A claim page is mostly markup a reader never searches for (chips, tables, the neighbourhood SVG, the
YAML record); the search plugin would parse all of it on every page. The plugin hands it this small
document instead: the same headings and anchors as the page, so a hit still lands on its section, and
the text a reader looks a record up by (id, title, statement, the arXiv id of its sources).
"""

from __future__ import annotations

import json
import re

from assay.model import Claim, Source
from assay.site.markup import anchor, esc
from assay.site.views import ClaimView, SiteIndex


def _h(level: int, slug: str, title: str, texts: list[str]) -> str:
    """A heading with its paragraphs; nothing when there are no words under it (as the page omits it).

    The search plugin starts a section only at a heading with an id; the h1's becomes the page's own entry."""
    words = "".join(f"<p>{esc(t)}</p>" for t in texts if t)
    if not words and level > 1:
        return ""
    return f'<h{level} id="{esc(slug)}">{esc(title)}</h{level}>{words}'


def _identifiers(source: Source | None) -> str:
    """A source's identifiers as words the search finds: the index splits text only at spaces and hyphens,
    so ``arXiv:2002.05709v3`` is one word that a search for ``2002.05709`` does not reach. Each id also
    stands alone, the arXiv id with and without its version."""
    if source is None:
        return ""
    ids = source.identifiers
    words = []
    if ids.arxiv:
        bare = re.sub(r"v\d+$", "", ids.arxiv)
        words += [f"arXiv:{ids.arxiv}", ids.arxiv] + ([bare] if bare != ids.arxiv else [])
    if ids.doi:
        words += [f"doi:{ids.doi}", ids.doi]
    return " ".join(words)


#: Search weight of a page that lists records (a tag, an anthology, an index): below 1, so a record's own
#: page outranks the listing for the words of its title (the index weighs title words a thousandfold, and a
#: listing's short title, ``Tag: batch-norm``, would otherwise win on length alone).
LISTING_BOOST = 0.1
LISTINGS = ("tags/", "anthologies/", "sources/index.md", "decisions/index.md")


def boost(path: str) -> float | None:
    """The search weight of the generated page at ``path``, when it is not the default."""
    return LISTING_BOOST if path.startswith(LISTINGS) else None


#: The search field of a claim's own entry that holds the words of its statement, and its weight. The index weighs
#: a title word a thousand times a word of the text, so a statement left in the text barely counts: "layer norm"
#: found the claim titled "... the layer before it" before the one whose statement says layer norm avoids the leak.
#: Half a title's weight: an entry that holds every word searched for already gains on one that holds some (the
#: search's own boost), so the claim whose title or statement holds the words comes first, while a word of a title
#: still outweighs one of a longer statement (a record's id finds the record before a claim whose statement names it).
STATEMENT = "statement"
STATEMENT_BOOST = 500.0


def statement(c: Claim) -> str:
    """The words of a claim's statement, as its search entry's ``STATEMENT`` field holds them (escaped, as the
    index holds all text: the search shows no field as markup)."""
    return esc(" ".join(" ".join(t.split()) for t in (c.statement, c.refined or "") if t))


def with_statements(index: str, words: dict[str, str]) -> str:
    """The search index ``index`` (Material's ``search_index.json``) with the ``STATEMENT`` field declared and
    filled in each page's own entry (its location the page's URL, no anchor) from ``words``, URL to words."""
    data = json.loads(index)
    data["config"]["fields"][STATEMENT] = {"boost": STATEMENT_BOOST}
    for doc in data["docs"]:
        if doc["location"] in words:
            doc[STATEMENT] = words[doc["location"]]
    return json.dumps(data, separators=(",", ":"))


def claim(ix: SiteIndex, view: ClaimView, relations: list[tuple[str, str, str | None, str | None]]) -> str:
    """The claim's search document: title, status, statement, conditions, citations, checks, and its ``relations``
    as its page lists them (relation, record id, title, note)."""
    c, st = view.claim, view.state
    cited = []
    for cit in c.citations:
        source = ix.sources.get(cit.source)
        title = f"{cit.source}: {source.title}" if source else cit.source
        cited += [" · ".join(x for x in (title, cit.locator, _identifiers(source)) if x), cit.quote, cit.note or ""]
    checks = "".join(_h(3, f"check-{k.id}", k.id, [k.tests, k.verifier, k.known_failing or "", k.note or ""]) for k in c.checks)
    related = [f"{relation} {rid}: {title or ''}" for relation, rid, title, _ in relations]
    return "".join(
        [
            _h(
                1,
                anchor(c.id),
                f"{c.id} {c.title}",
                [f"{st.status} · {st.closure} · freshness: {view.freshness}", " ".join(c.tags)],
            ),
            _h(2, "statement", "Statement", [c.statement, c.refined or "", c.no_check_reason or ""]),
            _h(2, "conditions", "Conditions", list(c.conditions)),
            _h(2, "citations", "Citations", cited),
            f'<h2 id="checks">Checks</h2>{checks}' if checks else "",
            _h(2, "relations", "Relations", related),
            _h(
                2,
                "discrepancies",
                "Discrepancies",
                [f"{d.filed} {d.source} {d.locator}: {d.source_says}" for d in c.discrepancies],
            ),
        ]
    )


def source(ix: SiteIndex, s: Source) -> str:
    """The source's search document: bibliography, identifiers, takeaways, note, and the passages cited."""
    venue = ", ".join(str(x) for x in (s.venue, s.year) if x)
    passages = [f"{p.locator}: {p.quote} (cited by {p.claim})" for p in ix.cited_by.get(s.id, [])]
    return "".join(
        [
            _h(1, anchor(s.id), f"{s.id} {s.title}", [", ".join(s.authors), venue, _identifiers(s), " ".join(s.tags)]),
            _h(2, "takeaways", "Takeaways", list(s.takeaways)),
            _h(2, "note", "Note", [s.note or ""]),
            _h(2, "cited-passages", "Cited passages", passages),
        ]
    )


def listing(summary: str) -> str:
    """A listing page's search document (the dashboard, a tag): what it lists, not the rows, which the
    records' own pages already index; its entry takes the page's title."""
    return f"<p>{esc(summary)}</p>"
