"""The pure generator: records and ledger in, pages and downloads out, as ``Output``.

No MkDocs here: the plugin only hands these to MkDocs. The same records and ledger give the same
outputs, byte for byte (everything is iterated in sorted order; nothing reads the clock).

A claim's page is the one made per claim and the largest: ``Site.claim_pages`` names each with its title
and renders it only when asked (``Deferred.render``), from that claim's record and results alone, which
are let go after; the export (``Site.export``) is written a claim at a time. So a build holds one claim's
state at a time, and of the others only their ``views.Summary``. For a large knowledge base the pages
and the export may be made ahead (``Site.ahead``): forked processes (``assay.corpus``) write them into files
while MkDocs makes the other pages, a run of claim pages a file, each read back when MkDocs comes to it.
"""

from __future__ import annotations

import io
import os
import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TextIO

from assay import corpus
from assay.export import bibtex_all, csl_all, write_json
from assay.site import claim_page, code, dashboard, explorer, figure_page, pages, reference, source_page
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
        self.rendered: _Rendered | None = None  # the claim pages made ahead (``ahead``)

    def outputs(self) -> list[Output]:
        """Every page and file but the claim pages and the export, in no set order."""
        ix = self.ix
        out = [dashboard.page(ix), explorer.page()]
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
        statuses = [st for table in VOCABULARIES.values() for st in table.values()]
        out += [
            Output("assets/assay-icons.css", icon_css([st.icon for st in statuses]) + colour_css([st.colour for st in statuses])),
            Output("assay.bib", bibtex_all(ix.kb)),
            Output("assay.csl.json", csl_all(ix.kb)),
        ]
        return out + [o for f in ix.figures for o in figure_page.outputs(f)]

    def export(self, out: TextIO) -> None:
        """``assay.json``: every record with its status and history, as ``assay export json`` writes it (a claim at
        a time), safe in a page that sniffs it as HTML (``markup.script_safe``)."""
        write_json(self.ix.kb, self.ix.states, _Safe(out))

    def ahead(self, folder: Path) -> bool:
        """Where the claims are ``corpus.large`` and processes may be forked: start rendering the claim pages into the
        private ``folder`` (``corpus.ahead``: forked processes, a run of pages a file), and the export when it is asked
        for (``export_file``), while the caller goes on; ``close`` stops them. Whether they were started."""
        global _FORKED
        cids = sorted(self.ix.summaries)
        if self.rendered is None and corpus.large(len(cids)) and corpus.can_fork():
            _FORKED, self.rendered = self, _Rendered(partial(_render_run, folder), cids)
            corpus.ahead(self.rendered.rendering, cids)
        return self.rendered is not None

    def export_file(self, path: Path) -> Callable[[], Path]:
        """``export`` into the file ``path``, by one of the processes that render the claim pages where they were
        started (``corpus.ahead``; its cost: every claim's; call what this returns to wait for the file), else here
        and now."""
        if self.rendered is not None:
            cost = len(self.rendered.cids)
            corpus.ahead(_export_to, [str(path)], cost)
            return lambda: Path(corpus.map_all(_export_to, [str(path)], cost)[0])
        with path.open("w", encoding="utf-8") as out:
            self.export(out)
        return lambda: path

    def claim_pages(self) -> list[Deferred]:
        """Each valid claim's page, by path and title, rendered when asked (by a forked process ahead of that, where
        they were started), and its claim let go after."""
        render = self.page if self.rendered is None else self.rendered.page
        titles = sorted((cid, visible_bidi(esc(f"{cid} {s.title}"))) for cid, s in self.ix.summaries.items())
        return [Deferred(record_doc(cid), title, partial(render, cid)) for cid, title in titles]

    def page(self, cid: str) -> Output:
        """The claim's page, its record and results let go after."""
        with self.ix.states.using(cid):
            return claim_page.page(self.ix, self.ix.claims[cid], self.options)

    def let_go(self) -> None:
        """Where forked processes make the export and the claim pages (``ahead``), let this process's index go once
        the other outputs are made: they hold their own copy, and the build goes on without it."""
        if self.rendered is not None:
            self.ix = None  # type: ignore[assignment]
            corpus.give_back(collect=True)

    def close(self) -> None:
        if self.rendered is not None:
            corpus.settle()  # the pages' processes stopped, where no page was asked for
            self.rendered = None


_FORKED: Site | None = None  # the site a forked process renders pages of: its parent's, as it was at the fork


def _render_run(folder: Path, cids: Sequence[str]) -> list[str]:
    """The pages of a run of claims into one file of ``folder``: its path, once per claim."""
    assert _FORKED is not None
    path = folder / f"pages-{cids[0]}.pickle"
    path.write_bytes(pickle.dumps({cid: _FORKED.page(cid) for cid in cids}, protocol=pickle.HIGHEST_PROTOCOL))
    return [str(path)] * len(cids)


def _export_to(paths: Sequence[str]) -> list[str]:
    """The export into the one file at ``paths``: its path."""
    assert _FORKED is not None
    with open(paths[0], "w", encoding="utf-8") as out:
        _FORKED.export(out)
    return list(paths)


class _Rendered:
    """The claim pages rendered ahead (``corpus.map_all`` takes the files' paths): each file read when one of its pages
    is asked for and deleted, so that at most one run of pages is held in memory here."""

    def __init__(self, rendering: Callable[[Sequence[str]], list[str]], cids: list[str]):
        self.rendering, self.cids = rendering, cids
        self.files: dict[str, str] = {}
        self.held: tuple[str, dict[str, Output]] = ("", {})

    def page(self, cid: str) -> Output:
        if not self.files:
            self.files = dict(zip(self.cids, corpus.map_all(self.rendering, self.cids)))
        path = self.files[cid]
        if self.held[0] != path:
            self.held = ("", {})
            corpus.give_back()  # the pages of the run before, and the theme's output of each, given back to the system
            self.held = (path, pickle.loads(Path(path).read_bytes()))
            os.unlink(path)
        return self.held[1].pop(cid)


class _Safe:
    """A text stream that writes ``markup.script_safe`` of what it is given."""

    def __init__(self, out: TextIO):
        self.out = out

    def write(self, text: str) -> int:
        return self.out.write(script_safe(text))
