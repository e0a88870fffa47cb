"""What one check says of one assertion on one device: the vote, and why, from a check's state.

The rules of ``assay.status`` for a single piece of evidence (a regime that did not hold, a control that failed, the
expectations an assertion reads, whether what held could have failed, whether it was fixed before its result);
``assay.status`` combines the votes of an assertion's checks into its verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from assay.diagnostics import Diagnostic
from assay.experiment import Check, Expectation
from assay.ledger.registration import Registration
from assay.ledger.result import FLAGGED, Evaluated, Result
from assay.model import Support
from assay.precision import beside


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
    registration: tuple[Registration, ...] = ()  # per expectation of the record, in order (empty: no history)
    no_history: str = ""  # why registration cannot be decided here ('' when the history is read, or not asked for)

    @property
    def post_hoc(self) -> list[str]:
        """The metrics whose expectation is post-hoc and not yet confirmed on fresh seeds: they vote for nothing."""
        return [r.metric for r in self.registration if not r.votes]

    @property
    def flags(self) -> list[str]:
        """Keys of FLAGS that apply."""
        return [name for name, on in (("off-lock", self.off_lock), ("unstable", self.result and self.result.unstable)) if on]


#: What a check's outcome means for an assertion, by stance: for (+1), against (-1), neutral (0: a refuting
#: check that did not refute), undecided (None: the seeds disagree).
VOTE = {
    ("supports", "holds"): 1,
    ("supports", "fails"): -1,
    ("supports", "inconclusive"): None,
    ("refutes", "holds"): -1,
    ("refutes", "fails"): 0,
    ("refutes", "inconclusive"): None,
}


@dataclass(frozen=True)
class Vote:
    """What one check says of an assertion on one device: for (+1), against (-1), neutral (0), undecided (None);
    why, in one line; whether its threshold is weaker than the size the source states; whether the run was out of
    the regime its words need; and whether what it rests on was fixed only with or after its result."""

    value: int | None
    why: str
    direction_only: bool = False
    out_of_regime: bool = False
    provisional: bool = False
    reason: str = "held"  # a key of ``vocabulary.REASON``: the why, as a defined entry of the page's key
    deciding: tuple[str, ...] = ()  # the metrics whose outcome decided the vote, in the record's order


def _outcome(read: list[Evaluated]) -> str:
    outcomes = [e.outcome for e in read]
    return "fails" if "fails" in outcomes else "inconclusive" if "inconclusive" in outcomes else "holds"


def vote(support: Support, state: CheckState, check: Check | None, elsewhere: frozenset[str] = frozenset()) -> Vote | None:
    """The vote of ``support``'s check, from how the expectations the assertion reads came out (``VOTE``); None when
    nothing was measured. ``elsewhere``: the metrics of the check that other assertions of the claim name as testing
    their own sentences; an assertion that names none of the check's metrics reads the rest.

    In order: a regime expectation that did not hold makes the run out-of-regime; a control that did not hold makes
    it undecided, never against; an assertion is against only from effect expectations it reads. An expectation that
    holds votes for only if it could have failed: its counterparts all fail it and none is a constant or a function
    of the effect's own values (``discriminates``); it is no identity, and no seeded value whose seeds all agree, outside
    an analytic single value; it is at best direction-only when its threshold asks less than the source's size; and
    the verdict is provisional unless it and its counterparts were fixed before the result or confirmed on fresh seeds."""
    r = state.result
    measured = state.status in ("passed", "failed", "known-failing", "inconclusive", "out-of-regime")
    if not measured or r is None or not r.measured:
        return None
    every = _read(state, [], check)
    regime = [ev for ev, _ in every if ev.regime and ev.outcome != "holds"]
    if regime:
        return Vote(None, _said(regime[0]), out_of_regime=True, reason="out-of-regime", deciding=(regime[0].metric,))
    controls = [ev for ev, _ in every if ev.control and ev.outcome != "holds"]
    if controls:
        return Vote(
            None,
            f"{support.check}'s control failed: {_said(controls[0])}",
            reason="control-failed",
            deciding=(controls[0].metric,),
        )
    named = support.metrics or [ev.metric for ev, _ in every if ev.metric not in elsewhere] or [ev.metric for ev, _ in every]
    read = [(ev, spec) for ev, spec in _read(state, named, check) if not ev.regime and not ev.control]
    if not read:
        why = f"{support.check}: it reads no effect expectation (only a control or the regime), which cannot support"
        return Vote(None, why, reason="no-effect-read")
    outcome = _outcome([ev for ev, _ in read])
    value = VOTE[(support.stance, outcome)]
    if outcome != "holds" or value == 0:
        on = [ev.metric for ev, _ in read if ev.outcome == outcome]
        where = f" ({', '.join(on[:2])}{', …' if len(on) > 2 else ''})" if on else ""
        why = {"fails": f"{support.check}: an expectation it reads failed{where}", "inconclusive": f"the seeds disagree{where}"}
        reason = {"fails": "failed", "inconclusive": "seeds-disagree"}.get(outcome, "not-refuted")
        text = why.get(outcome) or f"the refuting check {support.check} did not refute"
        return Vote(value, text, reason=reason, deciding=tuple(on))
    held = f"the refuting check {support.check} held" if support.stance == "refutes" else f"{support.check} holds"
    if value == -1:
        return Vote(value, held, reason="refuted", deciding=tuple(ev.metric for ev, _ in read))
    return _support(support, state, check, read, held, every)


def _said(e: Evaluated) -> str:
    return f"{e.metric} = {beside(e.measured, e.value)}, expected {e.op} {e.value:g} ({e.outcome})"


def _unchallenged(ev: Evaluated) -> str:
    """Why ``ev``'s counterparts do not show it could have failed: one is flagged (a constant, a function of the
    effect), or one meets it too or is undecided on it; '' when they all fail it (or it names none)."""
    flagged = next((c for c in ev.against if c.flag is not None), None)
    if flagged is not None:
        return f"the counterpart {flagged.metric} {FLAGGED[flagged.flag]}: it challenges nothing ({ev.metric})"
    if ev.discriminates is False:
        met = next((c for c in ev.against if c.outcome != "fails"), None)
        how = "meets it too" if met is None or met.outcome == "holds" else "is undecided on it"
        return f"it could not have failed: the counterpart {met.metric if met else '?'} {how} ({ev.metric})"
    return ""


def _support(support: Support, state: CheckState, check: Check | None, read: list, held: str, every: list) -> Vote:
    """The vote for an assertion whose effect expectations all held: only as much as they could have failed (a
    control its counterpart meets too cannot tell the models apart: it blocks support, not a contradiction)."""
    blind = next(((why, ev.metric) for ev, _ in every if ev.control and (why := _unchallenged(ev))), None)
    if blind:
        return Vote(None, blind[0], reason="unchallenged", deciding=(blind[1],))
    analytic = check is not None and check.tier == "analytic"
    if analytic and all(ev.seeds == "value" for ev, _ in read):
        return Vote(1, f"{held} analytically", reason="analytic", deciding=tuple(ev.metric for ev, _ in read))
    voting = [(ev, spec) for ev, spec in read if not (spec is not None and spec.identity)]
    if not voting:
        why = f"{support.check} holds by construction: an identity is support only in an analytic check"
        return Vote(None, why, reason="identity", deciding=tuple(ev.metric for ev, _ in read))
    hacked = [ev.metric for ev, _ in voting if ev.metric in state.post_hoc]
    if hacked:
        why = f"post-hoc: {hacked[0]} was moved after its result; it votes for nothing until fresh seeds confirm it"
        return Vote(None, why, reason="post-hoc", deciding=(hacked[0],))
    for ev, _ in voting if not analytic else ():  # an exact fact has no spread; a toy's measurement must
        values = state.result.metrics[ev.metric].seeds if ev.metric in state.result.metrics else []
        if len(values) >= 2 and max(values) == min(values):
            why = (
                f"{ev.metric} is the same on all {len(values)} seeds: a seeded measurement with no spread decides nothing "
                "(an identity? mark it identity: true)"
            )
            return Vote(None, why, reason="no-spread", deciding=(ev.metric,))
    weak = next(((why, ev.metric) for ev, _ in voting if (why := _unchallenged(ev))), None)
    if weak:
        return Vote(None, weak[0], reason="unchallenged", deciding=(weak[1],))
    if not any(ev.discriminates for ev, _ in voting):
        why = f"unchallenged: no counterpart shows that {support.check} could have failed"
        return Vote(None, why, reason="unchallenged", deciding=tuple(ev.metric for ev, _ in voting))
    unfixed, on = _unfixed(state, voting)
    weaker = [spec for _, spec in voting if spec is not None and spec.weaker_than_source()]
    if unfixed:
        return Vote(1, unfixed, bool(weaker), provisional=True, reason="unconfirmed", deciding=on)
    if weaker:
        says = weaker[0].source_value.says if weaker[0].source_value else ""
        why = f"holds in direction; {weaker[0]} is weaker than the source's size ({says})"
        return Vote(1, why, True, reason="weaker-than-source", deciding=tuple(w.metric for w in weaker))
    return Vote(1, f"{held} and its counterparts fail it", reason="held", deciding=tuple(ev.metric for ev, _ in voting))


def _unfixed(state: CheckState, voting: list) -> tuple[str, tuple[str, ...]]:
    """Why a supporting reading is provisional, and on which metrics: a seeded expectation it reads was fixed only
    with or after its result and not confirmed on fresh seeds, or the history that would tell is missing; ('', ())
    when it is fixed."""
    seeded = [ev for ev, _ in voting if ev.seeds != "value"]
    if not seeded:
        return "", ()  # an exact value with no seeds needs no confirming run
    if not state.registration:
        missing = state.no_history or "registration was not read"
        why = f"provisional: {missing}; when its expectations were fixed cannot be told (confirm on fresh seeds)"
        return why, tuple(ev.metric for ev in seeded)
    by_metric = {g.metric: g for g in state.registration}
    for ev in seeded:
        g = by_metric.get(ev.metric)
        if g is not None and g.unstable:
            return f"provisional: {ev.metric} is unstable across machines: {g.unstable}", (ev.metric,)
        if g is not None and not g.fixed:
            return f"provisional: {ev.metric} is {g.kind} ({g.why})", (ev.metric,)
    return "", ()


def _read(state: CheckState, on: list[str], check: Check | None) -> list[tuple[Evaluated, Expectation | None]]:
    """The evaluated expectations the assertion reads (those on the metrics ``on``, or all), each beside the record's
    expectation it evaluated (the result was judged again against the record, so they are in the record's order)."""
    evaluated = state.result.expectation if state.result is not None else []
    specs = list(check.expect) if check is not None and len(check.expect) == len(evaluated) else [None] * len(evaluated)
    return [(ev, spec) for ev, spec in zip(evaluated, specs) if not on or ev.metric in on]
