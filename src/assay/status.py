"""Every state derived from the records and the ledger, in one place: the rules.

A check's status per device (from its result and freshness), an assertion's (from its checks' votes by
stance), a claim's (from its assertions, naming the devices that ran), closure (verified with all it rests on),
and why a check needs a run. The commands, the export and the site read these; the views derive nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from assay.experiment import Check
from assay.ledger.inputs import InputParts
from assay.ledger.judgement import VerifierError, rejudge
from assay.ledger.registration import Registry
from assay.ledger.result import Key
from assay.ledger.store import Ledger
from assay.model import Assertion, Claim, series_of
from assay.records.knowledge_base import KnowledgeBase
from assay.vocabulary import ASSERTION
from assay.votes import CheckState, Vote, vote  # noqa: F401 - CheckState and Vote are read from here too


def combine_devices(statuses: list[str]) -> str:
    """One status for a check from its per-device statuses (the worst one that ran wins)."""
    worst_first = ("error", "failed", "known-failing", "inconclusive", "out-of-regime", "passed")
    return next((name for name in worst_first if name in statuses), "not-run")


#: A check's status as the verdict it gives a claim not cut into assertions (any other status stands for itself).
AS_VERDICT = {"passed": "supported", "failed": "contradicted", "known-failing": "contradicted"}


def summarise(check_statuses: list[str], any_stale: bool) -> str:
    """A claim's status (``standing``) from its checks' combined statuses as verdicts, while it is not cut into assertions."""
    if any_stale and check_statuses and "error" not in check_statuses:
        return "stale"
    return standing([AS_VERDICT.get(s, s) for s in check_statuses])


def standing(verdicts: list[str]) -> str:
    """A claim's status (a key of CLAIM: its chip and colour) from its assertions' verdicts on the devices that ran,
    repeats counted. The one rule: every dashboard, graph and page reads it. Error, then stale, come first; verified
    when all are supported; something supported beside something contradicted is mixed; supported with nothing
    contradicted is partly-verified; nothing supported and something contradicted is contradicted; then
    provisional, out-of-regime, not run, and inconclusive."""
    if not verdicts or all(v == "untested" for v in verdicts):
        return "cited-only"
    for name in ("error", "stale"):
        if name in verdicts:
            return name
    if all(v == "not-run" for v in verdicts if v != "untested"):
        return "not-run"
    if all(v == "supported" for v in verdicts):
        return "verified"
    held, failed = bool({"supported", "direction-only"} & set(verdicts)), "contradicted" in verdicts
    if held:
        return "mixed" if failed else "partly-verified"
    then = ("contradicted", "provisional", "out-of-regime", "not-run")
    return next((name for name in then if name in verdicts), "inconclusive")


def check_states(
    inputs: InputParts,
    claim: Claim,
    ledger: Ledger,
    registry: Registry | None = None,
) -> list[CheckState]:
    """The state of every check of ``claim`` on every device it declares (``registry``: where each expectation's
    registration comes from, None for none). Each result is judged again from its recorded measurements against the
    record as it stands (``assay.ledger.judgement.rejudge``): its stored outcome is never believed, and words,
    thresholds and counterparts that changed since are re-judged without a rerun."""

    states = []
    for check in claim.checks:
        results, unjudged = {}, {}
        for d in check.devices:
            results[d] = ledger.get((claim.id, check.id, d))
            if results[d] is not None:
                try:
                    results[d] = rejudge(claim, check, results[d])
                except VerifierError as e:  # the record reads a metric this measurement never recorded
                    unjudged[d] = f"the record now reads what this measurement did not record ({e}); rerun it"
        history = {
            "registration": registry.of(claim.id, check, results) if registry is not None else (),
            "no_history": registry.missing if registry is not None else "",
        }
        for device in check.devices:
            key = (claim.id, check.id, device)
            result, problem = results[device], ledger.broken.get(key)
            if problem is not None:
                states.append(CheckState(claim.id, check.id, device, "error", [], None, problem=problem))
            elif result is None:
                states.append(CheckState(claim.id, check.id, device, "not-run", [], None, **history))
            else:
                reasons = inputs.stale(result.inputs.parts, inputs.parts(claim, check, device))
                reasons += [unjudged[device]] if device in unjudged else []
                off = inputs.off_lock(result.environment.packages)
                states.append(CheckState(claim.id, check.id, device, result.status, reasons, result, off, **history))
    return states


@dataclass(frozen=True)
class Finding:
    """An assertion's verdict on one device: its status (a key of ASSERTION), the line that explains it, the reason
    as a defined word (a key of REASON) and the expectations that decided it, as (check, metric)."""

    status: str
    why: str
    reason: str
    deciding: tuple[tuple[str, str], ...] = ()


def finding(
    assertion: Assertion,
    states: dict[tuple[str, str], CheckState],
    device: str,
    checks: dict[str, Check] | None = None,
    elsewhere: dict[str, frozenset[str]] | None = None,
) -> Finding:
    """An assertion's verdict on one device from its checks' votes there (``vote``; ``checks``: the claim's checks
    by id, whose marks weigh a vote; ``elsewhere``: per check, the metrics other assertions name as testing their own
    sentences), with the expectations that decided it.

    Checks for and against: inconclusive. Only against: contradicted. A run out of its regime: out-of-regime, never
    contradicted. Any undecided: inconclusive. For, with every check measured: supported, or direction-only where a
    threshold is weaker than the source's size, or provisional where what it rests on was fixed only with or after
    its result. A refuting check that did not refute, alone: inconclusive. Apparatus checks vote for nothing; an
    apparatus that a check uses and that failed makes the assertion an error, one with no result here not run."""
    checks, elsewhere = checks or {}, elsewhere or {}
    if assertion.cited_only:
        return Finding("untested", "cited only: " + assertion.cited_only, "cited-only")
    relevant = [
        (e, states[(e.check, device)])
        for e in assertion.evidence
        if (e.check, device) in states and getattr(checks.get(e.check), "role", "evidence") != "apparatus"
    ]
    if not relevant:
        return Finding("not-run", "no check that bears on it has run here", "not-run")
    broken = _apparatus_failed(relevant, states, device, checks)
    if broken:
        return Finding("not-run", broken, "not-run") if "no measurement" in broken else Finding("error", broken, "apparatus")
    if any(st.status == "error" for _, st in relevant):
        return Finding("error", "a check that bears on it crashed or timed out", "error")
    if any(st.stale for _, st in relevant):
        return Finding("stale", "a check that bears on it ran on inputs that have changed", "stale")
    votes = [(e.check, vote(e, st, checks.get(e.check), elsewhere.get(e.check, frozenset()))) for e, st in relevant]
    cast = [(c, v) for c, v in votes if v is not None]
    if not cast:
        return Finding("not-run", "no check that bears on it has a measurement here", "not-run")
    return _weighed(cast, missing=len(cast) < len(votes))


def _weighed(cast: list[tuple[str, Vote]], *, missing: bool) -> Finding:
    """The verdict from the votes cast (check, vote), each verdict with the votes that decided it."""
    values = [v.value for _, v in cast]

    def of(pick: Callable[[Vote], bool]) -> tuple[tuple[str, str], ...]:
        return tuple((c, m) for c, v in cast if pick(v) for m in v.deciding)

    first = {x: next(v for _, v in cast if v.value == x) for x in set(values)}
    if 1 in values and -1 in values:
        why = f"checks disagree: {first[1].why}; but {first[-1].why}"
        return Finding("inconclusive", why, "checks-disagree", of(lambda v: v.value in (1, -1)))
    if -1 in values:
        return Finding("contradicted", first[-1].why, first[-1].reason, of(lambda v: v.value == -1))
    regime = next((v for _, v in cast if v.out_of_regime), None)
    if regime is not None:
        why = f"the regime its words need was not reached: {regime.why}"
        return Finding("out-of-regime", why, "out-of-regime", of(lambda v: v.out_of_regime))
    if None in values:
        return Finding("inconclusive", first[None].why, first[None].reason, of(lambda v: v.value is None))
    if missing:
        return Finding("not-run", "not every check that bears on it has a measurement here", "not-run")
    if 1 in values:
        unfixed = next((v for _, v in cast if v.provisional), None)
        if unfixed is not None:
            return Finding("provisional", unfixed.why, "unconfirmed", of(lambda v: v.provisional))
        shy = next((v for _, v in cast if v.direction_only), None)
        if shy is not None:
            return Finding("direction-only", shy.why, "weaker-than-source", of(lambda v: v.direction_only))
        return Finding("supported", first[1].why, first[1].reason, of(lambda v: v.value == 1))
    return Finding("inconclusive", first[0].why, "not-refuted", of(lambda v: v.value == 0))


def _apparatus_failed(relevant: list, states: dict, device: str, checks: dict[str, Check]) -> str:
    """Why the machinery a check uses cannot be trusted here: it failed its own check, or has no measurement here
    (empty when it holds)."""
    for e, _ in relevant:
        for used in getattr(checks.get(e.check), "uses", []):
            st = states.get((used, device))
            if st is None or st.status in ("not-run", "skipped") or st.result is None or not st.result.measured:
                return f"the apparatus has no measurement here: {e.check} uses {used}, which has not run on {device}"
            if st.status != "passed" or st.stale:
                why = "stale" if st.stale and st.status == "passed" else st.status
                return f"the apparatus failed: {e.check} uses {used}, which is {why}"
    return ""


@dataclass(frozen=True)
class AssertionState:
    """An assertion's status on every device the claim's checks declare, and the line that explains each."""

    id: str
    by_device: dict[str, str]  # device -> a key of ASSERTION
    why: dict[str, str] = field(default_factory=dict)  # device -> the one line that explains it
    found: dict[str, Finding] = field(default_factory=dict)  # device -> its reason and deciding expectations


def assertion_states(claim: Claim, checks: list[CheckState]) -> list[AssertionState]:
    by_key = {(c.check, c.device): c for c in checks}
    devices = claim_devices(claim)
    records = {c.id: c for c in claim.checks}
    out = []
    for a in claim.assertions:
        elsewhere = named_elsewhere(claim, a)
        judged = {d: finding(a, by_key, d, records, elsewhere) for d in devices}
        out.append(AssertionState(a.id, {d: f.status for d, f in judged.items()}, {d: f.why for d, f in judged.items()}, judged))
    return out


def named_elsewhere(claim: Claim, assertion: Assertion) -> dict[str, frozenset[str]]:
    """Per check, the metrics that the claim's other assertions name as testing their own sentences: an assertion
    that names none of a check's metrics is not contradicted by these."""
    out: dict[str, set[str]] = {}
    for other in claim.assertions:
        if other.id != assertion.id:
            for e in other.evidence:
                out.setdefault(e.check, set()).update(e.metrics)
    return {k: frozenset(v) for k, v in out.items()}


