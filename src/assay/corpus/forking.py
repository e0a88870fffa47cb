"""Work over many files at once: shared among forked processes, and with the garbage collector paused.

A knowledge base cloned afresh has every record, ledger file and verifier module to read; ``shared_map`` shares
such work among forked processes, one per core (at most 8), in chunks, and gives the results in order.
Processes are forked only where the system forks and this process runs no other thread (a fork beside a
thread can copy a lock that thread holds): elsewhere the work is done here, with the same results.
``ahead`` starts such work before it is asked for, so a command that knows what it will read (a first ``assay
check``: the records, the verifier modules, the ledger) keeps every core busy while it works alone on what came
first; the ``shared_map`` that asks for it takes its results.
``behind`` does work that nothing in this process waits for (writing a large cache) in a forked process while
this one goes on; ``settle`` waits for it (for the work under one name, or all of it), and runs at exit, so a
command has written what it writes when it ends.
``no_collection`` pauses the cyclic collector while a great many objects and no cycles are made: each
collection would only walk every object made before (it made parsing two to three times slower in a
process that holds a loaded knowledge base).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import mmap
import multiprocessing as mp
import os
import pickle
import shutil
import signal
import struct
import tempfile
import threading
from collections.abc import Callable, Hashable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
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


def pool() -> ProcessPoolExecutor:
    """Forked processes, one per core (``can_fork`` first)."""
    return ProcessPoolExecutor(cores(), mp_context=mp.get_context("fork"))


def shared_map(chunk: Callable[[Sequence[T]], list[R]], items: Sequence[T], parallel_from: int) -> list[R]:
    """``chunk`` of every item, in order, each call given a run of items and giving one result each: from
    ``parallel_from`` items on, the runs go to forked processes where ``can_fork``, sixteen a core, so that a core
    done first waits for a short run only. ``chunk`` is sent to them by name: a function of a module, or a
    ``functools.partial`` of one. The same call started ``ahead`` takes the results of the runs started then."""
    job = _AHEAD.pop(_key(chunk, items), None) if _AHEAD else None
    if job is not None:
        return job.take()
    if len(items) < max(parallel_from, 1) or not can_fork():
        return chunk(items)
    size = -(-len(items) // (cores() * 16))
    with no_collection(), pool() as workers:  # the results are unpickled here: many objects, no cycle
        return [r for run in workers.map(chunk, [items[i : i + size] for i in range(0, len(items), size)]) for r in run]


#: How much nicer (``os.nice``) each job ``ahead`` starts is than the one before: ten steps, a tenth of the share.
NICER = 10

#: The jobs ``ahead`` started that no ``shared_map`` has taken yet, by what tells them apart (``_key``).
_AHEAD: dict[Hashable, _Job] = {}


def ahead(chunk: Callable[[Sequence[T]], list[R]], items: Sequence[T], parallel_from: int) -> None:
    """Start ``shared_map(chunk, items, parallel_from)`` now, in processes of its own, one a core; that call, when it
    comes, takes the results, waiting for those not done (a call that differs in an item or an argument is not this
    job, and runs as it would have). Each job started runs at a lower priority than the one before (``NICER``), so
    that the cores go to what this process will wait for first, and a later job takes what they leave idle. Nothing
    starts for fewer than ``parallel_from`` items, or where no process may be forked."""
    if len(items) >= parallel_from and can_fork() and _key(chunk, items) not in _AHEAD:
        try:
            _AHEAD[_key(chunk, items)] = _Job(chunk, items, min(19, NICER * len(_AHEAD)))
        except OSError:
            pass  # no folder, pipe or process to be had: the work is done when it is asked for, as ever


def _key(chunk: Callable[..., Any], items: Sequence[Any]) -> Hashable:
    """What tells one job from another: the function, the arguments bound to it, every item."""
    if isinstance(chunk, partial):
        return (chunk.func.__module__, chunk.func.__qualname__, chunk.args, tuple(sorted(chunk.keywords.items())), tuple(items))
    return (chunk.__module__, chunk.__qualname__, tuple(items))


class _Job:
    """One job ``ahead`` started: its runs, forked processes that take them one at a time, and a private folder
    where each leaves the pickle of a run's results (in shared memory where it has room). No thread of this
    process takes part, so this process works on undisturbed while they do, and forks as it likes: a pool's thread
    had to hold the interpreter's lock to hand out each run, and starved the processes while this one worked.

    The runs' numbers wait in a pipe, written there whole before a process is forked, each read whole (4 bytes is
    less than the pipe's atomic unit); each process writes a run's number to another pipe once its file is there."""

    def __init__(self, chunk: Callable[[Sequence[Any]], list[Any]], items: Sequence[Any], nice: int):
        size = -(-len(items) // (cores() * 16))
        self.chunk, self.runs = chunk, [items[i : i + size] for i in range(0, len(items), size)]
        self.folder = tempfile.mkdtemp(prefix="assay-ahead-", dir=_shared_memory())
        self.pids: list[int] = []
        self.done = numbers = numbers_in = done_in = -1
        try:
            numbers, numbers_in = os.pipe()
            self.done, done_in = os.pipe()
            os.write(numbers_in, b"".join(struct.pack("<I", i) for i in range(len(self.runs))))  # 16 a core: 512 bytes
            os.close(numbers_in)
            numbers_in = -1
            for _ in range(cores()):
                self.pids.append(_fork_worker(self, numbers, done_in, nice))
        except OSError:  # no pipe or process to be had: none is left running, nothing is left behind
            self.close()
            raise
        finally:
            for fd in (numbers_in, numbers, done_in):
                if fd >= 0:
                    with contextlib.suppress(OSError):
                        os.close(fd)

    def take(self) -> list[Any]:
        """The results of every run, in order, each read as soon as it and those before it are done; a run no process
        finished (one was killed) is run here."""
        out: list[Any] = []
        done: set[int] = set()
        pending = b""
        try:
            with no_collection():  # the results are unpickled here: many objects, no cycle
                while len(done) < len(self.runs) and (got := os.read(self.done, 4096)):
                    pending += got
                    whole = len(pending) - len(pending) % 4
                    done.update(n for (n,) in struct.iter_unpack("<I", pending[:whole]))
                    pending = pending[whole:]
                    while len(out) < len(self.runs) and len(out) in done:
                        out.append(self._result(len(out)))
                while len(out) < len(self.runs):
                    out.append(self.chunk(self.runs[len(out)]))
        finally:
            self.close()
        return [r for results in out for r in results]

    def _result(self, n: int) -> list[Any]:
        """The results of run ``n``, as the process that ran it left them (run here where it left none whole)."""
        path = os.path.join(self.folder, str(n))
        try:
            with open(path, "rb") as fh:  # mapped, not read: 430 MB of runs at 50,000 claims were a second of copying
                payload = memoryview(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ))
            value = pickle.loads(payload[1:])
        except (OSError, pickle.UnpicklingError, EOFError, ValueError):
            return self.chunk(self.runs[n])  # the process died writing it: run here
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)
        if payload[:1] != b"+":
            raise value
        return value

    def close(self) -> None:
        """Stop the processes (those done have exited), and remove the folder and what is left in it."""
        for pid in self.pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        self.pids = []
        if self.done >= 0:
            with contextlib.suppress(OSError):
                os.close(self.done)
            self.done = -1
        shutil.rmtree(self.folder, ignore_errors=True)


#: The room a job's results may need in shared memory: with less free there (a container's 64 MB), they wait on disk.
SHM_ROOM = 2**30


def _shared_memory() -> str | None:
    """``/dev/shm`` where the system has it with ``SHM_ROOM`` free, else None (the temporary folder)."""
    try:
        st = os.statvfs("/dev/shm")
    except OSError:
        return None
    return "/dev/shm" if st.f_bavail * st.f_frsize >= SHM_ROOM else None


def _fork_worker(job: _Job, numbers: int, done: int, nice: int) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 1  # pragma: no cover - the forked process, to the end
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.close(job.done)
        if nice:
            os.nice(nice)
        while len(got := os.read(numbers, 4)) == 4:
            (n,) = struct.unpack("<I", got)
            try:  # "+" and the results' pickle, or "!" and the exception's
                mark, payload = b"+", pickle.dumps(job.chunk(job.runs[n]), pickle.HIGHEST_PROTOCOL)
            except Exception as e:  # noqa: BLE001 - raised again where the results are taken
                mark, payload = b"!", pickle.dumps(_picklable(e), pickle.HIGHEST_PROTOCOL)
            fd = os.open(os.path.join(job.folder, str(n)), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(mark)
                fh.write(payload)
            os.write(done, struct.pack("<I", n))
        code = 0
    finally:
        os._exit(code)  # neither this process's exit handlers nor its buffered output run twice


def _picklable(e: Exception) -> Exception:
    try:
        pickle.dumps(e)
        return e
    except Exception:  # noqa: BLE001 - an exception that cannot travel is named instead
        return RuntimeError(f"{type(e).__name__}: {e}")


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
        while _AHEAD:
            _AHEAD.popitem()[1].close()
    for pid in [pid for pid, n in _BEHIND.items() if name is None or n == name]:
        del _BEHIND[pid]
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


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
