"""Limits that catch hangs, not a loaded machine: a CPU-time limit per check, and a wall limit far above it.

A check's limit is CPU seconds of the verifier's process (all its threads), so that time spent waiting for a core
does not count. But the CPU time a process is charged for the same work grows when the machine is oversubscribed
(caches and cores shared with other processes, SMT siblings, a hypervisor's steal): SOTA-364's sub-batch-trend,
12-14 CPU s alone, was stopped at its 30 s beside two busy loops under ``-n 2``. So the limit follows from what the
check was measured to use: ``cpu_limit`` is its declared ``timeout``, or ``CPU_MARGIN`` (3) times the CPU seconds of
its last measured result where that is more, a margin that holds under two-fold oversubscription (2-2.5 times as
much, as measured) with room to spare, while a hang still runs into it. And a check stopped at its CPU limit on a
loaded machine (``contended``: the load average above the cores, or the check given under ``CONTENDED_SHARE`` of a
core for its CPU time) is run once more, alone (``running``: no other check of the run is running or starts until
it ends), before it is recorded as an error; the second stop is the error, and says so.

The wall-clock limit is ``wall_limit(limit)``: it catches a verifier that sleeps or waits on a child for ever. When a
limit passes, ``CheckTimeout`` is raised in the test (SIGALRM; Python code stops at its next bytecode;
``CpuOverrun`` for the CPU limit). Native code that holds the GIL never reaches a bytecode, and no thread of its
process can run; under pytest-xdist a ``HardStop`` watcher process kills the worker ``GRACE_S`` past the limit after
leaving a note, which the controller records as the check's timeout error (xdist starts a new worker; such a check
is not rerun). Without xdist such code runs to its end.
"""

from __future__ import annotations

import fcntl
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from assay.evidence.judge import CheckTimeout

#: A check may use this many times the CPU seconds of its last measured result (``cpu_limit``).
CPU_MARGIN = 3.0


#: A check given less than this share of a core for its CPU time (CPU seconds over wall seconds) waited for one.
CONTENDED_SHARE = 0.8


WALL_FACTOR = 10


WALL_FLOOR_S = 600.0


GRACE_S = 10.0


POLL_S = 0.1


def wall_limit(cpu_limit: float, floor: float = WALL_FLOOR_S) -> float:
    """The wall-clock limit of a check whose CPU limit is ``cpu_limit`` seconds (the ini option
    ``assay_wall_floor_s`` sets ``floor``)."""
    return max(floor, WALL_FACTOR * cpu_limit)


def cpu_limit(timeout: float, recorded: float | None) -> float:
    """The CPU limit of a check that declares ``timeout`` and whose last measured result used ``recorded`` CPU seconds
    (None: none was measured): the larger of the two, the second with its margin."""
    return max(timeout, CPU_MARGIN * recorded) if recorded else timeout


class CpuOverrun(CheckTimeout):
    """The verifier passed its CPU limit, having used ``used`` CPU seconds in ``elapsed`` seconds of wall time."""

    def __init__(self, message: str, used: float, elapsed: float):
        super().__init__(message)
        self.used, self.elapsed = used, elapsed


def contended(used: float, elapsed: float, load: float | None = None, cores: int | None = None) -> str | None:
    """Why a check that used ``used`` CPU seconds in ``elapsed`` wall seconds ran on a loaded machine, in words; None
    when it did not. ``load``: the 1-minute load average, ``cores``: the machine's (read here where not given)."""
    load = os.getloadavg()[0] if load is None else load
    cores = (os.cpu_count() or 1) if cores is None else cores
    if load > cores:
        return f"load {load:.1f} on {cores} cores"
    share = used / elapsed if elapsed > 0 else 1.0
    return f"it had {share:.0%} of a core" if share < CONTENDED_SHARE else None


