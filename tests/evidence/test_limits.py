"""assay.evidence.limits: a CPU-time limit that a loaded machine does not trip, and a wall limit far above it."""

from __future__ import annotations

import threading
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


def test_a_checks_cpu_limit_is_its_timeout_or_three_times_what_its_last_result_used():
    assert limits.cpu_limit(30, None) == 30  # never measured: what the record declares
    assert limits.cpu_limit(30, 5.0) == 30
    assert limits.cpu_limit(30, 24.5) == 73.5  # SOTA-364's sub-batch-trend, from its ledger
    assert limits.cpu_limit(0.3, 0.6) == pytest.approx(1.8)


def test_a_load_above_the_cores_or_a_check_given_little_of_a_core_tells_a_loaded_machine():
    assert limits.contended(1.0, 1.0, load=4.1, cores=2) == "load 4.1 on 2 cores"
    assert limits.contended(1.0, 2.5, load=1.0, cores=2) == "it had 40% of a core"
    assert limits.contended(1.0, 1.05, load=1.9, cores=2) is None


def test_a_cpu_overrun_says_how_much_cpu_and_wall_time_it_took_and_why_it_was_a_rerun():
    with pytest.raises(limits.CpuOverrun) as info:
        with limits.limited(cpu_limit=0.3, wall=30, rerun="the first run stopped at it, load 4.1 on 2 cores"):
            while True:
                pass
    assert 0.3 < info.value.used < 1 and info.value.elapsed >= info.value.used * 0.5
    assert str(info.value).endswith(
        " s of CPU time when rerun alone (the first run stopped at it, load 4.1 on 2 cores), over its limit of 0.3 s"
    )


def test_a_check_run_alone_waits_for_those_running_and_none_starts_until_it_ends(tmp_path):
    folder, order = str(tmp_path), []
    first_in, alone_waits = threading.Event(), threading.Event()

    def check(name: str, alone: bool = False, hold: float = 0.0) -> None:
        with limits.running(folder, alone=alone):
            order.append(f"{name} in")
            first_in.set()
            time.sleep(hold)
            order.append(f"{name} out")

    first = threading.Thread(target=check, args=("first", False, 0.6))
    first.start()
    assert first_in.wait(5)
    rerun = threading.Thread(target=lambda: (alone_waits.set(), check("alone", True, 0.3)))
    rerun.start()
    assert alone_waits.wait(5)
    time.sleep(0.2)  # the rerun has closed the gate and waits for the first check
    later = threading.Thread(target=check, args=("later",))
    later.start()
    for t in (first, rerun, later):
        t.join(10)
    assert order == ["first in", "first out", "alone in", "alone out", "later in", "later out"]
