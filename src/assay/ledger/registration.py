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
from collections.abc import Iterator
from dataclasses import dataclass

from assay.diagnostics import Diagnostic
from assay.ledger.history import CheckHistory, Commit, History, read
from assay.ledger.standing import Standing, standing
from assay.ledger.versions import Point, ResultVersion, Spec, result_summary, result_version

#: The kinds a supported verdict may rest on without a confirming run on fresh seeds.
FIXED_BEFORE = ("registered",)

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
    kind: str  # a key of vocabulary.REGISTRATION
    why: str  # the one line that explains it
    committed: Commit | None  # the commit that first stated it (WORKING_TREE: not committed yet)
    first_result: Commit | None
    moves: tuple[Move, ...] = ()
    confirmed: bool = False  # not registered, and a settling run on fresh seeds after its last move holds
    unstable: str = ""  # why its measurement moved beyond its seed spread between two machines, unconfirmed since
    tried: bool = False  # a settling run on fresh seeds has read it since its last move (held or not)

    @property
    def votes(self) -> bool:
        """Whether it may vote for an assertion: not post-hoc, or post-hoc and confirmed on fresh seeds."""
        return self.kind != "post-hoc" or self.confirmed

    @property
    def fixed(self) -> bool:
        """Whether a supported verdict may rest on it: registered before its result, or confirmed on fresh seeds."""
        return (self.kind in FIXED_BEFORE or self.confirmed) and not self.unstable

    @property
    def shown(self) -> str:
        """Its kind as a reader sees it: `confirmed` once a run on fresh seeds has confirmed it."""
        return "confirmed" if self.confirmed else self.kind


def when(c: Commit | None) -> str:
    """A commit in words: its short id and date, or 'the working tree'."""
    if c is None:
        return "?"
    if not c.sha:
        return "the working tree"
    return f"{c.short} ({time.strftime('%Y-%m-%d', time.gmtime(c.time))})"


def register(ch: CheckHistory, today: tuple[Spec, ...], today_results: dict[str, ResultVersion | None]) -> list[Registration]:
    """The registration of each of ``today``'s expectations (the record as it stands), in order, from the check's
    committed history and ``today_results`` (its ledger files as they stand, per device)."""
    points = [*ch.points(), (WORKING_TREE, today)]
    results: dict[str, list[tuple[Commit, ResultVersion]]] = {
        d: [(c, v) for c, v in vs if v is not None] for d, vs in ch.results.items()
    }
    for device, version in today_results.items():
        versions = results.setdefault(device, [])
        if version is not None and (not versions or ch.last(device) != version):
            versions.append((WORKING_TREE, version))
    prints = {m: fp for v in today_results.values() if v is not None for m, fp in v.fingerprints}
    return [
        _one(spec, standing(spec, k, points, ch.precedes, linear=not ch.merged), ch, results, prints.get(spec.metric))
        for k, spec in enumerate(today)
    ]


def _one(spec: Spec, at: Standing, ch: CheckHistory, results: dict, fp: str | None) -> Registration:
    """One expectation's registration: when what it is (its comparison, threshold, reading, seeds, counterparts and
    regime) last became what it is, against the results that measured it, under its name or another (a rename keeps
    the measurement's values). Registered: it stood, for good, at an ancestor of every result that read it, in any
    line (a branch merged with a merge commit keeps what it fixed before its result)."""
    metric, since, committed = spec.metric, at.since, at.since
    read: dict[str, list[tuple[Commit, ResultVersion, Point | None]]] = {}
    for device, versions in results.items():
        for c, v in versions:
            name = v.measures(metric, fp)
            if name is not None:
                read.setdefault(device, []).append((c, v, next((p for p in v.points if p.metric == name), None)))
    evaluated = [c for vs in read.values() for c, _, _ in vs]
    first = min(evaluated, key=lambda c: c.n) if evaluated else None
    if first is None:
        return Registration(metric, "registered", f"stated at {when(committed)}; no result has evaluated it yet", committed, None)
    if all(at.fixed_before(c, ch.precedes) for c in evaluated):
        kind, why, moves = "registered", f"stated at {when(committed)}, before its first result at {when(first)}", ()
    else:
        moves = tuple(_moves(spec, at, read, ch.precedes))
        if any(m.post_hoc for m in moves):
            m = next(m for m in moves if m.post_hoc)
            kind = "post-hoc"
            why = f"post-hoc: {m.change} at {when(m.at)} after a result that {m.before} on {m.device} (then {m.after})"
        elif moves:
            m = moves[-1]
            kind = "moved-after-result"
            after = m.after or "no result"
            why = f"moved after a result: {m.change} at {when(m.at)} ({m.before} on {m.device} before, {after} after)"
        elif since.n != first.n and not ch.precedes(first, since):
            kind, why = "with-result", f"stated at {when(committed)}, on another line than its first result at {when(first)}"
        else:
            kind, why = "with-result", f"stated at {when(committed)} together with its first result"
    optional = _optional_stopping(read, ch.precedes)
    if optional is not None and kind != "post-hoc":
        kind, why, moves = (
            "post-hoc",
            f"post-hoc: {optional.change} at {when(optional.at)} after an inconclusive result",
            (*moves, optional),
        )
    unstable = _across_machines(read, ch.precedes)
    tried = any(v.settling and at.holds_at(c) for vs in read.values() for c, v, _ in vs)
    confirmation = _confirmed(at.holds_at, read) if kind != "registered" else None
    if confirmation:
        return Registration(metric, kind, f"{why}; {confirmation}", committed, first, tuple(moves), True, unstable, tried)
    tail = {
        "post-hoc": "; it votes for nothing until a run on fresh seeds holds",
        "with-result": "; a verdict that reads it is provisional until a run on fresh seeds confirms it",
        "moved-after-result": "; a verdict that reads it is provisional until a run on fresh seeds confirms it",
    }.get(kind, "")
    if tried and kind != "registered":
        tail = "; a run on fresh seeds since its last move did not confirm it, and its result stands"
    return Registration(metric, kind, why + tail, committed, first, tuple(moves), False, unstable, tried)


