"""The pure generator: records and ledger in, pages and downloads out, as ``Output``.

No MkDocs here: the plugin only hands these to MkDocs. The same records and ledger give the same
outputs, byte for byte (everything is iterated in sorted order; nothing reads the clock).

A claim's page is the one made per claim and the largest: ``Site.claim_pages`` names each with its title
and renders it only when asked (``Deferred.render``), from that claim's record and results alone, which
are let go after; the export (``Site.export``) is written a claim at a time. So a build holds one claim's
state at a time, and of the others only their ``views.Summary``. For a large knowledge base the pages
may be rendered ahead (``ahead``): forked processes, one per core, render them a chunk at a time into
files while MkDocs goes on, and each is read back when MkDocs comes to it.
"""

from __future__ import annotations

import io
import multiprocessing as mp
import os
import pickle
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial
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
        self.ahead: _Ahead | None = None

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

    def claim_pages(self, ahead: Path | None = None) -> list[Deferred]:
        """Each valid claim's page, by path and title, rendered when asked and its claim let go after. ``ahead``: a
        private folder where, from ``AHEAD_FROM`` claims on, forked processes render the pages before they are
        asked for (where the system forks and this process runs no other thread); ``close`` stops them."""
        cids = sorted(self.ix.summaries)
        fork = "fork" in mp.get_all_start_methods() and threading.active_count() == 1 and _cores() > 1
        render = self.page
        if ahead is not None and fork and len(cids) >= AHEAD_FROM:
            self.ahead = _Ahead(self, cids, ahead)
            render = self.ahead.page
        summaries = self.ix.summaries
        return [
            Deferred(record_doc(cid), visible_bidi(esc(f"{cid} {summaries[cid].title}")), partial(render, cid)) for cid in cids
        ]

    def page(self, cid: str) -> Output:
        """The claim's page, its record and results let go after."""
        try:
            return claim_page.page(self.ix, self.ix.claims[cid], self.options)
        finally:
            self.ix.states.release(cid)

    def close(self) -> None:
        if self.ahead is not None:
            self.ahead.pool.shutdown(cancel_futures=True)
            self.ahead = None


#: From this many claims on, their pages may be rendered ahead by forked processes (``Site.claim_pages``).
AHEAD_FROM = 2000
CHUNK = 200  # claim pages a process renders into one file


def _cores() -> int:
    return min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 8)


_FORKED: Site | None = None  # the site a forked process renders pages of: its parent's, as it was at the fork


def _render_chunk(cids: list[str], path: Path) -> Path:
    assert _FORKED is not None
    path.write_bytes(pickle.dumps({cid: _FORKED.page(cid) for cid in cids}, protocol=pickle.HIGHEST_PROTOCOL))
    return path


class _Ahead:
    """Claim pages rendered by forked processes into files of ``folder``, a chunk a file, read back in order.

    The files are this build's own, written and read by its processes in a folder only it knows; each is
    deleted once read, so at most one chunk of pages is held in memory here."""

    def __init__(self, site: Site, cids: list[str], folder: Path):
        global _FORKED
        _FORKED = site
        chunks = [cids[i : i + CHUNK] for i in range(0, len(cids), CHUNK)]
        self.chunk_of = {cid: n for n, chunk in enumerate(chunks) for cid in chunk}
        self.pool = ProcessPoolExecutor(_cores(), mp_context=mp.get_context("fork"))
        self.futures: list[Future[Path]] = [
            self.pool.submit(_render_chunk, chunk, folder / f"pages-{n}.pickle") for n, chunk in enumerate(chunks)
        ]
        self.held: tuple[int, dict[str, Output]] = (-1, {})

    def page(self, cid: str) -> Output:
        n = self.chunk_of[cid]
        if self.held[0] != n:
            path = self.futures[n].result()
            self.held = (n, pickle.loads(path.read_bytes()))
            path.unlink()
        return self.held[1].pop(cid)


class _Safe:
    """A text stream that writes ``markup.script_safe`` of what it is given."""

    def __init__(self, out: TextIO):
        self.out = out

    def write(self, text: str) -> int:
        return self.out.write(script_safe(text))
