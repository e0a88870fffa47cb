"""Whether each expectation was fixed before its result, computed from the check's history (``history``).

- ``registered``: the expectation (metric, comparison, threshold, seed reading, control, counterparts) was committed
  before the first result that evaluated it (or no result has evaluated it yet);
- ``with-result``: first committed together with its first result;
- ``moved-after-result``: changed after a result existed;
- ``post-hoc``: a move turned a failing or inconclusive result into one that holds, or the seeds read were raised
  after an inconclusive result outside a settling run (optional stopping). A post-hoc expectation votes for
  nothing (``assay.status.vote``) until a settling run, on fresh seeds and read alone, holds after the move: a rerun
  on the same seeds reproduces the same numbers and confirms nothing.

The working tree is the last point of the history: a threshold edited and rerun but not committed yet is a move all
the same. An expectation is known by its metric and, where a check has several on one metric, its place among them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from assay.diagnostics import Diagnostic
from assay.ledger.history import CheckHistory, Commit, History, Point, ResultVersion, Spec, read

KINDS = ("registered", "with-result", "moved-after-result", "post-hoc")

#: The working tree, as the last point of a history.
WORKING_TREE = Commit("", 0, "working tree", 10**9)


@dataclass(frozen=True)
class Move:
    """One change of an expectation after a result had evaluated it."""

    at: Commit
    change: str  # from -> to, in words
    device: str | None
    before: str | None  # its outcome in the last result before the move, on that device
    after: str | None  # in the first result after it
    post_hoc: bool


@dataclass(frozen=True)
class Registration:
    metric: str
    kind: str  # one of KINDS
    why: str  # the one line that explains it
    committed: Commit | None  # the commit that first stated it (WORKING_TREE: not committed yet)
    first_result: Commit | None
    moves: tuple[Move, ...] = ()
    confirmed: bool = False  # post-hoc, and a settling run after the move holds

    @property
    def votes(self) -> bool:
        """Whether it may vote for an assertion: not post-hoc, or post-hoc and confirmed on fresh seeds."""
        return self.kind != "post-hoc" or self.confirmed


def when(c: Commit | None) -> str:
    """A commit in words: its short id and date, or 'the working tree'."""
    if c is None:
        return "?"
    if not c.sha:
        return "the working tree"
    return f"{c.short} ({time.strftime('%Y-%m-%d', time.gmtime(c.time))})"


def _keys(items: Iterable[str]) -> list[tuple[str, int]]:
    """(metric, n): the n-th expectation on that metric, in order."""
    seen: dict[str, int] = {}
    out = []
    for m in items:
        out.append((m, seen.get(m, 0)))
        seen[m] = seen.get(m, 0) + 1
    return out


def _spec_at(specs: tuple[Spec, ...] | None, key: tuple[str, int]) -> Spec | None:
    if specs is None:
        return None
    return dict(zip(_keys(s.metric for s in specs), specs)).get(key)


def _point_at(version: ResultVersion | None, key: tuple[str, int]) -> Point | None:
    if version is None:
        return None
    return dict(zip(_keys(p.metric for p in version.points), version.points)).get(key)


def register(ch: CheckHistory, today: tuple[Spec, ...], today_results: dict[str, ResultVersion | None]) -> list[Registration]:
    """The registration of each of ``today``'s expectations (the record as it stands), in order, from the check's
    committed history and ``today_results`` (its ledger files as they stand, per device)."""
    specs = list(ch.specs)
    if not specs or specs[-1][1] != today:
        specs.append((WORKING_TREE, today))
    results: dict[str, list[tuple[Commit, ResultVersion | None]]] = {d: list(v) for d, v in ch.results.items()}
    for device, version in today_results.items():
        versions = results.setdefault(device, [])
        if not versions or versions[-1][1] != version:
            versions.append((WORKING_TREE, version))
    return [_one(key, specs, results) for key in _keys(s.metric for s in today)]


def _one(key: tuple[str, int], specs: list, results: dict) -> Registration:
    metric = key[0]
    defs = [(c, _spec_at(s, key)) for c, s in specs]
    changes: list[tuple[Commit, Spec | None, Spec | None]] = []  # (commit, before, after) where it changed
    last: Spec | None = None
    for c, spec in defs:
        if spec != last:
            changes.append((c, last, spec))
            last = spec
    committed = next((c for c, _, new in changes if new is not None), None)
    points = {d: [(c, _point_at(v, key), v) for c, v in vs] for d, vs in results.items()}
    evaluated = [c for vs in points.values() for c, p, _ in vs if p is not None]
    first = min(evaluated, key=lambda c: c.n) if evaluated else None
    if first is None:
        return Registration(metric, "registered", f"stated at {when(committed)}; no result has evaluated it yet", committed, None)
    moves = []
    for c, before, after in changes:
        if c is committed and before is None:
            continue
        change = after.moved(before) if before and after else ("removed" if after is None else "stated again")
        for device, vs in points.items():
            prior = [p for cc, p, _ in vs if p is not None and cc.n < c.n]
            if not prior:
                continue
            later = [p for cc, p, _ in vs if p is not None and cc.n >= c.n]
            b, a = prior[-1].outcome, later[0].outcome if later else None
            moves.append(Move(c, change, device, b, a, b in ("fails", "inconclusive") and a == "holds"))
    for device, vs in points.items():  # seeds raised after an inconclusive result, outside a settling run
        read = [(c, p, v) for c, p, v in vs if p is not None]
        for (c0, p0, _), (c1, p1, v1) in zip(read, read[1:]):
            grew = p0.seeds_total is not None and p1.seeds_total is not None and p1.seeds_total > p0.seeds_total
            if grew and p0.outcome == "inconclusive" and not v1.settling:
                change = f"seeds read {p0.seeds_total} -> {p1.seeds_total}"
                moves.append(Move(c1, change, device, p0.outcome, p1.outcome, True))
    if not moves:
        kind = "registered" if committed.n < first.n else "with-result"
        why = (
            f"stated at {when(committed)}, before its first result at {when(first)}"
            if kind == "registered"
            else f"stated at {when(committed)} together with its first result"
        )
        return Registration(metric, kind, why, committed, first)
    hacked = [m for m in moves if m.post_hoc]
    if hacked:
        m = hacked[-1]
        confirmed = any(
            v.settling and p is not None and p.outcome == "holds" and c.n > m.at.n for c, p, v in points.get(m.device, [])
        )
        why = f"post-hoc: {m.change} at {when(m.at)} after a result that {m.before} on {m.device} (then {m.after})"
        tail = "; confirmed by a settling run" if confirmed else "; it votes for nothing until a run on fresh seeds holds"
        return Registration(metric, "post-hoc", why + tail, committed, first, tuple(moves), confirmed)
    m = moves[-1]
    why = f"moved after a result: {m.change} at {when(m.at)} ({m.before} on {m.device} before, {m.after or 'no result'} after)"
    return Registration(metric, "moved-after-result", why, committed, first, tuple(moves))


def of_check(history: History, claim: str, check, results: dict) -> list[Registration]:
    """``register`` for a record's check (``assay.model.Check``) and its ``Result`` per device, as they stand."""
    today = tuple(from_expectation(e) for e in check.expect)
    return register(history.check(claim, check.id), today, {d: from_result(r) for d, r in results.items()})


