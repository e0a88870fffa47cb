"""The status vocabulary, as data: every status with its icon, colour and one-line meaning.

Check statuses are per check and device, read from the ledger; claim statuses summarise a claim's
checks; closure statuses look at everything a claim depends on. The legends on the site and in
``assay status`` are printed from these tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assay.diagnostics import Diagnostic
    from assay.inputs import Inputs
    from assay.model import Assertion, Claim
    from assay.results import Ledger, Result


@dataclass(frozen=True)
class Status:
    """One status: its name, the icon and colour that show it, and what it means."""

    name: str
    icon: str  # a Material for MkDocs icon shortcode, without colons
    colour: str  # a CSS colour that reads on light and dark backgrounds
    meaning: str


CHECK = {s.name: s for s in [
    Status("passed", "material-check-circle", "#2e7d32", "The expectation held when the verifier last ran."),
    Status("failed", "material-close-circle", "#c62828", "The expectation did not hold, or a known failure unexpectedly passed."),
    Status("known-failing", "material-alert-circle-outline", "#ef6c00",
           "Declared not to hold at our scale, and it did not: a strict xfail."),
    Status("inconclusive", "material-help-circle-outline", "#8e24aa",
           "The seeds disagree about an expectation (some satisfy it, some do not, or the mean's interval straddles it)."),
    Status("error", "material-alert-octagon", "#6a1b9a",
           "The last run crashed or timed out, or its ledger file is unreadable; "
           "the last measurement, if any, is kept beside it."),
    Status("skipped", "material-skip-next-circle-outline", "#607d8b", "Not run on this device, e.g. it needs a GPU."),
    Status("not-run", "material-circle-outline", "#9e9e9e", "No result in the ledger. Never a pass."),
]}

CLAIM = {s.name: s for s in [
    Status("verified", "material-check-decagram", "#2e7d32",
           "Every assertion is supported on every device that ran (a claim not yet cut into assertions: every check passed)."),
    Status("partly-verified", "material-circle-half-full", "#9e9d24",
           "Some of it is supported; other parts are contradicted, inconclusive, cited only or not run."),
    Status("contradicted", "material-close-octagon", "#c62828",
           "Checks ran and nothing of it is supported, and some is contradicted: it does not hold as filed at our scale."),
    Status("inconclusive", "material-help-circle-outline", "#8e24aa",
           "Checks ran and decide nothing: no part of it is supported or contradicted (checks disagree, or did not refute)."),
    Status("error", "material-alert-octagon", "#6a1b9a", "A check crashed, timed out or has an unreadable result."),
    Status("stale", "material-update", "#0277bd", "A result was computed from inputs that have changed since; rerun it."),
    Status("not-run", "material-circle-outline", "#9e9e9e", "No check has a result yet."),
    Status("cited-only", "material-book-open-variant", "#5d4037",
           "No check tests it: every part of it is cited only, and the record says why."),
]}

ASSERTION = {s.name: s for s in [
    Status("supported", "material-check-circle", "#2e7d32",
           "Every check that bears on it ran on this device and came out for it."),
    Status("contradicted", "material-close-circle", "#c62828",
           "A supporting check's expectation failed, or a refuting check's held, and nothing came out for it."),
    Status("inconclusive", "material-help-circle-outline", "#8e24aa",
           "The evidence ran and does not decide: checks disagree, or only a refuting check ran and did not refute."),
    Status("untested", "material-book-open-variant", "#5d4037", "Cited only: no check tests it, and the record says why."),
    Status("not-run", "material-circle-outline", "#9e9e9e", "Not every check that bears on it has a result on this device."),
    Status("error", "material-alert-octagon", "#6a1b9a",
           "A check that bears on it crashed, timed out or has an unreadable result."),
    Status("stale", "material-update", "#0277bd", "A check that bears on it ran on inputs that have changed since."),
]}

CLOSURE = {s.name: s for s in [
    Status("closed", "material-link-variant", "#2e7d32", "Verified, and so is everything it depends on."),
    Status("open", "material-link-variant-off", "#9e9e9e", "It, or something it depends on, is not verified."),
]}

FRESHNESS = {s.name: s for s in [
    Status("fresh", "material-leaf", "#2e7d32", "The inputs in the repository are those the result was computed from."),
    Status("stale", "material-update", "#0277bd",
           "An input in the repository changed since: the check, the sentences it tests, the verifier code, "
           "a data file, a pin of the lock file, or the device kind."),
    Status("none", "material-minus", "#9e9e9e", "No result to be fresh or stale."),
]}

#: Flags a result can carry beside its status.
FLAGS = {s.name: s for s in [
    Status("off-lock", "material-lock-open-variant-outline", "#8d6e63",
           "The machine had other package versions than the lock file pins (another torch, say); recorded, not stale."),
    Status("unstable", "material-sine-wave", "#ad1457",
           "A rerun with the same inputs gave another verdict: the check does not decide the question reliably."),
]}


def combine_devices(statuses: list[str]) -> str:
    """One status for a check from its per-device statuses (the worst one that ran wins)."""
    for name in ("error", "failed", "known-failing", "inconclusive", "passed"):
        if name in statuses:
            return name
    return "not-run"


def summarise(check_statuses: list[str], any_stale: bool) -> str:
    """A claim's status from its checks' combined statuses."""
    if not check_statuses:
        return "cited-only"
    if "error" in check_statuses:
        return "error"
    if any_stale:
        return "stale"
    if all(s == "not-run" for s in check_statuses):
        return "not-run"
    if all(s == "passed" for s in check_statuses):
        return "verified"
    if "passed" in check_statuses:
        return "partly-verified"
    if "failed" in check_statuses or "known-failing" in check_statuses:
        return "contradicted" if "not-run" not in check_statuses else "partly-verified"
    return "inconclusive" if "not-run" not in check_statuses else "not-run"


#: Every vocabulary by its title: the legends of the site and the README are printed from this.
VOCABULARIES = {"Claim": CLAIM, "Assertion": ASSERTION, "Check": CHECK, "Closure": CLOSURE, "Freshness": FRESHNESS,
                "Flags": FLAGS}


@dataclass(frozen=True)
class CheckState:
    """A check's status on one device, with why it is stale and how its machine differed from the lock."""

    claim: str
    check: str
    device: str
    status: str  # a key of CHECK
    stale: list[str]
    result: Result | None
    off_lock: list[str] = field(default_factory=list)
    problem: Diagnostic | None = None  # the ledger file exists and cannot be read

    @property
    def flags(self) -> list[str]:
        """Keys of FLAGS that apply."""
        return [name for name, on in (("off-lock", self.off_lock), ("unstable", self.result and self.result.unstable)) if on]


