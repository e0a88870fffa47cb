"""Work over many files at once: shared among forked processes, and with the garbage collector paused.

A knowledge base cloned afresh has every record, ledger file and verifier module to read; ``shared_map`` shares
such work among forked processes, one per core (at most 8), in chunks, and gives the results in order.
Processes are forked only where the system forks and this process runs no other thread (a fork beside a
thread can copy a lock that thread holds): elsewhere the work is done here, with the same results.
``ahead`` starts such work before it is asked for, so a command that knows what it will read (a first ``assay
check``: the records, the verifier modules, the ledger) keeps every core busy while it works alone on what came
first; the ``shared_map`` that asks for it takes its results. Both use the standard pool (``concurrent.futures``).
``behind`` does work that nothing in this process waits for (writing a large cache) in a forked process while
this one goes on; ``settle`` waits for it (for the work under one name, or all of it), and runs at exit, so a
command has written what it writes when it ends.
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
from collections.abc import Callable, Hashable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager, suppress
from functools import partial
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def cores() -> int:
    """The cores this process may run on, at most 8."""
    return min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 8)


def can_fork() -> bool:
    """Whether work may go to forked processes: the system forks, this process runs no other thread, and there is
    another core to run them on."""
    return "fork" in mp.get_all_start_methods() and threading.active_count() == 1 and cores() > 1


def pool(processes: int = 0) -> ProcessPoolExecutor:
    """Forked processes, one per core or ``processes`` (``can_fork`` first)."""
    return ProcessPoolExecutor(processes or cores(), mp_context=mp.get_context("fork"))


def shared_map(chunk: Callable[[Sequence[T]], list[R]], items: Sequence[T], parallel_from: int) -> list[R]:
    """``chunk`` of every item, in order, each call given a run of items and giving one result each: from
    ``parallel_from`` items on, the runs go to forked processes where ``can_fork``, sixteen a core, so that a core
    done first waits for a short run only. ``chunk`` is sent to them by name: a function of a module, or a
    ``functools.partial`` of one. The same call started ``ahead`` takes the results of the runs started then."""
    job = _AHEAD.pop(_key(chunk, items), None) if _AHEAD else None
    if job is not None:
        return _take(chunk, *job)
    if len(items) < max(parallel_from, 1) or not can_fork():
        return chunk(items)
    with no_collection(), pool() as workers:  # the results are unpickled here: many objects, no cycle
        return [r for run in workers.map(chunk, _runs(items)) for r in run]


#: The jobs ``ahead`` started that no ``shared_map`` has taken yet, by what tells them apart (``_key``): each its
#: runs, and their futures in the one pool that runs every job started ahead (``_AHEAD_POOL``).
_AHEAD: dict[Hashable, tuple[list[Sequence[Any]], list[Future]]] = {}
_AHEAD_POOL: list[ProcessPoolExecutor] = []


def ahead(chunk: Callable[[Sequence[T]], list[R]], items: Sequence[T], parallel_from: int) -> None:
    """Start ``shared_map(chunk, items, parallel_from)`` now; that call, when it comes, takes the results, waiting for
    those not done (a call that differs in an item or an argument is not this job, and runs as it would have).

    Every job started ahead runs in one standard pool (``pool``), forked for the first: the processes take the runs
    in the order the jobs were started, so that the cores go to what this process will wait for first. It has one
    process fewer than the cores, for this process goes on working beside it: each forked process ends up with its
    own copy of much of what this one held at the fork (the pages its reference counts touch), so one more than the
    cores can run only adds memory (the site of 50,000 bench claims on two cores: a peak of 2,237 MB in all its
    processes with two, 1,857 MB with one, for 325 and 332 CPU s). Nothing starts for fewer than ``parallel_from``
    items, or where no process may be forked."""
    key = _key(chunk, items)
    if len(items) < parallel_from or key in _AHEAD or not (_AHEAD_POOL or can_fork()):
        return
    workers = _AHEAD_POOL[0] if _AHEAD_POOL else pool(max(cores() - 1, 1))
    runs = _runs(items)
    try:
        _AHEAD[key] = (runs, [workers.submit(chunk, run) for run in runs])
    except OSError:  # no process to be had: those forked are stopped, and the work is done when it is asked for
        for process in list(workers._processes.values()):  # what Python 3.14's kill_workers() does
            process.kill()
            process.join()
        workers.shutdown(wait=False, cancel_futures=True)
        return
    _AHEAD_POOL[:] = [workers]


def _take(chunk: Callable[[Sequence[Any]], list[Any]], runs: list[Sequence[Any]], futures: list[Future]) -> list[Any]:
    """The results of every run, in order; a run whose process was killed is run here. The pool is shut down once
    every job is taken."""
    out: list[Any] = []
    try:
        with no_collection():  # the results, unpickled as they come: many objects, no cycle
            for run, future in zip(runs, futures):
                try:
                    out += future.result()
                except BrokenProcessPool:
                    out += chunk(run)
    finally:
        if not _AHEAD:
            _close_ahead()
    return out


def _close_ahead() -> None:
    """Cancel the runs no process took yet, and let the processes exit."""
    _AHEAD.clear()
    while _AHEAD_POOL:
        _AHEAD_POOL.pop().shutdown(cancel_futures=True)


def _runs(items: Sequence[T]) -> list[Sequence[T]]:
    """``items`` cut into sixteen runs a core, so that a core done first waits for a short run only."""
    size = -(-len(items) // (cores() * 16))
    return [items[i : i + size] for i in range(0, len(items), size)]


def _key(chunk: Callable[..., Any], items: Sequence[Any]) -> Hashable:
    """What tells one job from another: the function, the arguments bound to it, every item."""
    if isinstance(chunk, partial):
        return (chunk.func.__module__, chunk.func.__qualname__, chunk.args, tuple(sorted(chunk.keywords.items())), tuple(items))
    return (chunk.__module__, chunk.__qualname__, tuple(items))


#: The forked processes ``behind`` started that ``settle`` has not waited for, with the name of their work.
_BEHIND: dict[int, str] = {}


def behind(work: Callable[[], object], name: str = "") -> None:
    """``work()`` in a forked process while this one goes on, where ``can_fork``; else here, now. What it raises
    is lost with it, so it must be work whose failure only costs time (a cache not written). ``name``: what
    ``settle`` may wait for alone (the file it writes)."""
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
    """Wait for the work ``behind`` started under ``name``; all of it, by default, and then the jobs ``ahead``
    started that nobody took are stopped."""
    if name is None:
        _close_ahead()
    for pid in [pid for pid, n in _BEHIND.items() if name is None or n == name]:
        del _BEHIND[pid]
        with suppress(ChildProcessError):
            os.waitpid(pid, 0)


atexit.register(settle)


@contextmanager
def no_collection() -> Iterator[None]:
    """The cyclic garbage collector paused inside, as it was after; what was made inside is frozen (``gc.freeze``:
    the library's way), so that no later collection walks what was loaded again."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if collecting:
            gc.enable()
