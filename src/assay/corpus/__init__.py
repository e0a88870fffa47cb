"""The corpus: every kind of knowledge-base file at scale, in one place.

The flows (records, ledger, evidence, the overview, the site, the audit) say what a file means; this package alone
lists, stamps, caches (``cache``: data only, never code), makes what was read when it is looked at and lets it
go after (``Lazy``), reads ahead and forks (``forking``) for them, and decides
once whether there is enough to make that worth it (``large``). A flow gives its kind's parse as a function of a
module (sent to forked processes by name) and the type of what it keeps; it names no threshold, pool or collector.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from assay.corpus.cache import UNCACHED, ParseCache, kept
from assay.corpus.forking import ahead as _ahead
from assay.corpus.forking import can_fork, no_collection, settle
from assay.corpus.forking import shared_map as _shared_map
from assay.corpus.home import folder, read_plain, write_plain
from assay.corpus.lazy import Lazy
from assay.files import READ_IN_STAT
from assay.fingerprints import Stamp

__all__ = [
    "LARGE_FROM",
    "Lazy",
    "UNCACHED",
    "ParseCache",
    "ahead",
    "can_fork",
    "folder",
    "kept",
    "kept_or_read",
    "large",
    "map_all",
    "read_ahead",
    "read_plain",
    "settle",
    "without_collector",
    "write_plain",
]

T = TypeVar("T")
R = TypeVar("R")

#: How much work makes a knowledge base large: files to read, each weighed by its ``cost`` (a record or a ledger
#: file 1, a verifier module 50: its syntax tree is parsed and walked four times). From here on its parses are kept between runs
#: (below, parsing takes well under a second) and reading them is shared among forked processes.
LARGE_FROM = 1000


def large(count: int, cost: int = 1) -> bool:
    """Whether ``count`` files of a kind whose files each cost ``cost`` are large: the one decision of scale."""
    return count * cost >= LARGE_FROM


def _fork_from(cost: int) -> int:
    return -(-LARGE_FROM // cost)


def map_all(work: Callable[[Sequence[T]], list[R]], items: Sequence[T], cost: int = 1) -> list[R]:
    """``work`` of every item, in order, each call given a run of items: shared among forked processes where the
    items are ``large``, taken from a job started ``ahead`` where one was. ``work`` goes to them by name: a function
    of a module, or a ``functools.partial`` of one."""
    return _shared_map(work, items, _fork_from(cost))


def kept_or_read(
    store: ParseCache | None,
    rels: Sequence[str],
    stamped: Callable[[str], Stamp | None],
    read: Callable[[Sequence[str]], list[tuple[Stamp | None, R]]],
    cost: int = 1,
) -> list[R]:
    """The value of each file at ``rels`` (root-relative), in order: the one ``store`` keeps for it under the stamp
    ``stamped(rel)`` gives now, else what ``read`` gives of it (``map_all``: each file with the stamp it had as it was
    read, None where that stands for nothing), which ``store`` keeps from now on. An empty store (a first run) keeps
    nothing to compare with: no file is stamped before it is read. ``store`` None: every file is read."""
    found: list[Any] = [None] * len(rels) if store is None or store.empty else [store.get(r, stamped(r)) for r in rels]
    todo = [i for i, value in enumerate(found) if value is None]
    for i, (current, value) in zip(todo, map_all(read, [rels[i] for i in todo], cost)):
        found[i] = value
        if store is not None:
            store.put(rels[i], current, value)
    if store is not None:
        store.save()
    return found


def ahead(work: Callable[[Sequence[T]], list[R]], items: Sequence[T], cost: int = 1) -> None:
    """Start ``map_all(work, items, cost)`` now, in forked processes, where the items are ``large``: that call takes
    the results when it comes."""
    _ahead(work, items, _fork_from(cost))


def read_ahead(paths: Iterable[str]) -> None:
    """Ask the kernel to start reading each file at ``paths`` now (``POSIX_FADV_WILLNEED``), so that the reads that
    follow find it in memory. Read one at a time, each file the page cache has let go is a disk request of its own;
    asked for together, the requests are merged: 100,000 ledger files read 45 s after they were last read took
    6.7-13.1 s and 3.7-6.9 CPU s one at a time, 2.6-3.5 s and 1.7-2.1 CPU s after this. Only a hint: a file that
    cannot be opened as ``read_in_stat`` opens it (a link, gone) is left to the read, which says why."""
    if not hasattr(os, "posix_fadvise"):
        return
    for path in paths:
        try:
            fd = os.open(path, READ_IN_STAT)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
        except OSError:
            pass
        finally:
            os.close(fd)


def without_collector(func: Callable[..., T]) -> Callable[..., T]:
    """``func`` run with the cyclic garbage collector off, as it was after.

    A command holds one knowledge base until it exits, and makes no cycles worth collecting; the collector would
    only rescan its millions of objects whenever a verifier's syntax tree or a ledger file is read: it doubled the
    CPU time of `assay check` on 10,000 claims."""

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> T:
        with no_collection():
            return func(*args, **kwargs)

    return run


def give_back(collect: bool = False) -> None:
    """Memory freed since given back to the system where the C library can (glibc's ``malloc_trim``), after a cyclic
    collection where ``collect``: a site build makes and frees a page's HTML, tens of kilobytes, for each claim
    between long-lived small objects, and the freed space would otherwise stay with the process."""
    global _LIBC
    if collect:
        gc.collect()
    if _LIBC is None:
        try:
            _LIBC = ctypes.CDLL(None)
            _LIBC.malloc_trim.argtypes = [ctypes.c_size_t]
        except (OSError, AttributeError):
            _LIBC = False
    if _LIBC:
        _LIBC.malloc_trim(0)


_LIBC: ctypes.CDLL | bool | None = None
