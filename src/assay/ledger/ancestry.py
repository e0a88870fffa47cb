"""The commit graph of a history: which commit is an ancestor of which, in any parent line, and each commit's
first-parent line, along which a file's content at a commit is what its last change on that line made it.

Commits are numbered in topological order (parents first), as ``git log --topo-order --reverse`` lists them. A
history without a merge is one line: a commit precedes another when its number is smaller, and nothing else is
built. With merges, each commit's ancestors are kept as the bits of one integer (one pass over the commits, parents
first), so that "is A an ancestor of B" is one shift, never a call to git; the first-parent lines are kept as chains
(a commit's line is its chain up to where that chain forks off another, then that one's), so that the last change of
a file on a commit's line is found by bisection.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable


class Ancestry:
    """The parents of each commit (its number in the history; the first parent first) and what follows from them."""

    def __init__(self, parents: list[tuple[int, ...]]):
        self.parents = parents
        self.linear = all(len(p) <= 1 for p in parents)
        self._below: list[int] = []  # per commit: the bits of its proper ancestors
        self._chain: list[int] = []  # per commit: its first-parent chain
        self._fork: list[int] = []  # per chain: the commit its oldest commit's first parent is (-1: a root)
        self._bringers: dict[int, list[int]] | None = None
        if not self.linear:
            self._build()

    def _build(self) -> None:
        for ps in self.parents:
            bits = 0
            for p in ps:
                bits |= self._below[p] | (1 << p)
            self._below.append(bits)
        self._chain = [-1] * len(self.parents)
        for tip in range(len(self.parents) - 1, -1, -1):  # children first: the last commit's line is chain 0
            if self._chain[tip] >= 0:
                continue
            chain, c = len(self._fork), tip
            while c >= 0 and self._chain[c] < 0:
                self._chain[c] = chain
                c = self.parents[c][0] if self.parents[c] else -1
            self._fork.append(c)

    def precedes(self, a: int, b: int) -> bool:
        """Whether commit ``a`` is a proper ancestor of commit ``b``."""
        if self.linear or b >= len(self._below):  # past the last commit: the working tree
            return a < b
        return a < b and bool(self._below[b] >> a & 1)

    def on_line(self, a: int, b: int) -> bool:
        """Whether commit ``a`` is ``b`` or one of its first-parent ancestors."""
        if self.linear:
            return a <= b
        chain, limit = self._chain[b], b
        while chain != self._chain[a]:
            limit = self._fork[chain]
            if limit < a:
                return False
            chain = self._chain[limit]
        return a <= limit

    def last_on_line(self, changes: list[int], c: int) -> int | None:
        """Of ``changes`` (commit numbers, ascending), the last on ``c``'s first-parent line, ``c`` included: the
        change that made a file what it is at ``c`` (None: no change on that line yet)."""
        k = bisect_right(changes, c)
        if self.linear:
            return changes[k - 1] if k else None
        return next((a for a in reversed(changes[:k]) if self.on_line(a, c)), None)

    def bringers(self, commits: Iterable[int]) -> set[int]:
        """The merges that brought any of ``commits`` onto the line of their first parent."""
        if self.linear:
            return set()
        if self._bringers is None:
            self._bringers = {}
            for m, ps in enumerate(self.parents):
                if len(ps) < 2:
                    continue
                side = self._below[m] & ~(self._below[ps[0]] | 1 << ps[0])
                while side:
                    low = side & -side
                    self._bringers.setdefault(low.bit_length() - 1, []).append(m)
                    side ^= low
        return {m for c in commits for m in self._bringers.get(c, ())}
