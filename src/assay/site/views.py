"""The page model: records joined with their results, derived status and backlinks.

A ``Claim`` is what the YAML says; a ``ClaimView`` adds what the site shows beside it. ``SiteIndex``
is computed once per build and answers every "who points here" question in O(1).
"""

from __future__ import annotations

import time
import typing
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import networkx as nx

from assay import citation, corpus, prose, vocabulary
from assay.experiment import Check, Tier
from assay.graph import build
from assay.ledger import history
from assay.ledger.inputs import InputParts
from assay.ledger.registration import Registry
from assay.ledger.store import figure_bytes, read_ledger
from assay.model import Claim, Comparison, Decision, Source
from assay.overview import States
from assay.records.document import Loaded
from assay.records.knowledge_base import KnowledgeBase
from assay.site.markup import quantity
from assay.status import AssertionState, CheckState, ClaimState, ClaimVerdict, claim_devices
from assay.svg import sanitise
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

    def rendered(self, text: str | None) -> str | None:
        """A prose field with its references to the ledger rendered with their values (``assay.prose``)."""
        return prose.rendered(text, self.claim, self.state.checks)


@dataclass
class Summary:
    """What the listings show of a claim (the dashboard, the tag and source pages, the graph), kept for the whole
    build while its record and results are not: a few short strings per claim."""

    id: str
    title: str
    tags: tuple[str, ...]
    sources: tuple[str, ...]
    tiers: tuple[str, ...]
    status: str  # a key of assay.status.CLAIM
    closure: str  # a key of assay.status.CLOSURE; "open" until every claim's status is known
    freshness: str
    devices_run: tuple[str, ...]
    last_run: str
    share: str  # "11 / 27": the assertions supported on the first device that ran, beside a partial status
    counts: str  # the verdict counts in words (``verdict_counts``)
    pairs: tuple[tuple[str, bool], ...]  # (device, not run) of each of its checks' states
    registration: tuple[str, ...]  # the registration kind of each expectation, once per check
    modules: tuple[str, ...]  # its checks' verifier modules
    path: str  # its record's file, root-relative
    verdicts: tuple[tuple[str, str], ...] = ()  # (assertion id, its verdict on ``read_on``), in the record's order
    read_on: str = ""  # the device its ``verdicts`` are read on: the first that ran, else its first declared ('' for none)

    @property
    def status_of_claim(self) -> vocabulary.Status:
        """Its status as said of this claim: the half of the meaning that applies (``verdicts`` has a verdict per
        assertion, so it is empty only for a claim not yet cut into assertions)."""
        return vocabulary.CLAIM[self.status].of_claim(bool(self.verdicts))


#: The verdicts of an assertion that hold or that no check was meant to test: the graph's and a source page's lists of
#: what does not hold leave them out (everything else, direction-only and not-run included, is still to look at).
SETTLED = frozenset({"supported", "untested"})


def verdicts_read(
    claim: Claim, assertions: list[AssertionState], devices_run: list[str]
) -> tuple[str, tuple[tuple[str, str], ...]]:
    """Each assertion's verdict on one device: the first that ran, else the first the claim's checks declare (where
    every verdict is ``not-run``, or ``untested`` for one cited only)."""
    device = (list(devices_run) or claim_devices(claim) or [""])[0]
    states = {a.id: a.by_device for a in assertions}
    default = {a.id: "untested" if a.cited_only else "not-run" for a in claim.assertions}
    return device, tuple((a.id, states.get(a.id, {}).get(device, default[a.id])) for a in claim.assertions)


def verdict_counts(state: ClaimState | Summary | None) -> str:
    """The claim's counts in words: its assertions' (``status.counts_sentence``), or, for a claim not cut
    into assertions, its checks' statuses per device (``cpu: 2 passed, 1 known-failing``)."""
    if state is None:
        return ""
    if isinstance(state, Summary) or state.counts:
        return state.counts
    per_device: dict[str, Counter] = defaultdict(Counter)
    for c in state.checks:
        per_device[c.device][c.status] += 1
    return "; ".join(
        f"{d}: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items(), key=lambda x: -x[1]))
        for d, counts in sorted(per_device.items())
    )


class Claims(Mapping[str, ClaimView]):
    """Every valid claim's full view (record, state, history), made when looked at and not kept: a page renders
    one, and ``States.using`` lets its record and results go before the next."""

    def __init__(self, states: States, past: history.History):
        self.states, self.past = states, past

    def __getitem__(self, cid: str) -> ClaimView:
        st = self.states[cid]
        claim = self.states.kb.claim_files[cid].record
        timeline = {c.id: _versions(self.past, cid, c.id) for c in claim.checks} if self.past.available else {}
        return ClaimView(claim, st, self.states.kb.claim_files[cid], timeline)

    def __iter__(self) -> Iterator[str]:
        return iter(self.states)

    def __len__(self) -> int:
        return len(self.states)


@dataclass(frozen=True)
class FigureFile:
    """A figure a result drew, as the site publishes it: the SVG at ``path`` (docs-relative), and what its own page
    (``assay.site.figure_page``) says of it."""

    path: str
    svg: bytes
    claim: str
    check: str
    device: str
    caption: str


def caption(check: Check, name: str) -> str:
    """A figure the verifier gave no caption: what its check tests, and its name in words."""
    return f"{name.replace('_', ' ').capitalize()}: {check.tests}"


