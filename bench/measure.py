"""A command's own wall and CPU seconds and peak memory, for the benchmarks.

Linux carries a forked process's peak RSS across ``exec``, so a command forked straight from a benchmark
that holds a generated knowledge base in memory reports the benchmark's size as its own. The command is
therefore started by a small Python process between (``MEASURE``), which forks it and reports its
``os.wait4`` usage.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Mapping

#: Runs its arguments as a child; prints the child's CPU seconds, peak RSS in KB and exit status last.
MEASURE = """\
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_utime + usage.ru_stime, usage.ru_maxrss, os.waitstatus_to_exitcode(status), file=sys.stderr)
"""


def measured(argv: list[str], env: Mapping[str, str]) -> tuple[float, float, float, int, str]:
    """Wall seconds, CPU seconds, peak RSS in MB, exit status and stderr of ``argv`` (its stdout is dropped)."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(env)
    )
    wall = time.perf_counter() - start
    *lines, last = proc.stderr.decode(errors="replace").rstrip("\n").split("\n")
    cpu, kb, rc = last.split()
    return wall, float(cpu), int(kb) / 1024, int(rc), "\n".join(lines)


def reference_seconds(repeat: int = 3) -> float:
    """CPU seconds of a fixed piece of pure-Python work (a loop of integer, string and dict operations), the least
    of ``repeat`` runs: the machine's speed at the time of a run, printed beside a benchmark's seconds so that runs
    on different days (a shared machine's speed varies twofold) can be compared."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        seen: dict[str, int] = {}
        for i in range(400_000):
            key = " ".join(f"w{i % 97} x{i % 13}".split())
            seen[key] = seen.get(key, 0) + i
        best = min(best, time.process_time() - start)
    return best
