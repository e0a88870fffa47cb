"""assay.corpus.forking: work started ahead in forked processes gives what the work done here gives, in order."""

from __future__ import annotations

import multiprocessing
import os
from functools import partial

import pytest

from assay import audit, corpus
from assay.corpus import cache
from assay.corpus import forking as bulk
from assay.records.knowledge_base import load


@pytest.fixture(autouse=True)
def two_cores(monkeypatch):
    monkeypatch.setattr(bulk.threading, "active_count", lambda: 1)  # pytest-xdist's worker runs a thread of its own
    monkeypatch.setattr(bulk.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    yield
    bulk.settle()
    assert not bulk._AHEAD and not bulk._AHEAD_POOL and not multiprocessing.active_children()


def where(tag: str, items):
    """Each item doubled, with the process and the niceness it was worked on in."""
    return [(tag, item * 2, os.getpid(), os.nice(0)) for item in items]


def exploding(items):
    if 13 in items:
        raise ValueError("thirteen")
    return list(items)


def dying(parent: int, items):
    if 13 in items and os.getpid() != parent:
        os._exit(3)  # a process killed in the middle of a run
    return list(items)


def test_work_started_ahead_runs_in_one_process_fewer_than_the_cores_for_this_one_goes_on_working(monkeypatch):
    monkeypatch.setattr(bulk.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    bulk.ahead(partial(where, "a"), list(range(40)), 10)
    (pool,) = bulk._AHEAD_POOL
    assert pool._max_workers == 2
    bulk.shared_map(partial(where, "a"), list(range(40)), 10)


def test_work_started_ahead_is_what_shared_map_gives_worked_on_elsewhere_and_leaves_no_process():
    items = list(range(100))
    bulk.ahead(partial(where, "a"), items, 10)
    got = bulk.shared_map(partial(where, "a"), items, 10)
    assert [(tag, v) for tag, v, _, _ in got] == [("a", i * 2) for i in items]
    assert {pid for _, _, pid, _ in got} - {os.getpid()} and os.getpid() not in {pid for _, _, pid, _ in got}
    assert not bulk._AHEAD and not bulk._AHEAD_POOL and not multiprocessing.active_children()


def test_every_job_started_ahead_runs_in_the_processes_forked_for_the_first():
    bulk.ahead(partial(where, "first"), list(range(40)), 10)
    (pool,) = bulk._AHEAD_POOL
    bulk.ahead(partial(where, "second"), list(range(40)), 10)
    assert bulk._AHEAD_POOL == [pool]
    second = bulk.shared_map(partial(where, "second"), list(range(40)), 10)
    first = bulk.shared_map(partial(where, "first"), list(range(40)), 10)
    assert [v for _, v, _, _ in first] == [v for _, v, _, _ in second] == [i * 2 for i in range(40)]
    assert len({pid for _, _, pid, _ in first + second}) <= bulk.cores()  # no second pool was forked


def test_a_call_that_differs_from_the_job_started_is_worked_as_ever_and_the_job_is_stopped_at_exit():
    bulk.ahead(partial(where, "a"), list(range(50)), 10)
    other = bulk.shared_map(partial(where, "a"), list(range(51)), 10)  # one item more: another job
    assert [v for _, v, _, _ in other] == [i * 2 for i in range(51)]
    assert len(bulk._AHEAD) == 1 and bulk._AHEAD_POOL  # not taken
    bulk.settle()
    assert not bulk._AHEAD and not bulk._AHEAD_POOL and not multiprocessing.active_children()


def test_what_a_run_raises_elsewhere_is_raised_where_the_results_are_taken():
    bulk.ahead(exploding, list(range(40)), 10)
    with pytest.raises(ValueError, match="thirteen"):
        bulk.shared_map(exploding, list(range(40)), 10)
    assert not bulk._AHEAD_POOL and not multiprocessing.active_children()  # no process left running


def test_a_run_whose_process_was_killed_is_run_here():
    work = partial(dying, os.getpid())
    bulk.ahead(work, list(range(40)), 10)
    assert bulk.shared_map(work, list(range(40)), 10) == list(range(40))


def test_too_little_work_or_no_fork_starts_nothing(monkeypatch):
    bulk.ahead(partial(where, "a"), [1, 2], 10)
    assert not bulk._AHEAD
    monkeypatch.setattr(bulk, "can_fork", lambda: False)
    bulk.ahead(partial(where, "a"), list(range(40)), 10)
    assert not bulk._AHEAD


def test_a_first_check_that_reads_all_ahead_says_what_one_that_reads_nothing_ahead_says(make_kb, monkeypatch, tmp_path):
    """The records, verifier modules and ledger of a knowledge base no cache keeps, read ahead, give the diagnostics
    a check reading each as it comes gives, and the caches a second run takes them from."""
    from tests.conftest import write_result

    root = make_kb("unknown-field")
    write_result(root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    (root / "results" / "THEORY-085" / "nothing.cpu.json").write_text("{not json")
    monkeypatch.setattr(cache, "RACY_S", -1.0)
    monkeypatch.setattr(corpus, "LARGE_FROM", 1)

    def check(cache_dir: str, ahead: bool) -> list[str]:
        monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / cache_dir))
        if ahead:
            audit.ahead(root)
            assert len(bulk._AHEAD) == 3  # records, verifier modules, ledger
        found = [d.render() for d in audit.run(load(root))]
        assert not bulk._AHEAD  # every job taken
        bulk.settle()
        return found

    plain = check("plain", ahead=False)
    assert plain and any("ledger" in d for d in plain)
    assert check("ahead", ahead=True) == plain
    audit.ahead(root)
    assert not bulk._AHEAD  # kept now: nothing to read ahead
    assert check("ahead", ahead=False) == plain


def test_a_job_that_cannot_start_is_done_when_asked_for_and_leaves_nothing(monkeypatch):
    forks = [0]
    real = bulk.os.fork

    def second_fails():
        forks[0] += 1
        if forks[0] == 2:
            raise OSError("Resource temporarily unavailable")
        return real()

    monkeypatch.setattr(bulk.os, "fork", second_fails)
    monkeypatch.setattr(bulk.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)  # two processes ahead
    bulk.ahead(partial(where, "a"), list(range(40)), 10)
    assert not bulk._AHEAD and not bulk._AHEAD_POOL and not multiprocessing.active_children()
    monkeypatch.setattr(bulk.os, "fork", real)
    assert [v for _, v, _, _ in bulk.shared_map(partial(where, "a"), list(range(40)), 10)] == [i * 2 for i in range(40)]


def test_the_results_are_the_same_worked_ahead_in_a_pool_or_here(monkeypatch):
    items = list(range(100))
    bulk.ahead(partial(where, "a"), items, 10)
    ahead = bulk.shared_map(partial(where, "a"), items, 10)
    pooled = bulk.shared_map(partial(where, "a"), items, 10)  # no job ahead: a pool of forked processes
    here = bulk.shared_map(partial(where, "a"), items, 10**9)
    assert [v for _, v, _, _ in ahead] == [v for _, v, _, _ in pooled] == [v for _, v, _, _ in here] == [i * 2 for i in items]