@dataclass
class SiteIndex:
    """Everything a page needs about the whole knowledge base: each claim's ``Summary``, and its full view
    (``claims``) only when its page is rendered."""

    kb: KnowledgeBase
    states: States  # each claim's full state, computed when looked at
    graph: nx.MultiDiGraph
    summaries: dict[str, Summary] = field(default_factory=dict)
    claims: Mapping[str, ClaimView] = field(default_factory=dict)
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
    figures: list[FigureFile] = field(default_factory=list)  # each figure a result drew that a page may show
    past: history.History | None = None  # the repository's history, read once per build (unavailable outside git)

    @cached_property
    def titles(self) -> dict[str, str]:
        return {rid: str(a.get("title", rid)) for rid, a in self.graph.nodes(data=True)}

    @cached_property
    def work(self) -> citation.Work | None:
        """The work the knowledge base's ``CITATION.cff`` names: what its claims are cited as part of."""
        return citation.work(self.kb.root)

    @cached_property
    def commit_times(self) -> dict[str, int]:
        """Each commit of the history by its full id: its committer time (Unix seconds)."""
        return {c.sha: c.time for c in self.past.commits} if self.past is not None else {}

    @cached_property
    def accessed(self) -> str:
        """The day the site was built (UTC), as a citation of one of its pages gives the day it was read."""
        return time.strftime("%Y-%m-%d", time.gmtime())

    def anthology_title(self, number: int) -> str:
        return min((s.anthology.title for s in self.anthologies[number] if s.anthology and s.anthology.title), default="")


def index(root: Path) -> SiteIndex:
    """Load the knowledge base under ``root`` with its ledger and compute the site's index of it.

    One claim at a time: its record is thawed and its results read, its summary and what it tells the other
    records (backlinks, passages cited, numbers reported) taken, and both let go before the next."""
    from assay.records.knowledge_base import load

    kb = load(root)
    past = history.read(kb.root)  # once per build: the registration and every check's strip read it
    cache = corpus.large(len(kb.files))
    ledger = read_ledger(kb.root, cache=cache)
    summaries: dict[str, Summary] = {}
    states = States(kb, ledger, InputParts(kb.root, cache=cache), Registry(kb.root, past))
    ix = SiteIndex(kb, states, nx.MultiDiGraph(), summaries, Claims(states, past), kb.sources, kb.decisions, kb.by_id, past=past)
    for cid in sorted(kb.claim_files):
        with states.using(cid):
            claim, checks, verdict = states.verdict(cid)
            summaries[cid] = _summary(claim, checks, verdict, kb.claim_files[cid].path)
            _links(ix, cid, claim)
            for c in checks:
                for fig in c.result.figures if c.result is not None else ():
                    svg = figure_bytes(kb.root, c.result, fig)  # None when missing, not the one the result drew, or unsafe
                    if svg is not None:  # published as the ledger's writer keeps a figure (assay.svg), by the same rule
                        spec = claim.check(c.check)
                        words = fig.caption or (caption(spec, fig.name) if spec else fig.name)
                        ix.figures.append(FigureFile(f"figures/{cid}/{fig.file}", sanitise(svg), cid, c.check, c.device, words))
    for cid, s in summaries.items():
        s.closure = "closed" if states.closed(cid) else "open"  # every status is known by now (``States.verdict``)
    ix.graph = build(kb, summaries)
    for rid, loaded in sorted(kb.by_id.items()):
        kept = summaries.get(rid) if loaded is kb.claim_files.get(rid) else None  # a claim is not thawed again
        for tag in kept.tags if kept is not None else getattr(loaded.record, "tags", None) or []:
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


def _links(ix: SiteIndex, cid: str, claim: Claim) -> None:
    """What a claim tells the pages of the records it names: a backlink, a passage cited, a number reported."""
    for rel in claim.relations:
        ix.backlinks[rel.target].append(Backlink(cid, rel.type, rel.note))
    for cit in claim.citations:
        ix.cited_by[cit.source].append(CitedPassage(cid, cit.locator, cit.quote))
    for r in claim.reported:
        value = quantity(r.value, r.unit, getattr(r, "bound", None))
        ix.located[r.source].append(Located(cid, r.locator, "reported", r.what, value))
    for d in claim.discrepancies:
        ix.located[d.source].append(Located(cid, d.locator, "discrepancy", d.filed, d.source_says))


def _summary(claim: Claim, checks: list[CheckState], verdict: ClaimVerdict, path: str) -> Summary:
    state = ClaimState.of(claim.id, checks, verdict)
    view = ClaimView(claim, state, None)  # type: ignore[arg-type]  # its file is not needed here
    first: dict[str, tuple] = {}  # each check's registration, once (every device's state carries the same)
    for c in checks:
        if c.registration and c.check not in first:
            first[c.check] = c.registration
    read_on, verdicts = verdicts_read(claim, verdict.assertions, view.devices_run)
    share = ""
    if verdict.status == "partly-verified" and verdict.assertions and view.devices_run:
        device = view.devices_run[0]
        held = sum(a.by_device.get(device) == "supported" for a in verdict.assertions)
        share = f"{held} / {len(verdict.assertions)}"
    return Summary(
        claim.id,
        claim.title,
        tuple(claim.tags),
        tuple(view.sources),
        tuple(view.tiers),
        verdict.status,
        "open",
        view.freshness,
        tuple(view.devices_run),
        view.last_run,
        share,
        verdict_counts(view.state),
        tuple((c.device, c.status == "not-run") for c in checks),
        tuple(r.kind for regs in first.values() for r in regs),
        tuple(sorted({c.verifier.split("::")[0] for c in claim.checks})),
        path,
        verdicts,
        read_on,
    )


def _versions(past: history.History, cid: str, check: str) -> dict[str, list[Version]]:
    """The committed versions of a check's ledger files, per device, oldest first (``assay.timeline.versions``)."""
    return {
        device: [
            Version((v["commit"] or "")[:8], time.strftime("%Y-%m-%d", time.gmtime(v["time"] or 0)), v["verdict"] or "removed")
            for v in vs
        ]
        for device, vs in sorted(versions(past, cid, check).items())
    }
