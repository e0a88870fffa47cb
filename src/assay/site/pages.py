"""The record pages other than a claim's and a source's: decision, anthology, tag, an invalid record, and the
index pages; and what every page kind shares (``Page``, the breadcrumb, record text as paragraphs,
citations as references).

Each function builds a small view and renders its template under ``templates/``; the claim page is
``claim_page``, a source's ``source_page``, a verifier's source ``code``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from assay.model import Claim, Decision, Source
from assay.site import search
from assay.site.markup import esc, paragraphs, record_doc, source_href, visible_bidi
from assay.site.search import boost  # by name: ``Output.page``'s parameter ``search`` hides the module
from assay.site.template import render
from assay.site.views import ClaimView, SiteIndex
from assay.vocabulary import Status

#: The index page of each folder of generated pages that has one (claims are listed on the dashboard; code has none).
FOLDERS = {
    "sources": ("sources/index.md", "Sources"),
    "decisions": ("decisions/index.md", "Decisions"),
    "anthologies": ("anthologies/index.md", "Anthologies"),
    "tags": ("tags/index.md", "Tags"),
}


@dataclass(frozen=True)
class Output:
    """A file of the built site, docs-relative: a page (its HTML body, title, place in the navigation, search
    document and table of contents) or a download (``title`` None)."""

    path: str
    content: str | bytes
    title: str | None = None  # set for pages, HTML-escaped: the theme inserts it unescaped
    in_nav: bool = False
    search: str | None = None  # a page's search document, when the index should not parse its HTML
    toc: tuple[tuple[str, str], ...] = ()  # a page's table of contents: (anchor, title) of each section
    search_boost: float | None = None  # its weight in the search index, when not the default (``search.boost``)
    meta: tuple[tuple[str, str], ...] = ()  # <meta name content> pairs for the page's head (plain text: escaped there)
    search_words: str | None = None  # words its own search entry weighs as a title's (``search.STATEMENT``)

    @classmethod
    def page(
        cls,
        path: str,
        title: str,
        html: str,
        in_nav: bool = False,
        search: str | None = None,
        toc: Iterable[tuple[str, str]] = (),
        meta: Iterable[tuple[str, str]] = (),
        search_words: str | None = None,
    ) -> Output:
        """A page titled ``title`` (plain text: escaped here) with the body ``html``. A bidirectional control from
        a record (``assay check`` reports it) is shown as its code point, so no text shows in another order."""
        html, title = visible_bidi(html), visible_bidi(esc(title))
        meta = tuple((name, visible_bidi(content)) for name, content in meta)
        words = search_words and visible_bidi(search_words)
        return cls(path, html, title, in_nav, search and visible_bidi(search), tuple(toc), boost(path), meta, words)


@dataclass(frozen=True)
class Options:
    """Choices of the site that are not in the records."""

    edit_url: str | None = None  # e.g. "https://github.com/org/kb/edit/main/{path}" ({line} optional)
    depth: int = 2  # the deepest neighbourhood drawn on a claim page; the graph page goes deeper


def breadcrumb(folder: str, current: str) -> list[tuple[str | None, str]]:
    """Dashboard › the folder's index (where there is one) › this page."""
    trail: list[tuple[str | None, str]] = [("index.md", "Dashboard")]
    if FOLDERS.get(folder):
        trail.append(FOLDERS[folder])
    return trail + [(None, current)]


@dataclass(frozen=True)
class Ref:
    """A claim's citation as a reference: its number, the source, where in it, the words."""

    n: int
    source: str
    title: str | None
    locator: str
    quote: str
    note: str | None
    target: str  # docs-relative: the source page's passage, or the record id when the source is missing
    links: list[tuple[str, str]]  # (url, text): arXiv, DOI, web, code
    line: int


def source_refs(ix: SiteIndex, claim: Claim, numbers: Iterable[int], view: ClaimView) -> list[Ref]:
    out = []
    for n in numbers:
        if not 1 <= n <= len(claim.citations):
            continue
        cit = claim.citations[n - 1]
        source = ix.sources.get(cit.source)
        line, _ = view.loaded.where(("citations", n - 1))
        target = source_href(cit.source, cit.locator) if source else ""
        out.append(
            Ref(
                n,
                cit.source,
                source.title if source else None,
                cit.locator,
                cit.quote,
                cit.note,
                target,
                source_links(source),
                line,
            )
        )
    return out


def source_links(source: Source | None) -> list[tuple[str, str]]:
    if source is None:
        return []
    ids, out = source.identifiers, []
    if ids.arxiv:
        out.append((f"https://arxiv.org/abs/{ids.arxiv}", f"arXiv:{ids.arxiv}"))
    if ids.doi:
        out.append((f"https://doi.org/{ids.doi}", f"doi:{ids.doi}"))
    if ids.url:
        out.append((ids.url, "web"))
    if ids.code:
        out.append((ids.code, "code"))
    return out


# --- decisions, anthologies, tags, indexes -------------------------------------------------------