def check_states(inputs: Inputs, claim: Claim, ledger: Ledger,
                 known: dict[str, list[tuple[str, str]]] | None = None) -> list[CheckState]:
    """The state of every check of ``claim`` on every device it declares (``known``: see ``Inputs.parts``)."""
    from assay.inputs import stale_reasons

    states = []
    for check in claim.checks:
        for device in check.devices:
            key = (claim.id, check.id, device)
            result, problem = ledger.get(key), ledger.broken.get(key)
            if problem is not None:
                states.append(CheckState(claim.id, check.id, device, "error", [], None, problem=problem))
            elif result is None:
                states.append(CheckState(claim.id, check.id, device, "not-run", [], None))
            else:
                current = inputs.parts(claim, check, device, known)
                reasons = [] if result.inputs.parts == current else stale_reasons(result.inputs.parts, current)
                states.append(CheckState(claim.id, check.id, device, result.status, reasons, result,
                                         inputs.off_lock(result.environment.packages)))
    return states


def came_out(state: CheckState, on: list[str] | None = None) -> str | None:
    """How the check's expectations (those on the metrics ``on``, or all) came out in its last measurement:
    `holds`, `fails` or `inconclusive`; None when nothing was measured."""
    r = state.result
    if r is None or not r.measured:
        return None
    read = [e.came_out for e in r.expectation if not on or e.metric in on]
    if not read:  # a result without evaluated expectations: its verdict decides
        return {"passed": "holds", "inconclusive": "inconclusive"}.get(r.verdict, "fails")
    return "fails" if "fails" in read else "inconclusive" if "inconclusive" in read else "holds"


#: What a check's outcome means for an assertion, by stance: for (+1), against (-1), neutral (0: a refuting
#: check that did not refute), undecided (None: the seeds disagree).
VOTE = {
    ("supports", "holds"): 1, ("supports", "fails"): -1, ("supports", "inconclusive"): None,
    ("refutes", "holds"): -1, ("refutes", "fails"): 0, ("refutes", "inconclusive"): None,
}


