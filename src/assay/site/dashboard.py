"""The home page: counts by status, every claim in one filterable table, and the legend."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from assay import vocabulary
from assay.site import search
from assay.site.markup import plural
from assay.site.pages import Output
from assay.site.template import render
from assay.site.views import TIER_ORDER, SiteIndex
from assay.vocabulary import Status

HERE = "index.md"


@dataclass(frozen=True)
class Row:
    id: str
    title: str
    status: Status
    freshness: Status
    tags: str
    sources: str
    tiers: str
    tier_text: str
    devices: str
    last_run: str
    share: str = ""  # "11 / 27": the assertions supported on the first device that ran, beside a partial status


def page(ix: SiteIndex) -> Output:
    claims = ix.summaries
    counts = Counter(v.status for v in claims.values())
    summary = f"{plural(len(claims), 'claim')}, {plural(len(ix.sources), 'source')}, {plural(len(ix.decisions), 'decision')}."
    sources = sorted({s for v in claims.values() for s in v.sources})
    filters = [
        ("status", "Status", list(vocabulary.CLAIM)),
        ("tag", "Tag", sorted(ix.tags)),
        ("source", "Source", sources),
        ("tier", "Tier", list(TIER_ORDER)),
    ]
    rows = [
        Row(
            cid,
            v.title,
            v.status_of_claim,
            vocabulary.FRESHNESS[v.freshness],
            " ".join(v.tags),
            " ".join(v.sources),
            " ".join(v.tiers),
            ", ".join(v.tiers) or "—",
            ", ".join(v.devices_run) or "—",
            v.last_run[:10] or "—",
            v.share,
        )
        for cid, v in sorted(claims.items())
    ]
    pairs = Counter(pair for v in claims.values() for pair in v.pairs)
    devices = sorted({d for d, _ in pairs})
    results = [(d, pairs[(d, False)], pairs[(d, False)] + pairs[(d, True)]) for d in devices]
    fixed = Counter(kind for v in claims.values() for kind in v.registration)
    html = render(
        "dashboard.html",
        here=HERE,
        counts_line=summary,
        filters=filters,
        rows=rows,
        tiles=[(s, counts.get(name, 0)) for name, s in vocabulary.CLAIM.items()],
        results=results,
        registration=[(s, fixed[name]) for name, s in vocabulary.REGISTRATION.items()] if fixed else [],
    )
    return Output.page(HERE, "Dashboard", html, True, search=search.listing(summary[:-1] + ", by status."))