def claim_devices(claim: Claim) -> list[str]:
    """Every device a check of the claim declares, cpu first."""
    return sorted({d for c in claim.checks for d in c.devices}, key=lambda d: (d != "cpu", d))


def devices_run(checks: list[CheckState]) -> list[str]:
    """The devices on which some check of the claim has a result (an unreadable one counts)."""
    return sorted({c.device for c in checks if c.result is not None or c.problem is not None}, key=lambda d: (d != "cpu", d))


def summarise_assertions(claim: Claim, assertions: list[AssertionState], ran: list[str]) -> str:
    """A claim's status from its assertions (``standing``): verified only when every assertion is supported on every
    device that ran."""
    if all(a.cited_only for a in claim.assertions):
        return "cited-only"
    if not ran:
        return "not-run"
    return standing([st for a in assertions for d, st in a.by_device.items() if d in ran])


def counts_sentence(assertions: list[AssertionState], devices: list[str], ran: list[str]) -> str:
    """``cpu: 6 supported, 2 contradicted, 1 untested; cuda: not run``."""
    parts = []
    for d in devices:
        if d not in ran:
            parts.append(f"{d}: not run")
            continue
        counts = Counter(a.by_device.get(d) for a in assertions)
        parts.append(f"{d}: " + ", ".join(f"{counts[name]} {name}" for name in ASSERTION if counts[name]))
    return "; ".join(parts)


