"""Where one expectation has stood over a check's history: the points (its commits, the working tree last) from which
it has stood on every line up to now, where that began, and what the record stated in its place before.

On one line this is a stretch: from the commit where the expectation last became what it is up to the working tree.
Where branches were merged (``ancestry``), a point belongs to it when the expectation stands there and at every
point that follows it on any line: a branch that moved the expectation away leaves the points before the move out,
even where a merge took the old one back, as a move away and back on one line does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from assay.ledger.history import Commit
from assay.ledger.versions import Spec

Precedes = Callable[[Commit, Commit], bool]


@dataclass(frozen=True)
class Standing:
    since: Commit  # the first point from which it has stood on every line up to now: the commit that stated it
    before: Spec | None  # what the record stated in its place just before (the same metric, else the same place)
    starts: tuple[Commit, ...]  # the points from which it has stood that no other one precedes: where it began to
    fixed: frozenset[int] | None = None  # the numbers of the points from which it has stood (None: one line, since on)

    def holds_at(self, c: Commit) -> bool:
        """Whether it has stood at ``c`` and at every point after it, on every line."""
        return c.n >= self.since.n if self.fixed is None else c.n in self.fixed

    def before_start(self, c: Commit, precedes: Precedes) -> bool:
        """Whether ``c`` came before it began to stand: an ancestor of one of ``starts`` (a move after ``c``)."""
        return not self.holds_at(c) and any(precedes(c, s) for s in self.starts)

    def fixed_before(self, c: Commit, precedes: Precedes) -> bool:
        """Whether it already stood, for good, at a point before ``c`` (an ancestor of ``c``, in any line)."""
        return any(precedes(s, c) for s in self.starts)


def standing(
    spec: Spec, k: int, points: list[tuple[Commit, tuple[Spec, ...] | None]], precedes: Precedes, *, linear: bool
) -> Standing:
    """Where ``spec`` (the ``k``-th expectation today) has stood over ``points`` (oldest first, the working tree
    last, where it stands); ``linear``: the points lie on one line, where it has stood from the last point back to
    the first where it did not."""
    if linear:
        since, stated, seen = points[-1][0], None, object()
        for c, s in reversed(points):
            if s is not seen and (s is None or spec not in s):  # points in a row share the record's version
                stated = s
                break
            since, seen = c, s
        return Standing(since, _in_place_of(spec, k, stated), (since,))
    stands = [(c, s is not None and spec in s) for c, s in points]
    away = _outermost([c for c, ok in stands if not ok], precedes, latest=True)
    fixed = [c for c, ok in stands if ok and not any(precedes(c, d) for d in away)]
    starts = _outermost(fixed, precedes, latest=False)
    since = starts[0]
    prior = [s for c, s in points if precedes(c, since) and not (s is not None and spec in s)]
    return Standing(since, _in_place_of(spec, k, prior[-1] if prior else None), tuple(starts), frozenset(c.n for c in fixed))


def _in_place_of(spec: Spec, k: int, stated: tuple[Spec, ...] | None) -> Spec | None:
    """What ``stated`` had in the place of ``spec``: the same metric, else what stood at its place (a rename)."""
    same = [s for s in stated or () if s.metric == spec.metric]
    return same[0] if same else stated[k] if stated and k < len(stated) else None


def _outermost(commits: list[Commit], precedes: Precedes, *, latest: bool) -> list[Commit]:
    """The latest of ``commits`` (those no other one follows) or the earliest (those no other one precedes), oldest
    first; on one line, the one last or first."""
    kept: list[Commit] = []
    for c in reversed(commits) if latest else commits:
        if not any(precedes(c, m) if latest else precedes(m, c) for m in kept):
            kept.append(c)
    return sorted(kept, key=lambda c: c.n)
