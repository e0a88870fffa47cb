"""The home page: counts by status, every claim in one filterable table, and the legend."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from assay import vocabulary
from assay.site import search
from assay.site.markup import plural
from assay.site.pages import Output
from assay.site.template import render
from assay.site.views import TIER_ORDER, ClaimView, SiteIndex
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
    counts = Counter(v.state.status for v in ix.claims.values())
    summary = f"{plural(len(ix.claims), 'claim')}, {plural(len(ix.sources), 'source')}, {plural(len(ix.decisions), 'decision')}."
    sources = sorted({s for v in ix.claims.values() for s in v.sources})
    filters = [
        ("status", "Status", list(vocabulary.CLAIM)),
        ("tag", "Tag", sorted(ix.tags)),
        ("source", "Source", sources),
        ("tier", "Tier", list(TIER_ORDER)),
    ]
    rows = [
        Row(
            cid,
            v.claim.title,
            vocabulary.CLAIM[v.state.status],
            vocabulary.FRESHNESS[v.freshness],
            " ".join(v.claim.tags),
            " ".join(v.sources),
            " ".join(v.tiers),
            ", ".join(v.tiers) or "—",
            ", ".join(v.devices_run) or "—",
            v.last_run[:10] or "—",
            _share(v),
        )
        for cid, v in sorted(ix.claims.items())
    ]
    pairs = Counter((s.device, s.status == "not-run") for v in ix.claims.values() for s in v.state.checks)
    devices = sorted({d for d, _ in pairs})
    results = [(d, pairs[(d, False)], pairs[(d, False)] + pairs[(d, True)]) for d in devices]
    fixed = Counter(r.kind for v in ix.claims.values() for r in _registration(v))
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


def _share(v: ClaimView) -> str:
    """How much of a partly verified claim holds: its supported assertions of all, on the first device that ran."""
    if v.state.status != "partly-verified" or not v.state.assertions or not v.devices_run:
        return ""
    device = v.devices_run[0]
    held = sum(a.by_device.get(device) == "supported" for a in v.state.assertions)
    return f"{held} / {len(v.state.assertions)}"


def _registration(v: ClaimView) -> list:
    """Each expectation's registration, once per check (every device's state carries the same)."""
    first: dict[str, tuple] = {}
    for s in v.state.checks:
        if s.registration and s.check not in first:
            first[s.check] = s.registration
    return [r for regs in first.values() for r in regs]
