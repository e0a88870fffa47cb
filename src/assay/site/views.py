"""The page model: records joined with their results, derived status and backlinks.

A ``Claim`` is what the YAML says; a ``ClaimView`` adds what the site shows beside it. ``SiteIndex``
is computed once per build and answers every "who points here" question in O(1).
"""

from __future__ import annotations

import time
import typing
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import networkx as nx

from assay.experiment import Tier
from assay.graph import build
from assay.ledger import history
from assay.ledger.registration import Registry
from assay.ledger.store import read_ledger
from assay.model import Claim, Comparison, Decision, Source
from assay.overview import claim_states
from assay.records.document import Loaded
from assay.records.knowledge_base import KnowledgeBase
from assay.site.markup import quantity
from assay.status import CheckState, ClaimState
from assay.timeline import versions

TIER_ORDER: tuple[str, ...] = typing.get_args(Tier)  # the model's order: analytic, toy, reduced, full


@dataclass(frozen=True)
class Backlink:
    """A typed link from another record to this one."""

    source: str
    type: str
    note: str | None = None


@dataclass(frozen=True)
class CitedPassage:
    """A claim's citation of a source: where in the source, and the exact words."""

    claim: str
    locator: str
    quote: str


@dataclass(frozen=True)
class Located:
    """Something a claim takes from a place in a source other than a quote: a number it reports there, or
    a discrepancy between the filed words and what the source says there."""

    claim: str
    locator: str
    kind: str  # "reported" or "discrepancy"
    what: str  # the reported number's description, or the filed words
    detail: str  # the number with its unit, or what the source says


@dataclass(frozen=True)
class Version:
    """One committed version of a check's ledger file on one device: a cell of the check's strip of verdicts."""

    commit: str  # the short commit id
    date: str  # the commit's date, YYYY-MM-DD (UTC)
    verdict: str  # the result's verdict then, or "removed" where the commit deleted the file


@dataclass
class ClaimView:
    """A claim with its state and what the dashboard and claim page derive from it."""

    claim: Claim
    state: ClaimState
    loaded: Loaded
    history: dict[str, dict[str, list[Version]]] = field(default_factory=dict)  # check -> device -> its versions

    @property
    def results(self) -> list[CheckState]:
        return [c for c in self.state.checks if c.result is not None]

    @property
    def freshness(self) -> str:
        if not self.results:
            return "none"
        return "stale" if any(c.stale for c in self.results) else "fresh"

    @property
    def tiers(self) -> list[str]:
        found = {c.tier for c in self.claim.checks}
        return [t for t in TIER_ORDER if t in found]

    @property
    def devices_run(self) -> list[str]:
        return sorted({c.device for c in self.results if c.status != "skipped"})

    @property
    def last_run(self) -> str:
        return max((c.result.finished for c in self.results if c.result), default="")

    @property
    def sources(self) -> list[str]:
        return sorted({c.source for c in self.claim.citations})


@dataclass
class SiteIndex:
    """Everything a page needs about the whole knowledge base."""

    kb: KnowledgeBase
    states: dict[str, ClaimState]
    graph: nx.MultiDiGraph
    claims: dict[str, ClaimView] = field(default_factory=dict)
    # the knowledge base's indices (its sources and decisions thaw each record when it is first looked at)
    sources: Mapping[str, Source] = field(default_factory=dict)
    decisions: Mapping[str, Decision] = field(default_factory=dict)
    by_id: dict[str, Loaded] = field(default_factory=dict)
    located: dict[str, list[Located]] = field(default_factory=lambda: defaultdict(list))  # source -> numbers and discrepancies
    backlinks: dict[str, list[Backlink]] = field(default_factory=lambda: defaultdict(list))
    cited_by: dict[str, list[CitedPassage]] = field(default_factory=lambda: defaultdict(list))
    tags: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    anthologies: dict[int, list[Source]] = field(default_factory=lambda: defaultdict(list))
    governs: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))
    comparisons: dict[tuple[str, str], Comparison] = field(default_factory=dict)  # (source, compared with) -> the link
    past: history.History | None = None  # the repository's history, read once per build (unavailable outside git)

    @cached_property
    def titles(self) -> dict[str, str]:
        return {rid: str(a.get("title", rid)) for rid, a in self.graph.nodes(data=True)}

    def anthology_title(self, number: int) -> str:
        titles = sorted(s.anthology.title for s in self.anthologies[number] if s.anthology and s.anthology.title)
        return titles[0] if titles else ""


def index(root: Path) -> SiteIndex:
    """Load the knowledge base under ``root`` with its ledger and compute the site's index of it."""
    from assay.records.knowledge_base import load

    kb = load(root)
    past = history.read(kb.root)  # once per build: the registration and every check's strip read it
    states = claim_states(kb, read_ledger(kb.root), Registry(kb.root, past))
    ix = SiteIndex(kb, states, build(kb, states), sources=kb.sources, decisions=kb.decisions, by_id=kb.by_id, past=past)
    by_id = ix.by_id
    for cid, claim in sorted(kb.claims.items()):
        timeline = {c.id: _versions(past, cid, c.id) for c in claim.checks} if past.available else {}
        ix.claims[cid] = ClaimView(claim, states[cid], by_id[cid], timeline)
        for rel in claim.relations:
            ix.backlinks[rel.target].append(Backlink(cid, rel.type, rel.note))
        for cit in claim.citations:
            ix.cited_by[cit.source].append(CitedPassage(cid, cit.locator, cit.quote))
        for r in claim.reported:
            value = quantity(r.value, r.unit, getattr(r, "bound", None))
            ix.located[r.source].append(Located(cid, r.locator, "reported", r.what, value))
        for d in claim.discrepancies:
            ix.located[d.source].append(Located(cid, d.locator, "discrepancy", d.filed, d.source_says))
    for rid, loaded in sorted(by_id.items()):
        for tag in getattr(loaded.record, "tags", []) or []:
            ix.tags[tag].append(rid)
    for sid, source in sorted(ix.sources.items()):
        if source.anthology:
            ix.anthologies[source.anthology.number].append(source)
        for comp in source.compared_against:
            ix.backlinks[comp.source].append(Backlink(sid, "compared_against", comp.reason))
            ix.governs[comp.decision].append((sid, comp.source))
            ix.comparisons[(sid, comp.source)] = comp
    for units in ix.anthologies.values():
        units.sort(key=lambda s: (s.anthology.unit if s.anthology else "", s.id))
    return ix


def _versions(past: history.History, cid: str, check: str) -> dict[str, list[Version]]:
    """The committed versions of a check's ledger files, per device, oldest first (``assay.timeline.versions``)."""
    return {
        device: [
            Version((v["commit"] or "")[:8], time.strftime("%Y-%m-%d", time.gmtime(v["time"] or 0)), v["verdict"] or "removed")
            for v in vs
        ]
        for device, vs in sorted(versions(past, cid, check).items())
    }
