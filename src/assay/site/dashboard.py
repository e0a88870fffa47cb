"""The home page: counts by status, every claim in one filterable table, and the legend."""

from __future__ import annotations

from collections import Counter

from assay import status as vocab
from assay.site import search
from assay.site.markup import chip, esc, legend, link, record_doc
from assay.site.pages import Page
from assay.site.views import TIER_ORDER, SiteIndex

HERE = "index.md"


def page(ix: SiteIndex) -> Page:
    counts = Counter(v.state.status for v in ix.claims.values())
    tiles = "".join(
        f'<button type="button" class="assay-count-tile" data-filter-status="{esc(name)}" style="--assay-c:{s.colour}" '
        f'title="{esc(s.meaning)}"><span class="assay-count-n">{counts.get(name, 0)}</span>{chip(s)}</button>'
        for name, s in vocab.CLAIM.items())
    body = [
        "<h1>Claims</h1>",
        f'<p>{len(ix.claims)} claims, {len(ix.sources)} sources, {len(ix.decisions)} decisions. '
        f'{link(HERE, "graph.md", "Graph")} · {link(HERE, "assay.json", "JSON")} · {link(HERE, "assay.bib", "BibTeX")}</p>',
        f'<div class="assay-counts">{tiles}</div>',
        legend("Claim", "Freshness"),
        _filters(ix),
        _table(ix),
    ]
    summary = f"{len(ix.claims)} claims, {len(ix.sources)} sources, {len(ix.decisions)} decisions, by status."
    return Page(HERE, "Dashboard", "".join(body), True, search=search.listing(summary))


def _select(name: str, label: str, values: list[tuple[str, str]]) -> str:
    options = "".join(f'<option value="{esc(v)}">{esc(text)}</option>' for v, text in values)
    return (f'<label class="assay-filter">{esc(label)} <select data-filter="{esc(name)}">'
            f'<option value="">any</option>{options}</select></label>')


def _filters(ix: SiteIndex) -> str:
    sources = sorted({s for v in ix.claims.values() for s in v.sources})
    return ('<form class="assay-filters" id="assay-filters">'
            + _select("status", "Status", [(n, n) for n in vocab.CLAIM])
            + _select("tag", "Tag", [(t, t) for t in sorted(ix.tags)])
            + _select("source", "Source", [(s, s) for s in sources])
            + _select("tier", "Tier", [(t, t) for t in TIER_ORDER])
            + '<label class="assay-filter">Text <input type="search" data-filter="text" placeholder="id or title"></label>'
            + '<output class="assay-shown" id="assay-shown"></output></form>')


def _table(ix: SiteIndex) -> str:
    rows = []
    for cid, v in sorted(ix.claims.items()):
        data = (f'data-status="{esc(v.state.status)}" data-tag=" {esc(" ".join(v.claim.tags))} " '
                f'data-source=" {esc(" ".join(v.sources))} " data-tier=" {esc(" ".join(v.tiers))} "')
        rows.append(
            f"<tr {data}><td>{link(HERE, record_doc(cid), cid)}</td><td>{esc(v.claim.title)}</td>"
            f"<td>{chip(vocab.CLAIM[v.state.status], with_icon=False)}</td><td>{esc(', '.join(v.tiers) or '—')}</td>"
            f"<td>{esc(', '.join(v.devices_run) or '—')}</td>"
            f"<td>{chip(vocab.FRESHNESS[v.freshness], with_icon=False)}</td><td>{esc(v.last_run[:10] or '—')}</td></tr>")
    head = "".join(f"<th>{h}</th>" for h in ("Claim", "Title", "Status", "Tier", "Devices run", "Freshness", "Last run"))
    return (f'<div class="assay-table-wrap assay-claims"><table id="assay-claims"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')
