"""The pure generator: records and ledger in, pages and downloads out, as ``Output``.

No MkDocs here: the plugin only hands these to MkDocs. The same records and ledger give the same
outputs, byte for byte (everything is iterated in sorted order; nothing reads the clock).

A claim's page is the one made per claim and the largest: ``Site.claim_pages`` names each with its title
and renders it only when asked (``Deferred.render``), from that claim's record and results alone, which
are let go after; the export (``Site.export``) is written a claim at a time. So a build holds one claim's
state at a time, and of the others only their ``views.Summary``.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from assay.export import bibtex_all, csl_all, write_json
from assay.site import claim_page, code, dashboard, explorer, pages, reference, source_page
from assay.site.markup import VOCABULARIES, colour_css, esc, icon_css, page_url, record_doc, script_safe, visible_bidi
from assay.site.pages import Options, Output
from assay.site.views import SiteIndex, index


def generate(root: Path, options: Options | None = None) -> list[Output]:
    """Every generated page and file for the knowledge base under ``root``, sorted by path."""
    site = Site(root, options)
    text = io.StringIO()
    site.export(text)
    out = [*site.outputs(), Output("assay.json", text.getvalue()), *(d.render() for d in site.claim_pages())]
    return sorted(out, key=lambda o: o.path)


@dataclass(frozen=True)
class Deferred:
    """A page known by its path and title, rendered when asked."""

    path: str
    title: str  # as ``Output.title``: HTML-escaped
    render: Callable[[], Output]


class Site:
    """The site of the knowledge base under ``root``: its index computed once, its outputs made from it."""

    def __init__(self, root: Path, options: Options | None = None):
        self.options = options or Options()
        self.ix: SiteIndex = index(Path(root))

    def outputs(self) -> list[Output]:
        """Every page and file but the claim pages and the export, in no set order."""
        ix = self.ix
        out = [dashboard.page(ix), explorer.page(ix)]
        out += [Output("graph.json", explorer.json_download(ix)), Output("graph-data.js", explorer.data_script(ix))]
        out += [reference.records_page(), reference.diagnostics_page()]
        out += [source_page.page(ix, s) for s in ix.sources.values()]
        valid = set(ix.summaries) | set(ix.sources) | set(ix.decisions)
        out += [pages.sources_index(ix), pages.decisions_index(ix)]
        out += [pages.decision_page(ix, d) for d in ix.decisions.values()]
        out += pages.anthology_pages(ix) + pages.tag_pages(ix)
        out += [
            pages.invalid_page(f)
            for f in ix.by_id.values()
            if f.record is None and f.id not in valid and pages.record_doc(f.id) != "index.md"
        ]
        modules = sorted({m for s in ix.summaries.values() for m in s.modules})
        root = ix.kb.root
        out += [code.record_listing(root, s.path, cid, page_url(record_doc(cid))) for cid, s in ix.summaries.items()]
        out += [code.code_page(root, m) for m in modules]
        icons = [st.icon for table in VOCABULARIES.values() for st in table.values()]
        colours = [st.colour for table in VOCABULARIES.values() for st in table.values()]
        out += [
            Output("assets/assay-icons.css", icon_css(icons) + colour_css(colours)),
            Output("assay.bib", bibtex_all(ix.kb)),
            Output("assay.csl.json", csl_all(ix.kb)),
        ]
        return out + [Output(path, svg) for path, svg in ix.figures]

    def export(self, out: TextIO) -> None:
        """``assay.json``: every record with its status and history, as ``assay export json`` writes it (a claim at
        a time), safe in a page that sniffs it as HTML (``markup.script_safe``)."""
        write_json(self.ix.kb, self.ix.states, _Safe(out))

    def claim_pages(self) -> list[Deferred]:
        """Each valid claim's page, by path and title, rendered when asked and its claim let go after."""
        return [
            Deferred(record_doc(cid), visible_bidi(esc(f"{cid} {s.title}")), self._page(cid))
            for cid, s in sorted(self.ix.summaries.items())
        ]

    def _page(self, cid: str) -> Callable[[], Output]:
        def render() -> Output:
            try:
                return claim_page.page(self.ix, self.ix.claims[cid], self.options)
            finally:
                self.ix.states.release(cid)

        return render


class _Safe:
    """A text stream that writes ``markup.script_safe`` of what it is given."""

    def __init__(self, out: TextIO):
        self.out = out

    def write(self, text: str) -> int:
        return self.out.write(script_safe(text))
