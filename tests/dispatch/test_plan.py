"""assay.dispatch.plan: which checks run, most stale first within a budget, in shards balanced by time."""

from __future__ import annotations

import itertools
import random

import pytest

from assay.dispatch.plan import Planned, PlanProblem, balance, default_tasks, parse_duration, select
from assay.ledger import store
from assay.records.knowledge_base import load
from tests.conftest import write_result
from tests.verify_kb import make_verify_kb


def planned(name: str, seconds: float) -> Planned:
    return Planned("SOTA-001", name, "cpu", f"verify/test_kb.py::test_{name}", seconds, True, "stale", "")


def test_balance_puts_the_longest_checks_first_each_on_the_least_loaded_shard():
    shards = balance([planned(n, s) for n, s in [("a", 7), ("b", 5), ("c", 4), ("d", 3), ("e", 3), ("f", 2)]], 3)
    # a 7 -> 0, b 5 -> 1, c 4 -> 2, d 3 -> 2 (4 is least), e 3 -> 1 (5), f 2 -> 0 (7, before 2's 7 by index)
    assert [([p.check for p in s.checks], s.seconds) for s in shards] == [(["a", "f"], 9), (["b", "e"], 8), (["c", "d"], 7)]


def test_balance_never_makes_an_empty_shard_and_keeps_every_check_once():
    checks = [planned(f"c{i}", 1.0) for i in range(3)]
    shards = balance(checks, 8)
    assert len(shards) == 3
    assert sorted(p.check for s in shards for p in s.checks) == ["c0", "c1", "c2"]


def test_balance_is_within_four_thirds_of_the_best_split_on_random_durations():
    rng = random.Random(0)
    for _ in range(50):
        seconds = [rng.randint(1, 100) for _ in range(rng.randint(2, 9))]
        n = rng.randint(2, 4)
        longest = max(s.seconds for s in balance([planned(f"c{i}", x) for i, x in enumerate(seconds)], n))
        best = min(
            max(sum(x for x, k in zip(seconds, ks) if k == j) for j in range(n))
            for ks in itertools.product(range(n), repeat=len(seconds))
        )
        assert longest <= best * 4 / 3 + 1e-9, (seconds, n, longest, best)


def test_balance_refuses_zero_tasks():
    with pytest.raises(PlanProblem, match="the number of tasks must be at least 1, not 0"):
        balance([planned("a", 1)], 0)


def test_default_tasks_gives_each_task_about_five_minutes_of_recorded_time():
    assert default_tasks([planned(f"c{i}", 100) for i in range(10)]) == 4  # 1000 s / 300 s
    assert default_tasks([planned("a", 5000)]) == 1  # never more tasks than checks
    assert default_tasks([planned("a", 1)]) == 1


@pytest.fixture
def kb(tmp_path):
    return make_verify_kb(tmp_path / "kb", {"fresh": 30, "stale": 20, "errored": 40, "missing": 50, "old": 10})


def seed_ledger(root):
    write_result(root, "SOTA-001", "fresh", "cpu", "passed", gap=2.0)
    write_result(root, "SOTA-001", "old", "cpu", "passed", gap=2.0)
    write_result(root, "SOTA-001", "stale", "cpu", "passed", parts={"code:verify/test_kb.py": "0ld"}, gap=2.0)
    write_result(root, "SOTA-001", "errored", "cpu", "error")
    for name, finished, seconds in [("fresh", "2026-03-01T00:00:00Z", 3.0), ("old", "2026-02-01T00:00:00Z", 4.0)]:
        path = store.ledger_path(root, "SOTA-001", name, "cpu")
        r = store.read_result(root, path)
        store.write_result(root, r.model_copy(update={"finished": finished, "duration_s": seconds}))


def test_selection_puts_missing_then_errors_then_stale_then_fresh_oldest_first_with_recorded_times(kb):
    seed_ledger(kb)
    chosen = select(load(kb), store.read_ledger(kb), "cpu")
    assert [(p.check, p.why, p.seconds, p.recorded) for p in chosen.planned] == [
        ("missing", "missing", 50.0, False),
        ("errored", "error", 40.0, False),
        ("stale", "stale", 1.0, True),
        ("old", "fresh", 4.0, True),
        ("fresh", "fresh", 3.0, True),
    ]


def test_stale_selects_only_missing_errored_and_stale_results(kb):
    seed_ledger(kb)
    chosen = select(load(kb), store.read_ledger(kb), "cpu", stale=True)
    assert [p.check for p in chosen.planned] == ["missing", "errored", "stale"]


def test_a_budget_takes_the_most_stale_checks_whose_recorded_time_still_fits(kb):
    seed_ledger(kb)
    chosen = select(load(kb), store.read_ledger(kb), "cpu", budget_s=46)
    assert [p.check for p in chosen.planned] == ["errored", "stale", "old"]  # missing (50 s) does not fit; 45 s used
    assert [p.check for p in chosen.over_budget] == ["missing", "fresh"]


def test_a_check_not_declared_for_the_device_is_not_planned(kb):
    path = kb / "claims" / "SOTA-001.yaml"
    path.write_text(path.read_text().replace("devices: [cpu, cuda]", "devices: [cpu]", 1))
    assert [p.check for p in select(load(kb), store.read_ledger(kb), "cuda").planned] == ["errored", "missing", "old", "stale"]


def test_an_unknown_claim_is_a_plan_problem(kb):
    said = r"^--claim SOTA-002: 'SOTA-002' is not a claim of this knowledge base; did you mean 'SOTA-001'\?$"
    with pytest.raises(PlanProblem, match=said):
        select(load(kb), store.read_ledger(kb), "cpu", claims=["SOTA-002"])


@pytest.mark.parametrize(
    "text, seconds",
    [("30m", 1800), ("90s", 90), ("2h", 7200), ("1h30m", 5400), ("45", 45), ("1:30:00", 5400), ("10:00", 600), ("1.5h", 5400)],
)
def test_durations_read_as_users_write_them(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "30 minutes", "m30", "1:2:3:4"])
def test_a_bad_duration_names_itself_and_the_forms_that_work(text):
    with pytest.raises(PlanProblem, match=f"^{text!r} is not a duration; write e.g. 30m, 90s, 1h30m or 1:30:00$"):
        parse_duration(text)
