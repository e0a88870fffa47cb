"""The pure generator: records and ledger in, pages and downloads out, as a list of ``Output``.

No MkDocs here: the plugin only hands these to MkDocs. The same records and ledger give the same
outputs, byte for byte (everything is iterated in sorted order; nothing reads the clock).
"""

from __future__ import annotations

from pathlib import Path

from assay.export import as_json, bibtex_all, csl_all
from assay.ledger.store import figure_bytes
from assay.site import claim_page, code, dashboard, explorer, pages, reference, source_page
from assay.site.markup import VOCABULARIES, colour_css, icon_css, page_url, record_doc, script_json
from assay.site.pages import Options, Output
from assay.site.views import SiteIndex, index


def generate(root: Path, options: Options | None = None) -> list[Output]:
    """Every generated page and file for the knowledge base under ``root``, sorted by path."""
    options = options or Options()
    ix = index(Path(root))
    out = _pages(ix, options) + _files(ix)
    return sorted(out, key=lambda o: o.path)


def _pages(ix: SiteIndex, options: Options) -> list[Output]:
    out = [
        dashboard.page(ix),
        explorer.page(ix),
        reference.records_page(),
        reference.diagnostics_page(),
        pages.sources_index(ix),
        pages.decisions_index(ix),
    ]
    out += [claim_page.page(ix, view, options) for view in ix.claims.values()]
    out += [code.record_listing(ix.kb.root, view.loaded.path, cid, page_url(record_doc(cid))) for cid, view in ix.claims.items()]
    out += [source_page.page(ix, s) for s in ix.sources.values()]
    out += [pages.decision_page(ix, d) for d in ix.decisions.values()]
    out += pages.anthology_pages(ix) + pages.tag_pages(ix)
    modules = sorted({c.verifier.split("::")[0] for v in ix.claims.values() for c in v.claim.checks})
    out += [code.code_page(ix.kb.root, m) for m in modules]
    valid = set(ix.claims) | set(ix.sources) | set(ix.decisions)
    out += [
        pages.invalid_page(f)
        for f in ix.by_id.values()
        if f.record is None and f.id not in valid and pages.record_doc(f.id) != "index.md"
    ]
    return out


def _files(ix: SiteIndex) -> list[Output]:
    everything = script_json(as_json(ix.kb, ix.states, ix.past), indent=1) + "\n"
    icons = [st.icon for table in VOCABULARIES.values() for st in table.values()]
    colours = [st.colour for table in VOCABULARIES.values() for st in table.values()]
    out = [
        Output("assets/assay-icons.css", icon_css(icons) + colour_css(colours)),
        Output("assay.json", everything),
        Output("assay.bib", bibtex_all(ix.kb)),
        Output("assay.csl.json", csl_all(ix.kb)),
        Output("graph.json", explorer.json_download(ix)),
        Output("graph-data.js", explorer.data_script(ix)),
    ]
    for view in ix.claims.values():
        for state in view.results:
            for fig in state.result.figures:
                svg = figure_bytes(ix.kb.root, state.result, fig)  # None when missing or not the one the result drew
                if svg is not None:
                    out.append(Output(f"figures/{view.claim.id}/{fig.file}", svg))
    return out