def _moves(spec: Spec, at: Standing, read: dict, precedes) -> list[Move]:
    """The move that made ``spec`` what it is at ``at.since``, on each device with a result before it (an ancestor of
    where it began to stand: a result on a line that never saw the move is none): post-hoc where the last result
    before it failed or was undecided and the first after it holds."""
    change = spec.moved(at.before) if at.before is not None else "stated"
    out = []
    for device, vs in read.items():
        prior = [p for c, _, p in vs if at.before_start(c, precedes) and p is not None]
        if not prior:
            continue
        later = [p for c, _, p in vs if at.holds_at(c) and p is not None]
        b, a = prior[-1].outcome, later[0].outcome if later else None
        out.append(Move(at.since, change, device, b, a, b in ("fails", "inconclusive") and a == "holds"))
    return out


def _after_another(items: list[tuple], precedes) -> list[tuple[tuple, tuple]]:
    """Each of ``items`` (commit first, oldest first) after the last one before it that is its ancestor; on one line,
    each after the one before it."""
    return [(earlier[-1], item) for k, item in enumerate(items) if (earlier := [e for e in items[:k] if precedes(e[0], item[0])])]


def _across_machines(read: dict, precedes) -> str:
    """Why the measurement is unstable: between two results on the same seeds from different machines, its mean moved
    by more than its spread over those seeds (max - min), whatever else changed between them; '' when it did not, or
    when a settling run on fresh seeds after the move has decided it since."""
    for device, vs in read.items():
        runs = [(c, v, p) for c, v, p in vs if not v.settling and v.machine and v.seeds]
        for (c0, v0, p0), (c1, v1, p1) in _after_another(runs, precedes):
            a = v0.spread(p0.metric) if p0 is not None else None
            b = v1.spread(p1.metric) if p1 is not None else None
            if a is None or b is None or v0.machine == v1.machine or set(v0.seeds) != set(v1.seeds):
                continue
            since = c1
            if abs(b[0] - a[0]) > max(a[1], b[1]) and not _confirmed(
                lambda c: c.n == since.n or precedes(since, c), {device: vs}
            ):
                return (
                    f"its mean moved {a[0]:.4g} -> {b[0]:.4g} on the same seeds between two machines at {when(c1)}, "
                    f"beyond its spread over them ({max(a[1], b[1]):.3g}); a run on fresh seeds decides it"
                )
    return ""


def _optional_stopping(read: dict, precedes) -> Move | None:
    """Seeds raised after an inconclusive result outside a settling run, where the record does not name them."""
    for device, vs in read.items():
        points = [(c, v, p) for c, v, p in vs if p is not None]
        for (c0, _, p0), (c1, v1, p1) in _after_another(points, precedes):
            grew = p0.seeds_total is not None and p1.seeds_total is not None and p1.seeds_total > p0.seeds_total
            if grew and p0.outcome == "inconclusive" and not v1.settling:
                return Move(c1, f"seeds read {p0.seeds_total} -> {p1.seeds_total}", device, p0.outcome, p1.outcome, True)
    return None


def _confirmed(after, read: dict) -> str:
    """How a settling run at a point ``after`` accepts (for an expectation: where it has stood for good) confirmed it
    ('' when none did): it holds, on seeds disjoint from every seed any earlier result of the check on that device
    read (a plan cannot name seeds already read)."""
    for device, vs in read.items():
        seen: set[int] = set()
        for c, v, p in vs:
            fresh = v.seeds and not (set(v.seeds) & seen)
            if v.settling and after(c) and p is not None and p.outcome == "holds" and fresh:
                return f"confirmed on fresh seeds {min(v.seeds)}..{max(v.seeds)} on {device} at {when(c)}"
            seen |= set(v.seeds)
    return ""