@dataclass(frozen=True)
class ClaimVerdict:
    """A claim's derived status, its assertions' statuses per device, and the counts in words."""

    status: str  # a key of CLAIM
    assertions: list[AssertionState]
    counts: str  # "cpu: 6 supported, 1 untested; cuda: not run"; empty for a claim not cut into assertions
    devices_run: list[str]


def claim_verdict(claim: Claim, checks: list[CheckState]) -> ClaimVerdict:
    """The claim's status: from its assertions when it has them, from its checks while it is not cut yet."""
    ran = devices_run(checks)
    if not claim.assertions:
        per_check = [combine_devices([s.status for s in checks if s.check == c.id]) for c in claim.checks]
        return ClaimVerdict(summarise(per_check, any(s.stale for s in checks)), [], "", ran)
    assertions = assertion_states(claim, checks)
    return ClaimVerdict(
        summarise_assertions(claim, assertions, ran), assertions, counts_sentence(assertions, claim_devices(claim), ran), ran
    )


class Closure:
    """Whether a claim is verified together with everything it depends on, transitively, asked a claim at a time
    (``verified``: whether a claim, by id, is verified; asked only where the answer rests on it, and once).

    Linear: one depth-first pass over the depends_on links, shared by every question, that goes below a claim only
    where it is verified. A claim in a cycle is open, since it rests on itself: the first of a cycle to be finished
    meets a claim still on the path, and each after it a claim already open. So is one that rests on an invalid or
    missing claim, which is why those links are kept.
    """

    def __init__(self, kb: KnowledgeBase, verified: Callable[[str], bool]):
        self.rests_on = {
            cid: [t for t in f.outline.depends_on() if (s := series_of(t)) is not None and s.model is Claim]
            for cid, f in kb.claim_files.items()
        }
        self.verified, self.closed = verified, {}

    def __call__(self, start: str) -> bool:
        closed, on_path = self.closed, {start}
        if start in closed:
            return closed[start]
        stack = [(start, self._below(start))]
        ok = {start: self._verified(start)}
        while stack:
            node, below = stack[-1]
            target = next(below, None) if ok[node] else None  # an open claim is open whatever it rests on
            if target is None:
                stack.pop()
                on_path.discard(node)
                closed[node] = ok.pop(node)
                if stack:
                    ok[stack[-1][0]] &= closed[node]
            elif target in on_path:
                ok[node] = False  # a cycle
            elif target in closed:
                ok[node] &= closed[target]
            else:
                stack.append((target, self._below(target)))
                on_path.add(target)
                ok[target] = self._verified(target)
        return closed[start]

    def _below(self, cid: str) -> Iterator[str]:
        return iter(self.rests_on.get(cid, ()))

    def _verified(self, cid: str) -> bool:
        return cid in self.rests_on and self.verified(cid)  # a missing or invalid claim is never verified


