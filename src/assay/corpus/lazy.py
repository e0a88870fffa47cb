"""Values made when looked at and let go when their consumer is done: one claim's at a time over 50,000."""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Lazy(MutableMapping[K, V]):
    """Values by key, each kept as it was read (its plain form: the JSON a cache gave, a record file's data) and made
    from it by ``make`` when looked at, then kept until its consumer is done (``using``).

    ``plain`` is the dict of plain forms the mapping is over (shared, not copied); a value set is its own plain
    form, made by ``make`` too. ``let_go``: what else to do with a plain form when its value is let go (a record
    file lets go of the record it validated)."""

    __slots__ = ("_plain", "_made", "_make", "_let_go")

    def __init__(
        self, make: Callable[[Any], V], plain: dict[K, Any] | None = None, let_go: Callable[[Any], None] | None = None
    ) -> None:
        self._plain: dict[K, Any] = {} if plain is None else plain
        self._made: dict[K, V] = {}
        self._make, self._let_go = make, let_go

    def __getitem__(self, key: K) -> V:
        if key not in self._made:
            self._made[key] = self._make(self._plain[key])
        return self._made[key]

    def plain(self, key: K) -> Any:
        """The plain form of ``key``'s value, made or not."""
        return self._plain[key]

    def __setitem__(self, key: K, plain: Any) -> None:
        self._plain[key] = plain
        self._made.pop(key, None)

    def __delitem__(self, key: K) -> None:
        del self._plain[key]
        self._made.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self._plain

    def __iter__(self) -> Iterator[K]:
        return iter(self._plain)

    def __len__(self) -> int:
        return len(self._plain)

    @contextmanager
    def using(self, *keys: K) -> Iterator[None]:
        """Lend the values of ``keys`` to the ``with`` block, and let them go after it, as plain forms again: a
        command that walks every claim of a large knowledge base holds one claim's records and results at a time."""
        try:
            yield
        finally:
            for key in keys:
                self._made.pop(key, None)
                if self._let_go is not None and key in self._plain:
                    self._let_go(self._plain[key])
