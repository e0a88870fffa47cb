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
    from assay.model import Claim
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
    Status("known-failing", "material-alert-circle-outline", "#ef6c00", "Declared not to hold at our scale, and it did not: a strict xfail."),
    Status("error", "material-alert-octagon", "#6a1b9a",
           "The last run crashed or timed out, or its ledger file is unreadable; the last measurement, if any, is kept beside it."),
    Status("skipped", "material-skip-next-circle-outline", "#607d8b", "Not run on this device, e.g. it needs a GPU."),
    Status("not-run", "material-circle-outline", "#9e9e9e", "No result in the ledger. Never a pass."),
]}

CLAIM = {s.name: s for s in [
    Status("verified", "material-check-decagram", "#2e7d32", "Every check passed on a fresh run."),
    Status("partly-verified", "material-circle-half-full", "#9e9d24", "Some checks passed; others failed, are known-failing or have not run."),
    Status("contradicted", "material-close-octagon", "#c62828", "Checks ran and none passed: the claim does not hold as filed at our scale."),
    Status("error", "material-alert-octagon", "#6a1b9a", "A check crashed or timed out."),
    Status("stale", "material-update", "#0277bd", "A result was computed from inputs that have changed since; rerun it."),
    Status("not-run", "material-circle-outline", "#9e9e9e", "No check has a result yet."),
    Status("cited-only", "material-book-open-variant", "#5d4037", "The claim has no check, and says why."),
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
    for name in ("error", "failed", "known-failing", "passed"):
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
    if "passed" not in check_statuses and "not-run" not in check_statuses:
        return "contradicted"
    return "partly-verified"


#: Every vocabulary by its title: the legends of the site and the README are printed from this.
VOCABULARIES = {"Claim": CLAIM, "Check": CHECK, "Closure": CLOSURE, "Freshness": FRESHNESS, "Flags": FLAGS}


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


def check_states(inputs: Inputs, claim: Claim, ledger: Ledger) -> list[CheckState]:
    """The state of every check of ``claim`` on every device it declares."""
    from assay.inputs import off_lock, stale_reasons

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
                reasons = stale_reasons(result.inputs.parts, inputs.parts(claim, check, device))
                states.append(CheckState(claim.id, check.id, device, result.status, reasons, result,
                                         off_lock(result.environment.packages, inputs.pins)))
    return states