@contextmanager
def running(folder: str | None, *, alone: bool = False) -> Iterator[None]:
    """Run the block as one of the checks of a run whose processes share ``folder`` (None: checks run one at a time,
    nothing to share): beside the others, or ``alone``, once those running have ended and before any other starts.
    Two locks there: a check takes the gate (shared) to start, and holds ``running`` shared while it runs; one to
    run alone holds the gate exclusively (no check starts) and then ``running`` exclusively (none runs)."""
    if folder is None:
        yield
        return
    gate = os.open(os.path.join(folder, "gate.lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        run = os.open(os.path.join(folder, "running.lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(gate, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
            fcntl.flock(run, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
            if not alone:
                fcntl.flock(gate, fcntl.LOCK_UN)  # started: one waiting to run alone may now close the gate
            yield
        finally:
            os.close(run)
    finally:
        os.close(gate)


def cpu_seconds() -> float:
    """CPU time of this process's threads and of the children it has waited for."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


@contextmanager
def limited(cpu_limit: float, wall: float | None = None, *, rerun: str = "") -> Iterator[None]:
    """Run the body under the limits; raises ``CheckTimeout`` in it when one passes (at the next bytecode),
    ``CpuOverrun`` for the CPU limit. ``rerun``: why this is a rerun, said in the message when it stops."""
    wall = wall_limit(cpu_limit) if wall is None else wall
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach only the main thread; the wall limit of the caller's runner applies
        return
    start_cpu, start_wall = cpu_seconds(), time.monotonic()
    done = threading.Event()
    tripped: list[CheckTimeout] = []

    def over_cpu(used: float) -> CpuOverrun:
        when = f" when rerun alone ({rerun})" if rerun else ""
        return CpuOverrun(
            f"used {used:.1f} s of CPU time{when}, over its limit of {cpu_limit:g} s", used, time.monotonic() - start_wall
        )

    def on_alarm(signum: int, frame: object) -> None:
        if tripped and not done.is_set():
            raise tripped[0]

    def watch() -> None:
        while not done.wait(POLL_S):
            used, elapsed = cpu_seconds() - start_cpu, time.monotonic() - start_wall
            if not tripped and used > cpu_limit:
                tripped.append(over_cpu(used))
            elif not tripped and elapsed > wall:
                tripped.append(CheckTimeout(f"ran {elapsed:.0f} s of wall time, over its limit of {wall:g} s"))
            if tripped:
                signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGALRM)
                return

    previous = signal.signal(signal.SIGALRM, on_alarm)
    thread = threading.Thread(target=watch, name="assay-limits", daemon=True)
    thread.start()
    try:
        yield
        used = cpu_seconds() - start_cpu
        if not tripped and used > cpu_limit:
            tripped.append(over_cpu(used))
        if tripped:  # the verifier caught the timeout or ignored SIGALRM: past its limit is past it all the same
            raise tripped[0]
    finally:
        done.set()
        signal.signal(signal.SIGALRM, previous)
        thread.join()


# The watcher: a separate process, because native code that holds the GIL (a regex in C, a long kernel
# call) keeps every Python thread of its own process from running. It reads "name<TAB>cpu<TAB>wall<TAB>message"
# lines (arm) or empty lines (disarm) on stdin, and when the armed process passes its CPU deadline (from
# /proc/PID/stat, all threads) or its wall deadline, writes the message to NOTES/name and kills it.
_WATCHER = r"""
import os, select, signal, sys, time
pid, notes = int(sys.argv[1]), sys.argv[2]
tick, buf, armed = os.sysconf("SC_CLK_TCK"), b"", None
def cpu():
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tick
while True:
    if select.select([0], [], [], 0.2)[0]:
        chunk = os.read(0, 65536)
        if not chunk:
            break
        buf += chunk
        *lines, buf = buf.split(b"\n")
        for line in lines:
            armed = line.decode().split("\t", 3) if line else None
    if armed:
        name, cpu_limit, wall_limit, message = armed[0], float(armed[1]), float(armed[2]), armed[3]
        try:
            over = cpu() > cpu_limit or time.monotonic() > wall_limit
        except OSError:
            break
        if over:
            with open(os.path.join(notes, name + ".tmp"), "w") as f:
                f.write(message)
            os.replace(os.path.join(notes, name + ".tmp"), os.path.join(notes, name))
            os.kill(pid, signal.SIGKILL)
            break
"""


class HardStop:
    """Ends this process from outside when it runs ``GRACE_S`` past a limit without stopping (native code).

    For pytest-xdist workers, whose death the controller records (with the note left in ``notes``) and
    survives. Linux only (``/proc``); elsewhere it does nothing.
    """

    def __init__(self, notes: str):
        self.notes = notes
        self.proc: subprocess.Popen[bytes] | None = None
        if os.path.exists(f"/proc/{os.getpid()}/stat"):
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _WATCHER, str(os.getpid()), notes], stdin=subprocess.PIPE, close_fds=True
            )

    def arm(self, name: str, cpu_limit: float, wall: float, label: str) -> None:
        cpu_deadline = time.process_time() + cpu_limit + GRACE_S
        wall_deadline = time.monotonic() + wall + GRACE_S
        message = (
            f"{label} ran past its limit ({cpu_limit:g} s of CPU time, {wall:g} s of wall time) and did not "
            f"stop within {GRACE_S:g} s (native code)"
        )
        self._send(f"{name}\t{cpu_deadline}\t{wall_deadline}\t{message}\n")

    def disarm(self) -> None:
        self._send("\n")

    def _send(self, line: str) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            try:
                self.proc.stdin.write(line.encode())
                self.proc.stdin.flush()
            except OSError:
                self.proc = None


@contextmanager
def interrupts() -> Iterator[threading.Event]:
    """Tell a real Ctrl-C (SIGINT) from a ``KeyboardInterrupt`` a verifier raises itself: the event is set when a real
    one arrived while the block ran."""
    flag = threading.Event()
    try:
        previous = signal.getsignal(signal.SIGINT)

        def on_sigint(signum: int, frame: Any) -> None:
            flag.set()
            if callable(previous):
                previous(signum, frame)
            raise KeyboardInterrupt

        signal.signal(signal.SIGINT, on_sigint)
    except ValueError:  # not the main thread
        yield flag
        return
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, previous)


def peak_rss_reset() -> None:
    """Start measuring this process's peak resident memory afresh (Linux; elsewhere nothing)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM (Linux)
    except OSError:
        pass


def peak_rss_mb() -> float | None:
    """This process's peak resident memory since ``peak_rss_reset``, in MiB; None where it cannot be read."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


@contextmanager
def measured(device: str) -> Iterator[dict[str, float | None]]:
    """Measure what the block costs: CPU seconds of this process and peak memory in MiB (of the GPU on cuda),
    filled into the dict it yields when the block ends, however it ends."""
    out: dict[str, float | None] = {}
    peak_rss_reset()
    if device == "cuda":
        import torch

        torch.cuda.reset_peak_memory_stats()
    start = cpu_seconds()
    try:
        yield out
    finally:
        peak = torch.cuda.max_memory_allocated() / 2**20 if device == "cuda" else peak_rss_mb()
        out.update(cpu_s=round(cpu_seconds() - start, 3), peak_memory_mb=peak)


@contextmanager
def watched(hard: HardStop | None, note: str, cpu_limit: float, wall: float) -> Iterator[None]:
    """The block watched by the worker's watcher process ``hard`` (if any), which ends the worker past the limits
    and leaves ``note`` to say why."""
    if hard is None:
        yield
        return
    hard.arm(note, cpu_limit, wall, "the verifier")
    try:
        yield
    finally:
        hard.disarm()