_UNCONFIRMED = (
    "confirm it on fresh seeds: assay verify --confirm (the path for a new check: measure on pilot seeds, commit the "
    "expectations, then run the ledger)"
)
#: Once a confirming run was made, another would be shopping for seeds: what rests on the expectation stays as it reads.
_UNCONFIRMED_TRIED = (
    "no further run confirms it (more fresh seeds would be shopping for a result): a verdict it would support reads "
    "provisional; restore the expectation as registered (assay history) to have its registered result count"
)


def of_check(history: History, claim: str, check, results: dict) -> list[Registration]:
    """``register`` for a record's check (``assay.model.Check``) and its ``Result`` per device, as they stand."""
    today = tuple(from_expectation(e, check.seeds) for e in check.expect)
    return register(history.check(claim, check.id), today, {d: from_result(r) for d, r in results.items()})


def from_expectation(e, seeds=None) -> Spec:
    """The registration key of a record's expectation, with its check's seeds (``assay.experiment.Seeds``)."""
    first, count = (seeds.first, seeds.count) if seeds is not None else (None, None)
    return Spec(
        e.metric, e.op, float(e.value), e.tol, e.seeds, bool(e.control), tuple(e.against), e.interval, e.regime, first, count
    )


def from_result(r) -> ResultVersion | None:
    """A result as the history reads one: each outcome re-read from its own measurements."""
    if r is None or not r.measured:
        return None
    summary = result_summary(r.model_dump(mode="json"))
    return result_version(summary)


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

    @property
    def missing(self) -> str:
        """Why registration cannot be decided here (a shallow clone, no git: ``History.why``); '' when it can."""
        return self.history.why

    def last_change(self, claim: str) -> str:
        """``History.last_change``; '' without a history."""
        return self.history.last_change(claim) if self.history.available else ""

    def of(self, claim: str, check, results: dict) -> tuple[Registration, ...]:
        """``of_check``; empty where the knowledge base has no history (``History.why``)."""
        if not check.expect or not self.history.available:
            return ()
        return tuple(of_check(self.history, claim, check, results))


def diagnostics(kb, ledger=None, seeded: list[str] | None = None, registry: Registry | None = None) -> Iterator[Diagnostic]:
    """``post-hoc`` at every expectation of ``kb`` that votes for nothing because it was moved after its result;
    ``unconfirmed`` at every seeded one fixed only with or after its result and not yet confirmed on fresh seeds (a
    verdict that reads it is provisional); ``no-history`` once where the history that decides this is missing and a
    result reads seeds (``seeded``: the claims whose results do, where the caller knows them). ``ledger`` and
    ``registry``: as the caller read them, else read here."""
    from assay.ledger.store import read_ledger  # only where there is a history to read it against

    registry = Registry(kb.root) if registry is None else registry
    ledger = read_ledger(kb.root) if ledger is None else ledger
    with_results = sorted({key[0] for key in ledger.results} & set(kb.claim_files))  # keys alone: nothing is thawed
    if not with_results:
        return
    if not registry.history.available:
        if seeded is None:  # the first claim whose result reads seeds is the one named: none is validated past it
            seeded = next(([k[0]] for k in sorted(ledger.results) if ledger.reads_seeds(k)), [])
        if not seeded:  # only a seeded verdict needs its history
            return
        first = seeded[0]
        yield kb.claim_files[first].diag(
            (),
            "no-history",
            f"when each expectation was fixed cannot be told ({registry.history.why}): every verdict that reads a "
            f"seeded expectation reads provisional ({len(with_results)} claim(s) with results)",
            "read the knowledge base from a clone with its full history (git fetch --unshallow)",
        )
        return
    for cid in with_results:
        f = kb.claim_files[cid]
        for n, check in enumerate(f.record.checks):
            results = {d: ledger.get((cid, check.id, d)) for d in check.devices}
            seeded = {e.metric for r in results.values() if r is not None for e in r.expectation if e.seeds != "value"}
            for k, r in enumerate(registry.of(cid, check, results)):
                if not r.votes:
                    yield f.diag(
                        ("checks", n, "expect", k),
                        "post-hoc",
                        f"check '{check.id}': '{check.expect[k]}' is post-hoc: {r.why}",
                        "run the check on fresh seeds in a settling run (assay verify --confirm), or restore what was "
                        f"registered; assay history {cid}/{check.id}",
                    )
                elif not r.fixed and r.metric in seeded and check.role != "apparatus":
                    yield f.diag(
                        ("checks", n, "expect", k),
                        "unconfirmed",
                        f"check '{check.id}': '{check.expect[k]}' is {r.kind}: {r.why}",
                        _UNCONFIRMED_TRIED if r.tried else _UNCONFIRMED,
                    )
