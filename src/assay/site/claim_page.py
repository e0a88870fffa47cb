"""The claim page's view: the verdict in one sentence, the assertions table, the papers' numbers, the checks.

``page`` joins the record, its derived status and its ledger entries into ``ClaimPage`` and renders
``templates/claim.html``. What a reader sees first (the sentence, then one row per assertion with the paper's number
beside ours) is decided here; the markup is the template's."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from markupsafe import Markup

from assay import pairing, status, vocabulary
from assay.experiment import Check
from assay.model import Claim, Discrepancy, Reported
from assay.site import check_view, claim_cite, neighbourhood, row_view, search, table_key
from assay.site.code import record_listing_path
from assay.site.markup import record_doc, source_href
from assay.site.pages import Options, Output, Ref, breadcrumb, paragraphs, source_refs
from assay.site.template import render
from assay.site.views import ClaimView, SiteIndex
from assay.vocabulary import Status

DEVICE_WORDS = {"cpu": "CPU", "cuda": "a GPU"}
TIER_WORDS = {"analytic": "analytically", "toy": "at toy scale", "reduced": "at reduced scale", "full": "at the paper's scale"}


#: The groups of the assertions table, in the order a reader meets them: what does not hold first, untested last.
#: Each is headed by its verdict's one name (``vocabulary.ASSERTION``), as in ``assay show`` and ``assay status``.
GROUPS = tuple(
    (name, name)
    for name in (
        "contradicted",
        "inconclusive",
        "out-of-regime",
        "provisional",
        "direction-only",
        "error",
        "stale",
        "not-run",
        "supported",
        "untested",
    )
)


@dataclass(frozen=True)
class Evidence:
    """A check as evidence for a row: its stance, and the measurements of its first run that bear on the row."""

    stance: str
    check: check_view.CheckView
    measures: list[check_view.Measure]  # what the assertion reads of it, where it reads only some
    unread: list[check_view.Measure] = field(default_factory=list)  # the rest of its expectations, with their outcome
    because: str | None = None  # why it reads only ``measures``


@dataclass(frozen=True)
class Row:
    """One assertion (or, for a claim not cut into assertions, one check) as a row of the table."""

    id: str
    filed: list[str]
    source_kind: str
    source_note: str | None
    refs: list[Ref]
    verdicts: list[tuple[str, Status]]
    deciding: list[check_view.Measure]  # the expectations that decided its verdict (the engine's), or the first read
    figure: check_view.Figure | None
    evidence: list[Evidence]
    refined: str | None
    cited_only: str | None
    discrepancies: list[int]  # numbers of the discrepancies whose filed words overlap this row's
    says: str | None = None  # the assertion in one sentence, where the record gives it
    why: str = ""  # the line that explains the verdict (on the first device that ran)
    group: str = "not-run"  # the verdict it is listed under (``GROUPS``): its worst over the devices that ran
    order: int = 0  # its place in the record, for the table's "as filed" order
    devices: list[str] = field(default_factory=list)  # the devices its checks run on
    tiers: list[str] = field(default_factory=list)  # the evidence tiers of its checks
    reason: Status | None = None  # why it reads as it does, as a defined word (``vocabulary.REASON``)
    pairs: list[row_view.PairView] = field(default_factory=list)  # the paper's numbers beside the deciding ones
    against_source: bool = False  # its source says otherwise (``SourceSays.kind: contradicted``)

    @property
    def by_device(self) -> str:
        """``cpu:supported cuda:not-run``: its verdict on each device, a device its checks declare and did not run
        on included (the page's filter by device groups the rows by it)."""
        ran = {d: s.name for d, s in self.verdicts if d}
        return " ".join(f"{d}:{ran.get(d, 'not-run')}" for d in sorted(set(ran) | set(self.devices)))

    @property
    def source_word(self) -> str:
        """The source's stance in the table's words (never one of our verdicts)."""
        return table_key.SOURCE_WORDS.get(self.source_kind, self.source_kind)

    @property
    def mark(self) -> table_key.Mark:
        """How it marks the discrepancies its filed words overlap: silent or contrary, as its source is."""
        return table_key.MARKS.get(self.source_kind, table_key.OTHERWISE)


@dataclass
class ClaimPage:
    here: str
    id: str
    title: str
    trail: list[tuple[str | None, str]]
    verdict: str
    status: Status
    closure: Status
    freshness: Status
    tiers: list[str]
    rows: list[Row]
    groups: list[tuple[str, str, list[Row]]]  # (verdict, heading, rows) in ``GROUPS`` order, the empty left out
    by_assertion: bool
    reported: list[tuple[Reported, check_view.Paper]]  # each number a paper reports, as the page shows it
    checks: list[check_view.CheckView]
    machines: list[str]  # the machines its results ran on, once (each run names its number)
    discrepancies: list[tuple[Discrepancy, str]]
    citations: list[Ref]
    relations: list[tuple[str, str, str | None, str | None]]  # (relation, record id, title, note)
    statement: list[str]
    refined: list[str]
    conditions: list[str]
    no_check_reason: str | None
    stale: list[str]
    record_path: str
    record_href: str  # the record's listing, with an anchor per line
    edit_url: str | None
    neighbourhood: Markup
    papers_linked: bool  # whether any expectation's measurement stands beside a paper's number
    table_key: table_key.Key  # what each chip of the assertions table means, shown above it
    facets: table_key.Facets  # what its rows can be filtered by
    toc: list[tuple[str, str]] = field(default_factory=list)


def page(ix: SiteIndex, view: ClaimView, options: Options) -> Output:
    claim, here = view.claim, record_doc(view.claim.id)
    checks = {c.id: check_view.check(view, i) for i, c in enumerate(claim.checks)}
    rows = _rows(ix, view, checks)
    groups = _groups(rows) if claim.assertions else []
    closure, freshness = vocabulary.CLOSURE[view.state.closure], vocabulary.FRESHNESS[view.freshness]
    said = vocabulary.CLAIM[view.state.status].of_claim(bool(claim.assertions))  # the half of its meaning that applies
    p = ClaimPage(
        here=here,
        id=claim.id,
        title=claim.title,
        trail=breadcrumb("claims", claim.id),
        verdict=verdict_rest(view),
        status=said,
        closure=closure,
        freshness=freshness,
        tiers=view.tiers,
        rows=rows,
        groups=groups,
        by_assertion=bool(claim.assertions),
        reported=[(r, check_view.paper_number(r)) for r in claim.reported],
        checks=list(checks.values()),
        machines=check_view.machines(checks.values()),
        discrepancies=[(d, source_href(d.source, d.locator)) for d in claim.discrepancies],
        citations=source_refs(ix, claim, range(1, len(claim.citations) + 1), view),
        relations=_relations(ix, claim),
        statement=paragraphs(claim.statement),
        refined=paragraphs(view.rendered(claim.refined or "")),
        conditions=list(claim.conditions),
        no_check_reason=claim.no_check_reason,
        stale=[f"{s.check} on {s.device}: {'; '.join(s.stale)}" for s in view.state.stale],
        record_path=view.loaded.path,
        record_href=record_listing_path(claim.id),
        edit_url=options.edit_url.format(path=view.loaded.path, line=1) if options.edit_url else None,
        neighbourhood=Markup(neighbourhood.figure(ix, claim.id, here, options.depth)),
        papers_linked=any(m.paper for c in checks.values() for r in c.runs for m in r.measures),
        table_key=table_key.key(
            said,
            freshness,
            closure,
            verdicts=[s.name for r in rows for _, s in r.verdicts],
            sources=[r.source_kind for r in rows],
            tiers=view.tiers,
            shown=table_key.Shown(
                [r.reason for r in rows if r.reason],
                [g.status for c in checks.values() for g in c.registration]
                + [m.registration for r in rows for m in r.deciding if m.registration],
                [p.transfer for r in rows for p in r.pairs],
                [r.mark for r in rows if r.discrepancies and not r.against_source],  # the flags the rows show
            ),
        ),
        facets=table_key.facets(
            list(GROUPS),
            {r.group for r in rows} | {s.name for r in rows for _, s in r.verdicts},
            status.claim_devices(claim),
            view.tiers,
        ),
    )
    p.toc = _toc(p)
    cited = claim_cite.cite(ix, view)
    html = render("claim.html", **vars(p), cite=cited, cite_csl=claim_cite.csl_text(cited) if cited else "")
    words, meta = search.statement(claim), claim_cite.meta(view, p.verdict, cited)
    document = search.claim(ix, view, p.relations)
    return Output.page(here, f"{claim.id} {claim.title}", html, search=document, toc=p.toc, search_words=words, meta=meta)


def _toc(p: ClaimPage) -> list[tuple[str, str]]:
    toc = [("assertions", "Assertions" if p.by_assertion else "Checks at a glance")]
    toc += [("reported", "What the papers report")] if p.reported else []
    toc += [("checks", "Checks")] if p.checks else []
    toc += [("discrepancies", "Discrepancies")] if p.discrepancies else []
    toc += [("statement", "The claim as filed"), ("citations", "Citations")]
    toc += [("relations", "Relations")] if p.relations else []
    return toc + [("neighbourhood", "Neighbourhood"), ("record", "Record")]


def verdict_rest(view: ClaimView) -> str:
    """The verdict sentence after the claim's one status name (``mixed, supported at toy scale, on CPU: 3 of 10
    assertions supported, 2 contradicted, 5 untested; not run on a GPU.``), made from the counts, never typed: the
    scales that support something (or, with nothing supported, that contradict it), then the counts per device."""
    st, claim = view.state, view.claim
    held, failed = _deciding_tiers(view, ("supported", "direction-only")), _deciding_tiers(view, ("contradicted",))
    scales = f"supported {' and '.join(held)}" if held else " and ".join(failed)  # a contradicted claim: where
    declared = status.claim_devices(claim)
    ran = [d for d in declared if d in st.devices_run]
    counted = "; ".join(f"on {DEVICE_WORDS.get(d, d)}: {_counts(view, d)}" for d in ran)
    if st.status == "cited-only":
        n = len(claim.assertions)
        counted = (
            f"None of its {n} assertions is tested here, and each says why"
            if n > 1
            else "Nothing here is tested, and the record says why"
        )
    not_ran = [DEVICE_WORDS.get(d, d) for d in declared if d not in ran]
    text = ", ".join(t for t in (scales, counted) if t)
    if not_ran:
        text += ("; " if text else "") + f"not run on {' or '.join(not_ran)}"
    return text + "."


def _deciding_tiers(view: ClaimView, verdicts: tuple[str, ...]) -> list[str]:
    """The scale words of the checks (our machinery, apparatus, aside) that decided a verdict of ``verdicts``: for a
    claim cut into assertions, the checks its findings name; for one not cut yet, its checks that passed or failed."""
    claim, st = view.claim, view.state
    if claim.assertions:
        used = {c for a in st.assertions for f in a.found.values() if f.status in verdicts for c, _ in f.deciding}
    else:
        used = {s.check for s in st.checks if status.AS_VERDICT.get(s.status) in verdicts}
    evidence = [c for c in claim.checks if c.role != "apparatus" and c.id in used]
    return [TIER_WORDS[t] for t in view.tiers if any(c.tier == t for c in evidence)]


def _counts(view: ClaimView, device: str) -> str:
    claim, st = view.claim, view.state
    if claim.assertions:
        names = [a.by_device.get(device, "not-run") for a in st.assertions]
    else:
        ran = [[s.status for s in st.checks if s.check == c.id and s.device == device] for c in claim.checks]
        names = [status.AS_VERDICT.get(n, n) for n in map(status.combine_devices, ran)]
    total, what = len(names), "assertions" if claim.assertions else "checks"
    order = list(vocabulary.ASSERTION)  # every verdict, supported first: none left out of the count
    n = {name: names.count(name) for name in order}
    bits = [f"{n['supported']} of {total} {what} supported" if total != 1 else f"{n['supported']} of 1 {what[:-1]} supported"]
    bits += [f"{n[name]} {name}" for name in order[1:] if n[name]]
    return ", ".join(bits)


def _rows(ix: SiteIndex, view: ClaimView, checks: dict[str, check_view.CheckView]) -> list[Row]:
    claim = view.claim
    marks = _discrepancy_marks(claim)
    if not claim.assertions:
        return [_check_row(checks[c.id], c) for c in claim.checks]
    out = []
    for i, a in enumerate(claim.assertions):
        devices = view.state.devices_run or []
        state = view.state.assertions[i] if i < len(view.state.assertions) else None
        by_device = state.by_device if state else {}
        verdicts = [(d, vocabulary.ASSERTION[by_device.get(d, "not-run")]) for d in devices] or [
            ("", vocabulary.ASSERTION["untested" if a.cited_only else "not-run"])
        ]
        group = _group([s.name for _, s in verdicts])
        # the device whose verdict the row is listed under speaks for it: its finding, its deciding numbers
        device = next((d for d in devices if by_device.get(d) == group), devices[0] if devices else "")
        found = state.found.get(device) if state else None
        evidence = [_evidence(e.stance, checks[e.check], e.metrics, e.because) for e in a.evidence if e.check in checks]
        text = " ".join([a.says or "", *a.filed])
        cited = {claim.citations[n - 1].source for n in a.source.citations if 0 < n <= len(claim.citations)}
        out.append(
            Row(
                a.id,
                list(a.filed),
                a.source.kind,
                a.source.note,
                source_refs(ix, claim, a.source.citations, view),
                verdicts,
                row_view.deciding(found, checks, device) or _first_read(evidence, by_device),
                _first_figure(evidence),
                evidence,
                view.rendered(a.refined),
                a.cited_only,
                marks.get(a.id, []),
                view.rendered(a.says),
                state.why.get(device, "") if state else "",
                group,
                i,
                sorted({d for e in evidence for d, _ in e.check.verdicts}),
                [t for t in view.tiers if any(e.check.tier == t for e in evidence)],
                vocabulary.REASON[found.reason] if found else None,
                row_view.pairs(view, found, device, text, cited),
                a.source.kind == "contradicted",
            )
        )
    return out


def _group(names: list[str]) -> str:
    order = [g for g, _ in GROUPS]
    return min(names, key=lambda n: order.index(n) if n in order else len(order)) if names else "not-run"


def _groups(rows: list[Row]) -> list[tuple[str, str, list[Row]]]:
    return [(g, heading, [r for r in rows if r.group == g]) for g, heading in GROUPS if any(r.group == g for r in rows)]


def _evidence(stance: str, check: check_view.CheckView, metrics: list[str] | None, because: str | None = None) -> Evidence:
    """A check as evidence for a row. Its whole list of expectations is the check's, shown once under the checks;
    a row lists only what it reads of a check that it reads in part, and the rest beside it."""
    measures = [m for r in check.runs[:1] for m in r.measures]
    if not metrics:
        return Evidence(stance, check, measures)
    return Evidence(
        stance, check, [m for m in measures if m.metric in metrics], [m for m in measures if m.metric not in metrics], because
    )


def _check_row(check: check_view.CheckView, c: Check) -> Row:
    verdicts = [(d, s) for d, s in check.verdicts if s.name != "not-run"] or check.verdicts[:1]
    evidence = [_evidence("supports", check, None)]
    measures = _first_read(evidence, {"": "contradicted"} if any(s.name == "failed" for _, s in verdicts) else {})
    return Row(c.id, [c.tests], "", None, [], verdicts, measures, _first_figure(evidence), evidence, None, None, [])


def _first_read(evidence: list[Evidence], by_device: dict[str, str]) -> list[check_view.Measure]:
    """Where the engine names no deciding expectation (a claim not cut into assertions, a row not run): the first
    that did not hold (when it is contradicted), else the first that is not a control."""
    measures = [m for e in evidence for m in e.measures]
    contradicted = "contradicted" in by_device.values()
    picks = (lambda m: contradicted and m.outcome != "holds" and not m.control, lambda m: not m.control)
    return next(([m] for pick in picks for m in measures if pick(m)), measures[:1])


def _first_figure(evidence: list[Evidence]) -> check_view.Figure | None:
    return next((f for e in evidence for r in e.check.runs for f in r.figures), None)


def _discrepancy_marks(claim: Claim) -> dict[str, list[int]]:
    """Which assertions' filed words a discrepancy's ``filed`` text overlaps (either holds a piece of the other)."""
    marks: dict[str, list[int]] = {}
    for n, d in enumerate(claim.discrepancies, 1):
        pieces = [pairing._words(p) for p in re.split(r"\[…\]|\.\.\.", d.filed) if len(p.strip()) > 8]
        for a in claim.assertions:
            spans = [pairing._words(f) for f in a.filed]
            if any(p in s or s in p for p in pieces for s in spans):
                marks.setdefault(a.id, []).append(n)
    return marks


def _relations(ix: SiteIndex, claim: Claim) -> list[tuple[str, str, str | None, str | None]]:
    rows = [(r.type.replace("_", " "), r.target, ix.titles.get(r.target), r.note) for r in claim.relations]
    rows += [
        (f"{b.type.replace('_', ' ')} (from)", b.source, ix.titles.get(b.source), b.note) for b in ix.backlinks.get(claim.id, [])
    ]
    return rows
