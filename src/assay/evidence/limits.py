"""Limits that catch hangs, not slow machines: a CPU-time limit per check, and a wall limit far above it.

A check's ``timeout`` is CPU seconds of the verifier's process (all its threads), so a machine busy
with other work does not trip it. The wall-clock limit is ``wall_limit(timeout)``: it catches a
verifier that sleeps or waits on a child for ever. When a limit passes, ``CheckTimeout`` is raised in
the test (SIGALRM; Python code stops at its next bytecode). Native code that holds the GIL never
reaches a bytecode, and no thread of its process can run; under pytest-xdist a ``HardStop`` watcher
process kills the worker ``GRACE_S`` past the limit after leaving a note, which the controller records
as the check's timeout error (xdist starts a new worker). Without xdist such code runs to its end.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.evidence.judge import CheckTimeout

WALL_FACTOR = 10


WALL_FLOOR_S = 600.0


GRACE_S = 10.0


POLL_S = 0.1


def wall_limit(cpu_limit: float, floor: float = WALL_FLOOR_S) -> float:
    """The wall-clock limit of a check whose CPU limit is ``cpu_limit`` seconds (the ini option
    ``assay_wall_floor_s`` sets ``floor``)."""
    return max(floor, WALL_FACTOR * cpu_limit)


def cpu_seconds() -> float:
    """CPU time of this process's threads and of the children it has waited for."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


@contextmanager
def limited(cpu_limit: float, wall: float | None = None) -> Iterator[None]:
    """Run the body under the limits; raises ``CheckTimeout`` in it when one passes (at the next bytecode)."""
    wall = wall_limit(cpu_limit) if wall is None else wall
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach only the main thread; the wall limit of the caller's runner applies
        return
    start_cpu, start_wall = cpu_seconds(), time.monotonic()
    done = threading.Event()
    tripped: list[str] = []

    def on_alarm(signum: int, frame: object) -> None:
        if tripped and not done.is_set():
            raise CheckTimeout(tripped[0])

    def watch() -> None:
        while not done.wait(POLL_S):
            used, elapsed = cpu_seconds() - start_cpu, time.monotonic() - start_wall
            if not tripped and used > cpu_limit:
                tripped.append(f"used {used:.1f} s of CPU time, over its limit of {cpu_limit:g} s")
            elif not tripped and elapsed > wall:
                tripped.append(f"ran {elapsed:.0f} s of wall time, over its limit of {wall:g} s")
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
            tripped.append(f"used {used:.1f} s of CPU time, over its limit of {cpu_limit:g} s")
        if tripped:  # the verifier caught the timeout or ignored SIGALRM: past its limit is past it all the same
            raise CheckTimeout(tripped[0])
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


@dataclass
class Sigint:
    """Whether a real Ctrl-C arrived while a verifier ran (``interrupts``)."""

    seen: bool = False

    def __bool__(self) -> bool:
        return self.seen


@contextmanager
def interrupts() -> Iterator[Sigint]:
    """Tell a real Ctrl-C (SIGINT) from a ``KeyboardInterrupt`` a verifier raises itself."""
    flag = Sigint()
    try:
        previous = signal.getsignal(signal.SIGINT)

        def on_sigint(signum: int, frame: Any) -> None:
            flag.seen = True
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
        peak = peak_rss_mb()
        if device == "cuda":
            import torch

            peak = torch.cuda.max_memory_allocated() / 2**20
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
