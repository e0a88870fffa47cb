"""What a merge believes of a result from another machine: only what it can recompute.

An incoming result says things about itself: how each expectation came out and the verdict, when it finished, that
it is a settling run on fresh seeds. None of it is taken on its word, because each decides what the merge keeps
(``assay.ledger.merge``). ``refusal`` says why an incoming result is not merged, or None:

- its judgement must follow from its own per-seed measurements under this record's expectations
  (``assay.ledger.judgement.rejudge`` on its metrics, compared with its stored outcomes and verdict);
- no time in it may lie in the future (beyond ``SKEW_S`` of this machine's clock): a later ``finished`` wins a merge;
- a settling block must hold of the result: the seeds it read are the settling seeds, from ``SETTLING_FROM`` on,
  disjoint from the record's seeds, from the seeds of the result it settled and from those our result read (only then
  is a different verdict another measurement, not a conflict); it settles an inconclusive result or confirms an
  expectation fixed with or after its result (``assay verify --confirm``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from assay.experiment import SETTLING_FROM, Check
from assay.ledger.judgement import VerifierError, rejudge
from assay.ledger.result import Evaluated, Result, timestamp
from assay.model import Claim

#: How far ahead of this machine's clock an incoming time may be (clocks of two machines differ a little).
SKEW_S = 300


@dataclass(frozen=True)
class Refusal:
    """Why an incoming result is not merged: a diagnostic code, the reason in words, and the way out."""

    code: str
    message: str
    hint: str


def refusal(claim: Claim, check: Check, theirs: Result, ours: Result | None) -> Refusal | None:
    """Why ``theirs`` (for ``claim``'s ``check``) must not be merged where ``ours`` is; None when all it says of
    itself holds."""
    return _future(theirs) or _misjudged(claim, check, theirs) or _settling(check, theirs, ours)


def clock() -> dt.datetime:
    """This machine's time, in UTC."""
    return dt.datetime.now(dt.timezone.utc)


def _future(theirs: Result) -> Refusal | None:
    latest = timestamp(clock() + dt.timedelta(seconds=SKEW_S))
    times = {"finished": theirs.finished}
    if theirs.last_error is not None:
        times["last_error.finished"] = theirs.last_error.finished
    if theirs.unstable is not None:
        times["unstable.since"] = theirs.unstable.since
    if theirs.settling is not None:
        times["settling.before_finished"] = theirs.settling.before_finished
    late = next(((k, v) for k, v in times.items() if v > latest), None)
    if late is None:
        return None
    return Refusal(
        "merge-future",
        f"its '{late[0]}' is {late[1]}, later than this machine's clock ({latest} with {SKEW_S} s of skew allowed); "
        "a later time would win the merge",
        "set that machine's clock right and rerun the check there, then merge again",
    )


def _misjudged(claim: Claim, check: Check, theirs: Result) -> Refusal | None:
    if not theirs.measured:
        return None  # an error judged nothing; it never replaces a measurement
    try:
        judged = rejudge(claim, check, theirs)
    except VerifierError as e:
        return Refusal("merge-misjudged", f"its measurements cannot be judged by this record: {e}", _rerun(claim))
    fresh, verdict = judged.expectation, judged.verdict
    if [_comparison(e) for e in theirs.expectation] != [_comparison(e) for e in fresh]:
        return None  # judged by another version of the record: its measurement is merged and judged by this one
    why = _differs(theirs.expectation, fresh)
    if why is None and theirs.verdict != verdict:
        why = f"its verdict is '{theirs.verdict}', but its expectation as its own measurements give it makes '{verdict}'"
    return Refusal("merge-misjudged", why, _rerun(claim)) if why else None


def _rerun(claim: Claim) -> str:
    return f"rerun the check on that machine with this record (pytest verify --claim {claim.id}), then merge again"


_READING = {"value": "", "all": " on every seed", "mean": " by the interval of the mean"}


def _comparison(e: Evaluated) -> str:
    """``acc > 0.5 against acc0 on every seed``: what an expectation compares, and how it reads the seeds."""
    within = f" within {e.tol:g}" if e.tol is not None else ""
    against = f" against {', '.join(c.metric for c in e.against)}" if e.against else ""
    return f"{e.metric} {e.op} {e.value:g}{within}{against}{_READING[e.seeds]}"


def _differs(stored: list[Evaluated], fresh: list[Evaluated]) -> str | None:
    """How the stored expectation (of the same comparisons) differs from the one its measurements give, in words;
    None when it does not."""
    for s, f in zip(stored, fresh):
        if s.outcome != f.outcome:
            return f"its stored outcome of '{_comparison(f)}' is {s.outcome}, but its own measurements give {f.outcome}"
        if [c.outcome for c in s.against] != [c.outcome for c in f.against] or s.discriminates != f.discriminates:
            stored_c = ", ".join(f"{c.metric}: {c.outcome}" for c in s.against)
            fresh_c = ", ".join(f"{c.metric}: {c.outcome}" for c in f.against)
            return f"its stored counterparts of '{_comparison(f)}' are {stored_c}, but its own measurements give {fresh_c}"
    return None


def _settling(check: Check, theirs: Result, ours: Result | None) -> Refusal | None:
    s = theirs.settling
    if s is None:
        return None
    read = set(s.seeds)
    before = set(check.seeds.values if check.seeds else []) | set(s.before_seeds)
    same_run = ours is not None and ours.settling is not None and ours.settling.seeds == s.seeds
    if ours is not None and ours.measured and not same_run:
        before |= set(ours.seeds_used or [])
    if not s.seeds or s.seeds != (theirs.seeds_used or []):
        why = f"its settling seeds {_few(s.seeds)} are not the seeds it read ({_few(theirs.seeds_used or [])})"
    elif min(read) < SETTLING_FROM:
        why = f"its settling seeds {_few(s.seeds)} are not fresh: a settling run reads seeds from {SETTLING_FROM} on"
    elif read & before:
        again = _few(sorted(read & before))
        why = f"its settling seeds {_few(s.seeds)} were read before ({again}); a settling run reads fresh ones"
    else:
        return None
    return Refusal("merge-settling", why, "settle the check with assay verify --settle on that machine, then merge again")


def _few(seeds: list[int]) -> str:
    return "[" + ", ".join(map(str, seeds[:5])) + (", ...]" if len(seeds) > 5 else "]")
