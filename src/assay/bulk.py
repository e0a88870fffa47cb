"""Work over many files at once: shared among forked processes, and with the garbage collector paused.

A knowledge base cloned afresh has every record, ledger file and verifier module to read; ``shared_map`` shares
such work among forked processes, one per core (at most 8), in chunks, and gives the results in order.
Processes are forked only where the system forks and this process runs no other thread (a fork beside a
thread can copy a lock that thread holds): elsewhere the work is done here, with the same results.
``behind`` does work that nothing in this process waits for (writing a large cache) in a forked process while
this one goes on; ``settle`` waits for it, and runs at exit, so a command has written what it writes when it ends.
``no_collection`` pauses the cyclic collector while a great many objects and no cycles are made: each
collection would only walk every object made before (it made parsing two to three times slower in a
process that holds a loaded knowledge base).
"""

from __future__ import annotations

import atexit
import gc
import multiprocessing as mp
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def cores() -> int:
    """The cores this process may run on, at most 8."""
    return min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 8)


def can_fork() -> bool:
    """Whether work may go to forked processes: the system forks, this process runs no other thread, and there is
    another core to run them on."""
    return "fork" in mp.get_all_start_methods() and threading.active_count() == 1 and cores() > 1


def pool() -> ProcessPoolExecutor:
    """Forked processes, one per core (``can_fork`` first)."""
    return ProcessPoolExecutor(cores(), mp_context=mp.get_context("fork"))


def shared_map(chunk: Callable[[Sequence[T]], list[R]], items: Sequence[T], parallel_from: int) -> list[R]:
    """``chunk`` of every item, in order, each call given a run of items and giving one result each: from
    ``parallel_from`` items on, the runs go to forked processes where ``can_fork``, sixteen a core, so that a core
    done first waits for a short run only. ``chunk`` is sent to them by name: a function of a module, or a
    ``functools.partial`` of one."""
    if len(items) < parallel_from or not can_fork():
        return chunk(items)
    size = -(-len(items) // (cores() * 16))
    with no_collection(), pool() as workers:  # the results are unpickled here: many objects, no cycle
        return [r for part in workers.map(chunk, [items[i : i + size] for i in range(0, len(items), size)]) for r in part]


#: The forked processes ``behind`` started that ``settle`` has not waited for.
_BEHIND: dict[int, str] = {}


def behind(work: Callable[[], object], name: str = "") -> None:
    """``work()`` in a forked process while this one goes on, where ``can_fork``; else here, now. What it raises
    is lost with it, so it must be work whose failure only costs time (a cache not written)."""
    if not can_fork():
        work()
        return
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the forked process
        code = 1
        try:
            work()
            code = 0
        finally:
            os._exit(code)  # neither this process's exit handlers nor its buffered output run twice
    _BEHIND[pid] = name


def settle(name: str | None = None) -> None:
    """Wait for the work ``behind`` started under ``name``; all of it, by default."""
    for pid in [pid for pid, n in _BEHIND.items() if name is None or n == name]:
        del _BEHIND[pid]
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


atexit.register(settle)


@contextmanager
def no_collection() -> Iterator[None]:
    """The cyclic garbage collector paused inside, as it was after."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
