"""``assay show``: one record in words, for a person at a terminal; ``--json`` gives the record itself.

For a claim: its computed status, each assertion with its verdict per device and the line that explains it, each
check per device with every expectation as measured against what it expects (and its counterparts), and the
reason its closure is open. Every text from the record is printed through ``printable``.
"""

from __future__ import annotations

import json

from assay import prose, vocabulary
from assay.diagnostics import printable, shortened
from assay.experiment import Check
from assay.ledger.result import FLAGGED, Counterpart
from assay.model import Claim
from assay.overview import States
from assay.power import open_plans
from assay.precision import beside
from assay.records.knowledge_base import KnowledgeBase
from assay.records.lookup import record_id
from assay.status import CheckState, ClaimState


def show(kb: KnowledgeBase, rid: str, as_json: bool = False) -> int:
    """Print record ``rid``; 1 when it is invalid."""
    loaded = kb.by_id[record_id(kb, rid, valid=False)]  # an invalid record is shown as such
    if loaded.record is None:
        print(printable(f"{rid}  ({loaded.path})"))
        print("  invalid: run `assay check`")
        return 1
    record = loaded.record
    if as_json:
        dumped = json.dumps(record.model_dump(mode="json", exclude_defaults=True), indent=2, ensure_ascii=False)
        print("\n".join(printable(line) for line in dumped.splitlines()))  # JSON escapes C0 controls, not U+202E
        return 0
    print(printable(f"{rid}  ({loaded.path})"))
    print(f"  {printable(getattr(record, 'title', ''))}")
    if isinstance(record, Claim) and rid in kb.claim_files:
        states = States.read(kb)
        _claim(record, states[rid], states)
    print(f"  (the record's fields: assay show {rid} --json)")
    return 0


def _claim(claim: Claim, st: ClaimState, states: States) -> None:
    print(f"  status: {st.status} — {vocabulary.CLAIM[st.status].of_claim(bool(claim.assertions)).meaning}")
    if st.counts:
        print(f"  assertions: {st.counts}")
    print(printable(f"  closure: {st.closure}{_closure_why(claim, st, states)}"))
    filed = {a.id: a for a in claim.assertions}
    for a in st.assertions:
        verdicts = ", ".join(f"{d} {v}" for d, v in a.by_device.items()) or "no device"
        print(printable(f"  assertion {a.id}: {verdicts}"))
        for device, why in a.why.items():
            if a.by_device.get(device) not in ("not-run", "untested"):
                print(printable(f"    why ({device}): {why}"))
        record = filed[a.id]
        if record.says:
            print(printable(f"    says: {prose.rendered(record.says, claim, st.checks)}"))
        filed_as = " ".join(" … ".join(record.filed).split())
        print(printable(f"    filed: {shortened(filed_as, 160, '…')}"))
        print(printable(f"    source: {record.source.kind}"))
        for e in record.evidence:
            on = f" (reads {', '.join(e.metrics)})" if e.metrics else ""
            print(printable(f"    {e.stance} by check {e.check}{on}"))
        if record.cited_only:
            print(printable(f"    cited only: {record.cited_only}"))
    checks = {c.id: c for c in claim.checks}
    for c in st.checks:
        print(printable(f"  check {c.check} on {c.device}: {c.status}{check_notes(c)}"))
        for line in _measured(c, checks.get(c.check)):
            print(printable(f"    {line}"))


def _closure_why(claim: Claim, st: ClaimState, states: States) -> str:
    """Why the closure is open, in a few words: the claim itself, or the claims it rests on that are not closed."""
    if st.closure != "open":
        return ""
    if st.status != "verified":
        return f" (this claim is {st.status}, not verified)"
    open_below = [
        f"{r.target} ({states[r.target].status})" if r.target in states else f"{r.target} (missing or invalid)"
        for r in claim.relations
        if r.type == "depends_on" and (r.target not in states or states[r.target].closure != "closed")
    ]
    return f" (it rests on {', '.join(open_below)})" if open_below else ""


def _measured(c: CheckState, check: Check | None = None) -> list[str]:
    """Each expectation of a check's last measurement: ours, the comparison, the outcome, its counterparts, its
    registration where it was not fixed before its result, and the plan of an open one (``assay.power``)."""
    r = c.result
    if r is None or not r.measured:
        return []
    out = []
    plans = {p.metric: p for p in open_plans(check, r)} if check is not None else {}
    registered = {g.metric: g for g in c.registration}
    for e in r.expectation:
        expected = f"{e.op} {e.value:g}" + (f" within {e.tol:g}" if e.tol is not None else "")
        seeds = f" ({e.seeds_holding} of {e.seeds_total} seeds)" if e.seeds_holding is not None else ""
        mark = " [control]" if e.control else " [regime]" if e.regime else ""
        line = f"{e.metric} = {beside(e.measured, e.value)}, expected {expected}: {e.outcome}{seeds}{mark}"
        if e.against:
            told = "discriminates" if e.discriminates else "does not discriminate" if e.discriminates is False else "?"
            line += f"; {told} (" + ", ".join(_counterpart(x, e.value) for x in e.against) + ")"
        out.append(line)
        g = registered.get(e.metric)
        if g is not None and g.kind != "registered":
            out.append(f"  {g.shown}: {g.why}")
        if e.metric in plans:
            p = plans[e.metric]
            out.append(f"  plan: {p.read}; {p.words}")
    return out


def _counterpart(x: Counterpart, threshold: float) -> str:
    """``m0 = 0.02: fails``, and why it challenges nothing where it is flagged (a constant, a derived value)."""
    flag = f", but {FLAGGED[x.flag]}" if x.flag else ""
    return f"{x.metric} = {beside(x.measured, threshold)}: {x.outcome}{flag}"


def check_notes(c: CheckState) -> str:
    """What a check's status line adds: the measurement an error sits beside, staleness, flags."""
    notes = []
    r = c.result
    if r is not None and r.last_error is not None:
        measured = f"last measured {r.verdict} on {r.finished}; " if r.measured else ""
        said = [line for line in r.last_error.message.splitlines() if line.strip()][:1]  # nothing said: the kind alone
        notes.append(f"{measured}last run ended in {': '.join([r.last_error.kind, *said])}")
    if c.problem is not None:
        notes.append(c.problem.message)
    if c.stale:
        notes.append("stale: " + "; ".join(c.stale))
    if c.off_lock:
        notes.append("off-lock: " + "; ".join(c.off_lock))
    if r is not None and r.unstable is not None:
        notes.append("unstable: " + " -> ".join(r.unstable.verdicts))
    return f" ({'; '.join(notes)})" if notes else ""
