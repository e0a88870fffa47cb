"""The status vocabulary, as data: every status with its icon, colour and one-line meaning.

The legends on the site and in ``assay status`` are printed from these tables; the rules that pick a status
live in ``assay.status``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Status:
    """One status: its name, the icon and colour that show it, and what it means."""

    name: str
    icon: str  # a Material for MkDocs icon shortcode, without colons
    colour: str  # a CSS colour that reads on light and dark backgrounds
    meaning: str


CHECK = {
    s.name: s
    for s in [
        Status("passed", "material-check-circle", "#2e7d32", "The expectation held when the verifier last ran."),
        Status(
            "failed", "material-close-circle", "#c62828", "The expectation did not hold, or a known failure unexpectedly passed."
        ),
        Status(
            "known-failing",
            "material-alert-circle-outline",
            "#ef6c00",
            "Declared not to hold at our scale, with the reason, and it did not hold again (should it hold, it reads failed).",
        ),
        Status(
            "inconclusive",
            "material-help-circle-outline",
            "#8e24aa",
            "The seeds disagree about an expectation (some satisfy it, some do not, or the mean's interval straddles it).",
        ),
        Status(
            "error",
            "material-alert-octagon",
            "#6a1b9a",
            "The last run crashed or timed out, or its ledger file is unreadable; "
            "the last measurement, if any, is kept beside it.",
        ),
        Status(
            "out-of-regime",
            "material-target-variant",
            "#546e7a",
            "A regime expectation did not hold: the run never reached the regime the words speak of, so its other "
            "expectations neither support nor contradict anything.",
        ),
        Status("skipped", "material-skip-next-circle-outline", "#607d8b", "Not run on this device, e.g. it needs a GPU."),
        Status("not-run", "material-circle-outline", "#9e9e9e", "No result in the ledger. Never a pass."),
    ]
}


CLAIM = {
    s.name: s
    for s in [
        Status(
            "verified",
            "material-check-decagram",
            "#2e7d32",
            "Every assertion is supported on every device that ran (a claim not yet cut into assertions: every check passed).",
        ),
        Status(
            "partly-verified",
            "material-circle-half-full",
            "#9e9d24",
            "Some of it is supported; other parts are contradicted, inconclusive, cited only or not run.",
        ),
        Status(
            "contradicted",
            "material-close-octagon",
            "#c62828",
            "Checks ran and nothing of it is supported, and some is contradicted: it does not hold as filed at our scale.",
        ),
        Status(
            "inconclusive",
            "material-help-circle-outline",
            "#8e24aa",
            "Checks ran and decide nothing: no part of it is supported or contradicted (checks disagree, or did not refute).",
        ),
        Status(
            "provisional",
            "material-timer-sand",
            "#00838f",
            "Nothing of it is supported or contradicted yet: what would support it was fixed with or after its result "
            "(or the history that would tell is missing); confirm on fresh seeds.",
        ),
        Status(
            "out-of-regime",
            "material-target-variant",
            "#546e7a",
            "Checks ran, but our setup did not reach the regime the words speak of: nothing of it is supported or "
            "contradicted by them.",
        ),
        Status("error", "material-alert-octagon", "#6a1b9a", "A check crashed, timed out or has an unreadable result."),
        Status("stale", "material-update", "#0277bd", "A result was computed from inputs that have changed since; rerun it."),
        Status("not-run", "material-circle-outline", "#9e9e9e", "No check has a result yet."),
        Status(
            "cited-only",
            "material-book-open-variant",
            "#5d4037",
            "No check tests it: every part of it is cited only, and the record says why.",
        ),
    ]
}


ASSERTION = {
    s.name: s
    for s in [
        Status(
            "supported",
            "material-check-circle",
            "#2e7d32",
            "Every check that bears on it ran on this device and came out for it.",
        ),
        Status(
            "direction-only",
            "material-trending-up",
            "#8a4b00",
            "It holds in direction, but a threshold asks less than the size the source states (or that size was not tested).",
        ),
        Status(
            "contradicted",
            "material-close-circle",
            "#c62828",
            "A supporting check's expectation failed, or a refuting check's held, and nothing came out for it.",
        ),
        Status(
            "inconclusive",
            "material-help-circle-outline",
            "#8e24aa",
            "The evidence ran and does not decide: checks disagree, or only a refuting check ran and did not refute.",
        ),
        Status(
            "provisional",
            "material-timer-sand",
            "#00838f",
            "It would be supported, but an expectation it reads (or a counterpart) was fixed with or after its result, "
            "or the history that would show otherwise is missing: confirm it on fresh seeds (assay verify --confirm).",
        ),
        Status(
            "out-of-regime",
            "material-target-variant",
            "#546e7a",
            "Our setup did not reach the regime the words speak of (a regime expectation failed): the run neither "
            "supports nor contradicts it.",
        ),
        Status("untested", "material-book-open-variant", "#5d4037", "Cited only: no check tests it, and the record says why."),
        Status("not-run", "material-circle-outline", "#9e9e9e", "Not every check that bears on it has a result on this device."),
        Status(
            "error",
            "material-alert-octagon",
            "#6a1b9a",
            "A check that bears on it crashed, timed out or has an unreadable result.",
        ),
        Status("stale", "material-update", "#0277bd", "A check that bears on it ran on inputs that have changed since."),
    ]
}


CLOSURE = {
    s.name: s
    for s in [
        Status("closed", "material-link-variant", "#2e7d32", "Verified, and so is everything it depends on."),
        Status("open", "material-link-variant-off", "#9e9e9e", "It, or something it depends on, is not verified."),
    ]
}


FRESHNESS = {
    s.name: s
    for s in [
        Status("fresh", "material-leaf", "#2e7d32", "The inputs in the repository are those the result was computed from."),
        Status(
            "stale",
            "material-update",
            "#0277bd",
            "An input in the repository changed since: the check, the sentences it tests, the verifier code, "
            "a data file, a pin of the lock file, or the device kind.",
        ),
        Status("none", "material-minus", "#9e9e9e", "No result to be fresh or stale."),
    ]
}


#: Flags a result can carry beside its status.
FLAGS = {
    s.name: s
    for s in [
        Status(
            "off-lock",
            "material-lock-open-variant-outline",
            "#8d6e63",
            "The machine had other package versions than the lock file pins (another torch, say); recorded, not stale.",
        ),
        Status(
            "unstable",
            "material-sine-wave",
            "#ad1457",
            "A rerun with the same inputs gave another verdict: the check does not decide the question reliably.",
        ),
    ]
}


#: Whether an expectation was fixed before the result that evaluated it (``assay.ledger.registration``).
REGISTRATION = {
    s.name: s
    for s in [
        Status(
            "registered",
            "material-lock-check-outline",
            "#2e7d32",
            "Committed before the first result that evaluated it (or no result has evaluated it yet).",
        ),
        Status(
            "with-result",
            "material-clock-check-outline",
            "#0277bd",
            "First committed together with its first result: a verdict that reads it is provisional until a run on "
            "fresh seeds confirms it.",
        ),
        Status(
            "confirmed",
            "material-check-all",
            "#2e7d32",
            "Fixed with or after a result, then confirmed by a run on fresh seeds (disjoint from every seed read before) "
            "after its last move.",
        ),
        Status(
            "no-history",
            "material-source-branch-remove",
            "#9e9e9e",
            "The history that would show when it was fixed is missing (a shallow clone, or no git): a verdict that reads "
            "a seeded expectation is provisional.",
        ),
        Status(
            "moved-after-result",
            "material-history",
            "#ef6c00",
            "Changed after a result had evaluated it, without turning a failing or inconclusive result into a pass.",
        ),
        Status(
            "post-hoc",
            "material-lock-open-alert-outline",
            "#c62828",
            "Moved after a failing or inconclusive result and then held, or its seeds were raised after an inconclusive "
            "one: it votes for nothing until a run on fresh seeds holds.",
        ),
    ]
}


#: Every vocabulary by its title: the legends of the site and the README are printed from this.
VOCABULARIES = {
    "Claim": CLAIM,
    "Assertion": ASSERTION,
    "Check": CHECK,
    "Closure": CLOSURE,
    "Freshness": FRESHNESS,
    "Flags": FLAGS,
    "Registration": REGISTRATION,
}
