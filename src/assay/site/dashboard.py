"""The home page: counts by status, every claim in one filterable table, and the legend."""

from __future__ import annotations

from collections import Counter

from assay import vocabulary
from assay.site import search
from assay.site.markup import plural
from assay.site.pages import Output
from assay.site.template import render
from assay.site.views import TIER_ORDER, SiteIndex

HERE = "index.md"


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
    pairs = Counter(pair for v in claims.values() for pair in v.pairs)
    devices = sorted({d for d, _ in pairs})
    results = [(d, pairs[(d, False)], pairs[(d, False)] + pairs[(d, True)]) for d in devices]
    fixed = Counter(kind for v in claims.values() for kind in v.registration)
    html = render(
        "dashboard.html",
        here=HERE,
        counts_line=summary,
        filters=filters,
        rows=sorted(claims.items()),
        tiles=[(s, counts.get(name, 0)) for name, s in vocabulary.CLAIM.items()],
        results=results,
        registration=[(s, fixed[name]) for name, s in vocabulary.REGISTRATION.items()] if fixed else [],
    )
    return Output.page(HERE, "Dashboard", html, True, search=search.listing(summary[:-1] + ", by status."))
