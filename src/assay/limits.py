"""Limits that catch hangs, not slow machines: a CPU-time limit per check, and a wall limit far above it.

A check's ``timeout`` is CPU seconds of the verifier's process (all its threads), so a machine busy
with other work does not trip it. The wall-clock limit is ``wall_limit(timeout)``: it catches a
verifier that sleeps or waits on a child for ever. When a limit passes, ``CheckTimeout`` is raised in
the test (SIGALRM; Python code stops at its next bytecode). Native code that does not return within
``GRACE_S`` more is ended the only way it can be: the process exits, after leaving a note that the
controller records as the check's timeout error (under pytest-xdist, which starts a new worker).
"""

from __future__ import annotations

import os
import resource
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from assay.verdicts import CheckTimeout

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
def limited(cpu_limit: float, wall: float | None = None, on_hard: Callable[[str], None] | None = None) -> Iterator[None]:
    """Run the body under the limits; raises ``CheckTimeout`` in it when one passes.

    ``on_hard(message)`` is called from the watchdog thread when the body has not stopped ``GRACE_S``
    after the signal (native code); it is expected to end the process. Without it the run goes on.
    """
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
                if not done.wait(GRACE_S) and on_hard is not None:
                    on_hard(f"{tripped[0]}, and did not stop within {GRACE_S:g} s (native code)")
                return

    previous = signal.signal(signal.SIGALRM, on_alarm)
    thread = threading.Thread(target=watch, name="assay-limits", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        signal.signal(signal.SIGALRM, previous)
        thread.join()


def exit_now(note: Callable[[], None], message: str) -> None:
    """Leave a note and end the process at once: the last resort against native code past its limit."""
    try:
        note()
    finally:
        sys.stderr.write(f"assay: {message}; ending this worker\n")
        sys.stderr.flush()
        os._exit(70)