@dataclass(frozen=True)
class ClaimState:
    """A claim's computed status: its checks per device, its summary, its closure."""

    id: str
    status: str  # a key of assay.status.CLAIM
    closure: str  # a key of assay.status.CLOSURE
    checks: list[CheckState] = field(default_factory=list)
    assertions: list[AssertionState] = field(default_factory=list)
    counts: str = ""  # "cpu: 6 supported, 1 untested; cuda: not run" (claims cut into assertions)
    devices_run: list[str] = field(default_factory=list)

    @property
    def stale(self) -> list[CheckState]:
        return [c for c in self.checks if c.stale]

    @classmethod
    def of(cls, cid: str, checks: list[CheckState], verdict: ClaimVerdict, closure: str = "open") -> ClaimState:
        """A claim's state from its checks' states, its verdict (``claim_verdict``) and its ``closure``."""
        return cls(cid, verdict.status, closure, checks, verdict.assertions, verdict.counts, verdict.devices_run)


#: Why a check is (or is not) to be run on a device: no result, an error or unreadable file, inputs changed, or none.
RUN_REASONS = ("missing", "error", "stale", "fresh")


def run_reason(ledger: Ledger, key: Key, parts: dict[str, str], inputs: InputParts) -> str:
    """Why the check ``key`` is to be run, given its ``parts`` now (``inputs.parts``; a key of ``RUN_REASONS``): the
    one rule that ``pytest verify --stale`` and ``assay plan`` read; anything but ``fresh`` needs a run."""
    result = ledger.get(key)
    if result is None:
        return "error" if key in ledger.broken else "missing"
    if result.status == "error":
        return "error"
    return "stale" if inputs.stale(result.inputs.parts, parts) else "fresh"
