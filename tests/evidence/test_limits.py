"""assay.evidence.limits: a CPU-time limit that a busy machine does not trip, and a wall limit far above it."""

from __future__ import annotations

import time

import pytest

from assay.evidence import limits
from assay.evidence.judge import CheckTimeout


def test_the_wall_limit_is_far_above_the_cpu_limit_with_a_floor_of_minutes():
    assert limits.wall_limit(1) == limits.WALL_FLOOR_S == 600
    assert limits.wall_limit(120) == 1200
    assert limits.wall_limit(0.2, floor=1) == 2


def test_sleeping_uses_no_cpu_time_so_only_the_wall_limit_stops_it():
    started = time.monotonic()
    with pytest.raises(CheckTimeout, match="^ran 1 s of wall time, over its limit of 0.5 s$"):
        with limits.limited(cpu_limit=0.1, wall=0.5):
            time.sleep(5)
    assert time.monotonic() - started < 3


def test_a_busy_loop_is_stopped_at_its_cpu_limit():
    with pytest.raises(CheckTimeout, match=r"^used 0\.[0-9] s of CPU time, over its limit of 0.3 s$"):
        with limits.limited(cpu_limit=0.3, wall=30):
            while True:
                pass


def test_a_body_within_its_limits_runs_to_its_end_and_leaves_no_handler_behind():
    import signal

    before = signal.getsignal(signal.SIGALRM)
    with limits.limited(cpu_limit=5, wall=30):
        total = sum(range(1000))
    assert total == 499500
    assert signal.getsignal(signal.SIGALRM) == before
