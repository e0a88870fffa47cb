"""The status vocabulary, as data: every status with its icon, colour and one-line meaning.

The legends on the site and in ``assay status`` are printed from these tables; the rules that pick a status
live in ``assay.status``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Status:
    """One status: its name, the icon and colour that show it, and what it means."""

    name: str
    icon: str  # a Material for MkDocs icon shortcode, without colons
    colour: str  # a CSS colour that reads on light and dark backgrounds
    meaning: str
    #: Where ``meaning`` says what the status means of a claim cut into assertions and of one not yet cut (the
    #: legend's one line for both), each half alone: (cut, not yet cut).
    halves: tuple[str, str] | None = None

    def of_claim(self, cut: bool) -> Status:
        """The status as said of one claim: its meaning only in the half that applies, where it has halves."""
        return self if self.halves is None else replace(self, meaning=self.halves[0 if cut else 1], halves=None)


def _by_name(*statuses: Status) -> dict[str, Status]:
    """A vocabulary: its statuses by name, in the order they are listed."""
    return {s.name: s for s in statuses}


CHECK = _by_name(
    Status("passed", "material-check-circle", "#2e7d32", "The expectation held when the verifier last ran."),
    Status("failed", "material-close-circle", "#c62828", "The expectation did not hold, or a known failure unexpectedly passed."),
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
        "The last run crashed or timed out, or its ledger file is unreadable; the last measurement, if any, is kept beside it.",
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
)


_VERIFIED_CUT = "Every assertion is supported on every device that ran"
_VERIFIED_UNCUT = "a claim not yet cut into assertions: every check passed"

CLAIM = _by_name(
    Status(
        "verified",
        "material-check-decagram",
        "#2e7d32",
        f"{_VERIFIED_CUT} ({_VERIFIED_UNCUT}).",
        (f"{_VERIFIED_CUT}.", f"{_VERIFIED_UNCUT.capitalize()} on every device that ran."),
    ),
    Status(
        "partly-verified",
        "material-circle-half-full",
        "#9e9d24",
        "Some of it is supported and nothing of it is contradicted; the rest is inconclusive, provisional, untested or not run.",
    ),
    Status(
        "mixed",
        "material-scale-unbalanced",
        "#bf360c",
        "Some of it is supported and some of it is contradicted: it holds in part and fails in part at our scale.",
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
        "No check tests it: every part of it is untested (cited only), and the record says why.",
    ),
)


ASSERTION = _by_name(
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
)


CLOSURE = _by_name(
    Status("closed", "material-link-variant", "#2e7d32", "Verified, and so is everything it depends on."),
    Status("open", "material-link-variant-off", "#9e9e9e", "It, or something it depends on, is not verified."),
)


FRESHNESS = _by_name(
    Status("fresh", "material-leaf", "#2e7d32", "The inputs in the repository are those the result was computed from."),
    Status(
        "stale",
        "material-update",
        "#0277bd",
        "An input of the measurement changed since: the verifier code (not its words), the check's seeds, data "
        "files or metric declarations, a pin of the lock file, or the device kind.",
    ),
    Status("none", "material-minus", "#9e9e9e", "No result to be fresh or stale."),
)


#: Flags a result can carry beside its status.
FLAGS = _by_name(
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
)


#: Whether an expectation was fixed before the result that evaluated it (``assay.ledger.registration``).
REGISTRATION = _by_name(
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
)


#: Why a row reads as it does: each line that explains a verdict is one of these, defined once (``assay.votes``).
REASON = _by_name(
    Status(
        "held",
        "material-check",
        "#2e7d32",
        "What it reads held, and each counterpart (the condition without the effect) failed it.",
    ),
    Status("analytic", "material-function-variant", "#2e7d32", "An exact or numerical fact held, with no seeds to spread."),
    Status(
        "weaker-than-source",
        "material-trending-up",
        "#8a4b00",
        "It held, but its threshold asks less than the size the source states: the direction holds, the size is untested.",
    ),
    Status(
        "unconfirmed",
        "material-timer-sand",
        "#00838f",
        "It held, but was fixed with or after its result (or the history is missing): confirm on fresh seeds.",
    ),
    Status("failed", "material-close", "#c62828", "An expectation it reads did not hold."),
    Status("refuted", "material-close", "#c62828", "A check that tests its opposite held."),
    Status("checks-disagree", "material-scale-unbalanced", "#8e24aa", "One check came out for it and another against it."),
    Status(
        "seeds-disagree",
        "material-help-circle-outline",
        "#8e24aa",
        "Some seeds meet an expectation it reads and some do not, or the mean's interval straddles it.",
    ),
    Status(
        "unchallenged",
        "material-shield-off-outline",
        "#8e24aa",
        "It held, but could not have failed: a counterpart meets it too, is undecided on it, or is a constant or a "
        "function of the effect's values.",
    ),
    Status("control-failed", "material-flask-off-outline", "#8e24aa", "A control showed the effect it must not show."),
    Status(
        "identity", "material-equal", "#8e24aa", "It holds by construction: an identity is support only in an analytic check."
    ),
    Status(
        "no-spread",
        "material-minus",
        "#8e24aa",
        "A seeded measurement came out the same on every seed: with no spread it decides nothing.",
    ),
    Status(
        "post-hoc",
        "material-lock-open-alert-outline",
        "#c62828",
        "Its threshold was moved after a failing or inconclusive result: it votes for nothing until fresh seeds confirm it.",
    ),
    Status("not-refuted", "material-minus-circle-outline", "#8e24aa", "Only a check of its opposite ran, and it did not refute."),
    Status(
        "no-effect-read",
        "material-eye-off-outline",
        "#8e24aa",
        "It reads only a control or the regime of its check, which cannot support anything.",
    ),
    Status(
        "out-of-regime",
        "material-target-variant",
        "#546e7a",
        "A regime expectation did not hold: the run never reached what its words need.",
    ),
    Status("cited-only", "material-book-open-variant", "#5d4037", "No check tests it; the record says why."),
    Status("not-run", "material-circle-outline", "#9e9e9e", "Not every check that bears on it has a result here."),
    Status("error", "material-alert-octagon", "#6a1b9a", "A check that bears on it crashed or timed out."),
    Status("apparatus", "material-wrench-outline", "#6a1b9a", "Our own machinery that a check uses failed its check."),
    Status("stale", "material-update", "#0277bd", "A check that bears on it ran on inputs that have changed since."),
)


#: How a paper's number stands beside ours (``assay.pairing``): what the two may be compared for.
PAIR = _by_name(
    Status(
        "same-quantity",
        "material-equal-box",
        "#2e7d32",
        "Same quantity, unit and setting: the numbers are compared (ours shown in the paper's unit).",
    ),
    Status(
        "direction-only",
        "material-swap-vertical",
        "#8a4b00",
        "Same quantity in another setting (our data, model or steps): only the sign or order is compared, never the size.",
    ),
    Status(
        "different-quantity",
        "material-not-equal-variant",
        "#546e7a",
        "Another quantity (or one not declared): shown side by side, never compared.",
    ),
)


#: Every vocabulary by its title: the legends of the site and the README are printed from this.
VOCABULARIES = {
    "Claim": CLAIM,
    "Assertion": ASSERTION,
    "Check": CHECK,
    "Closure": CLOSURE,
    "Freshness": FRESHNESS,
    "Flags": FLAGS,
    "Registration": REGISTRATION,
    "Reason": REASON,
    "Pair": PAIR,
}