def from_expectation(e) -> Spec:
    return Spec(e.metric, e.op, float(e.value), e.tol, e.seeds, bool(e.control), tuple(e.against))


def from_result(r) -> ResultVersion | None:
    if r is None or not r.measured:
        return None
    points = tuple(Point(e.metric, e.op, e.value, e.measured, e.outcome, e.seeds_total) for e in r.expectation)
    return ResultVersion(r.verdict, points, bool(getattr(r, "settling", False)))


class Registry:
    """The registration of every expectation of a knowledge base, from one read of its history (made when first
    asked): ``of`` for one check as its record and ledger files stand."""

    def __init__(self, root, history: History | None = None):
        self.root, self._history = root, history

    @property
    def history(self) -> History:
        if self._history is None:
            self._history = read(self.root)
        return self._history

    def last_change(self, claim: str) -> str:
        """``History.last_change``; '' without a history."""
        return self.history.last_change(claim) if self.history.available else ""

    def of(self, claim: str, check, results: dict) -> tuple[Registration, ...]:
        """``of_check``; empty where the knowledge base has no history (``History.why``)."""
        if not check.expect or not self.history.available:
            return ()
        return tuple(of_check(self.history, claim, check, results))


def diagnostics(kb) -> Iterator[Diagnostic]:
    """``post-hoc`` at every expectation of ``kb`` that votes for nothing because it was moved after its result."""
    registry = Registry(kb.root)
    if not registry.history.available:
        return
    from assay.ledger.store import read_ledger  # only where there is a history to read it against

    ledger = read_ledger(kb.root)
    for cid, f in sorted(kb.claim_files.items()):
        for n, check in enumerate(f.record.checks):
            results = {d: ledger.get((cid, check.id, d)) for d in check.devices}
            for k, r in enumerate(registry.of(cid, check, results)):
                if not r.votes:
                    yield f.diag(
                        ("checks", n, "expect", k),
                        "post-hoc",
                        f"check '{check.id}': '{check.expect[k]}' is post-hoc: {r.why}",
                        "run the check on fresh seeds in a settling run, or restore what was registered; "
                        f"assay history {cid}/{check.id}",
                    )