def assertion_status(assertion: Assertion, states: dict[tuple[str, str], CheckState], device: str) -> str:
    """An assertion's status on one device, from its checks' states there and their stances (a key of ASSERTION).

    Each check votes by its stance and how the expectations the assertion reads came out (``VOTE``). Checks
    for and against: inconclusive. Only against: contradicted. Any undecided: inconclusive. For, with every
    check measured: supported. A refuting check that did not refute, alone: inconclusive."""
    if assertion.cited_only:
        return "untested"
    relevant = [(e, states[(e.check, device)]) for e in assertion.evidence if (e.check, device) in states]
    if not relevant:
        return "not-run"
    if any(st.status == "error" for _, st in relevant):
        return "error"
    if any(st.stale for _, st in relevant):
        return "stale"
    votes, missing = [], False
    for e, st in relevant:
        outcome = came_out(st, e.metrics) if st.status in ("passed", "failed", "known-failing", "inconclusive") else None
        if outcome is None:
            missing = True
        else:
            votes.append(VOTE[(e.stance, outcome)])
    if not votes:
        return "not-run"
    if 1 in votes and -1 in votes:
        return "inconclusive"
    if -1 in votes:
        return "contradicted"
    if None in votes:
        return "inconclusive"
    if 1 in votes:
        return "not-run" if missing else "supported"
    return "not-run" if missing else "inconclusive"


@dataclass(frozen=True)
class AssertionState:
    """An assertion's status on every device the claim's checks declare."""

    id: str
    by_device: dict[str, str]  # device -> a key of ASSERTION


def assertion_states(claim: Claim, checks: list[CheckState]) -> list[AssertionState]:
    by_key = {(c.check, c.device): c for c in checks}
    devices = claim_devices(claim)
    return [AssertionState(a.id, {d: assertion_status(a, by_key, d) for d in devices}) for a in claim.assertions]


def claim_devices(claim: Claim) -> list[str]:
    """Every device a check of the claim declares, cpu first."""
    return sorted({d for c in claim.checks for d in c.devices}, key=lambda d: (d != "cpu", d))


def devices_run(checks: list[CheckState]) -> list[str]:
    """The devices on which some check of the claim has a result (an unreadable one counts)."""
    return sorted({c.device for c in checks if c.result is not None or c.problem is not None}, key=lambda d: (d != "cpu", d))


def summarise_assertions(claim: Claim, assertions: list[AssertionState], ran: list[str]) -> str:
    """A claim's status from its assertions (a key of CLAIM): verified only when every assertion is
    supported on every device that ran."""
    if all(a.cited_only for a in claim.assertions):
        return "cited-only"
    every = [st for a in assertions for d, st in a.by_device.items() if d in ran]
    if "error" in every:
        return "error"
    if "stale" in every:
        return "stale"
    if not ran:
        return "not-run"
    if all(a.by_device.get(d) == "supported" for a in assertions for d in ran):
        return "verified"
    if "supported" in every:
        return "partly-verified"
    return "contradicted" if "contradicted" in every else "inconclusive"


def counts_sentence(assertions: list[AssertionState], devices: list[str], ran: list[str]) -> str:
    """``cpu: 6 supported, 2 contradicted, 1 untested; cuda: not run``."""
    parts = []
    for d in devices:
        if d not in ran:
            parts.append(f"{d}: not run")
            continue
        counts = {name: sum(a.by_device.get(d) == name for a in assertions) for name in ASSERTION}
        parts.append(f"{d}: " + ", ".join(f"{n} {name}" for name, n in counts.items() if n))
    return "; ".join(parts)


@dataclass(frozen=True)
class Verdict:
    """A claim's derived status, its assertions' statuses per device, and the counts in words."""

    status: str  # a key of CLAIM
    assertions: list[AssertionState]
    counts: str  # "cpu: 6 supported, 1 untested; cuda: not run"; empty for a claim not cut into assertions
    devices_run: list[str]


def claim_verdict(claim: Claim, checks: list[CheckState]) -> Verdict:
    """The claim's status: from its assertions when it has them, from its checks while it is not cut yet."""
    ran = devices_run(checks)
    if not claim.assertions:
        per_check = [combine_devices([s.status for s in checks if s.check == c.id]) for c in claim.checks]
        return Verdict(summarise(per_check, any(s.stale for s in checks)), [], "", ran)
    assertions = assertion_states(claim, checks)
    return Verdict(summarise_assertions(claim, assertions, ran), assertions,
                   counts_sentence(assertions, claim_devices(claim), ran), ran)