def decision_page(ix: SiteIndex, d: Decision) -> Output:
    here = record_doc(d.id)
    governed = sorted(ix.governs.get(d.id, []))
    sections = [(slug, slug.capitalize(), paragraphs(getattr(d, slug))) for slug in ("context", "decision", "consequences")]
    html = render("decision.html", here=here, d=d, trail=breadcrumb("decisions", d.id), sections=sections, governed=governed)
    toc = [(slug, title) for slug, title, _ in sections] + ([("governs", "Links it governs")] if governed else [])
    return Output.page(here, f"{d.id} {d.title}", html, toc=toc)


@dataclass(frozen=True)
class Cell:
    """A cell of a listing: text, a link to a page, or a status chip."""

    text: str = ""
    target: str | None = None
    status: Status | None = None


def _listing(
    here: str,
    title: str,
    head: list[str],
    rows: list[list[Cell]],
    intro: list[Cell] | None = None,
    trail: list[tuple[str | None, str]] | None = None,
) -> str:
    return render("listing.html", here=here, title=title, head=head, rows=rows, intro=intro or [], trail=trail)


def _index(folder: str, head: list[str], rows: list[list[Cell]], intro: list[Cell] | None = None, **page: str) -> Output:
    """The index page of a folder of generated pages (``FOLDERS``): the listing of its ``rows``, in the navigation."""
    here, title = FOLDERS[folder]
    return Output.page(here, title, _listing(here, title, head, rows, intro), True, **page)


def _record(rid: str) -> Cell:
    return Cell(rid, record_doc(rid))


def decisions_index(ix: SiteIndex) -> Output:
    rows = [[_record(d.id), Cell(d.title), Cell(d.status), Cell(d.date)] for _, d in sorted(ix.decisions.items())]
    return _index("decisions", ["Id", "Decision", "Status", "Date"], rows)


def sources_index(ix: SiteIndex) -> Output:
    rows = [
        [
            _record(s.id),
            Cell(s.title),
            Cell(", ".join(s.authors[:3]) + (" et al." if len(s.authors) > 3 else "")),
            Cell(str(s.year)),
            Cell(str(len({p.claim for p in ix.cited_by.get(s.id, [])}))),
        ]
        for _, s in sorted(ix.sources.items())
    ]
    intro = [
        Cell("Download: "),
        Cell("BibTeX of every source", "assay.bib"),
        Cell(" · "),
        Cell("the knowledge base as JSON", "assay.json"),
    ]
    return _index(
        "sources",
        ["Id", "Title", "Authors", "Year", "Claims"],
        rows,
        intro,
        search=search.listing(f"{len(rows)} sources, with BibTeX and JSON downloads"),
    )


def anthology_name(ix: SiteIndex, number: int) -> str:
    """``Anthology 304: Self-supervised learning`` when a source names it, else ``Anthology 304``."""
    title = ix.anthology_title(number)
    return f"Anthology {number}: {title}" if title else f"Anthology {number}"


def anthology_pages(ix: SiteIndex) -> list[Output]:
    pages, rows = [], []
    for number in sorted(ix.anthologies):
        here, name = f"anthologies/{number}.md", anthology_name(ix, number)
        units = [
            [Cell(s.anthology.unit if s.anthology else ""), _record(s.id), Cell(s.title), Cell(str(s.year))]
            for s in ix.anthologies[number]
        ]
        pages.append(
            Output.page(
                here,
                name,
                _listing(here, name, ["Unit", "Source", "Title", "Year"], units, trail=breadcrumb("anthologies", name)),
            )
        )
        rows.append([Cell(str(number), here), Cell(ix.anthology_title(number) or "—"), Cell(str(len(units)))])
    pages.append(_index("anthologies", ["Number", "Title", "Units"], rows))
    return pages


def tag_pages(ix: SiteIndex) -> list[Output]:
    pages, rows = [], []
    for tag in sorted(ix.tags):
        here = f"tags/{tag}.md"
        cells = [
            [
                _record(rid),
                Cell(ix.titles.get(rid, rid)),
                Cell(status=ix.summaries[rid].status_of_claim) if rid in ix.summaries else Cell(),
            ]
            for rid in ix.tags[tag]
        ]
        pages.append(
            Output.page(
                here,
                f"Tag: {tag}",
                _listing(here, f"Tag: {tag}", ["Record", "Title", "Status"], cells, trail=breadcrumb("tags", tag)),
                search=search.listing(f"{len(cells)} records tagged {tag}"),
            )
        )
        rows.append([Cell(tag, here), Cell(str(len(cells)))])
    pages.append(_index("tags", ["Tag", "Records"], rows))
    return pages


def invalid_page(loaded) -> Output:
    """A page for a record that does not validate, so links to it still land somewhere."""
    here = record_doc(loaded.id)
    html = render(
        "invalid.html",
        here=here,
        loaded=loaded,
        trail=breadcrumb(here.split("/")[0], loaded.id),
        diagnostics=[d.render() for d in loaded.diagnostics],
    )
    return Output.page(here, f"{loaded.id} (invalid)", html)
