"""An attacker who lands a branch through a merge commit: a merge is a point of history like any commit, and a move
made on a branch, or by the merge itself, stays a move after it."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.ledger import registration
from assay.ledger.history import Commit
from tests.conftest import write_result
from tests.ledger.test_history import PASS, commit, git, set_threshold, top1

FAILING = {**PASS, "top1": 45.0}  # fails top1 >= 50, holds top1 >= 40


def at(repo: Path, sha: str) -> str:
    return registration.when(Commit(sha, int(git(repo, "show", "-s", "--format=%ct", sha)), ""))


@pytest.fixture
def repo(kb_root: Path) -> Path:
    """top1 >= 50 on main; a branch whose first result fails it; main moves on, so the merge joins two lines."""
    git(kb_root, "init", "-q", "-b", "main")
    commit(kb_root, "the record, top1 >= 50")
    git(kb_root, "checkout", "-q", "-b", "attacker")
    write_result(kb_root, "SOTA-364", "shuffle-bn", "cpu", "failed", **FAILING)
    commit(kb_root, "a failing result")
    git(kb_root, "checkout", "-q", "main")
    write_result(kb_root, "SOTA-364", "bn-cross-sample", "cpu", "passed", cross_sample_jacobian=0.1)
    commit(kb_root, "another check's result, on main")
    return kb_root


def test_an_evil_merge_that_lowers_the_threshold_and_reruns_is_post_hoc(repo: Path) -> None:
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "attacker")
    set_threshold(repo, 40)
    write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "passed", **FAILING)
    merge = commit(repo, "Merge the attacker's branch (its tree lowers top1 to 40 and reruns)")
    r = top1(repo)
    assert (r.kind, r.votes, r.committed.sha) == ("post-hoc", False, merge)
    assert r.why == (
        f"post-hoc: >= 50 -> >= 40 at {at(repo, merge)} after a result that fails on cpu (then holds); it votes for "
        "nothing until a run on fresh seeds holds"
    )


def test_a_threshold_lowered_on_a_branch_after_its_failing_result_stays_post_hoc_through_the_merge(repo: Path) -> None:
    git(repo, "checkout", "-q", "attacker")
    set_threshold(repo, 40)
    write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "passed", **FAILING)
    lowered = commit(repo, "top1 >= 40, rerun")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "attacker", "-m", "Merge the attacker's branch")
    r = top1(repo)
    assert (r.kind, r.votes, r.committed.sha) == ("post-hoc", False, lowered)
    assert r.why == (
        f"post-hoc: >= 50 -> >= 40 at {at(repo, lowered)} after a result that fails on cpu (then holds); it votes for "
        "nothing until a run on fresh seeds holds"
    )


def test_a_merge_that_takes_back_the_threshold_a_branch_moved_before_its_result_is_a_move(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "tuned", "main")
    set_threshold(repo, 60)
    commit(repo, "top1 >= 60")
    write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "failed", **{**PASS, "top1": 55.0})
    commit(repo, "a result that fails top1 >= 60 and would hold top1 >= 50")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "tuned")
    set_threshold(repo, 50)  # main's threshold, taken back after the result was seen
    merge = commit(repo, "Merge the tuned branch, keeping top1 >= 50")
    r = top1(repo)
    assert (r.kind, r.committed.sha) == ("moved-after-result", merge)
    assert r.why == (
        f"moved after a result: >= 60 -> >= 50 at {at(repo, merge)} (fails on cpu before, no result after); a verdict "
        "that reads it is provisional until a run on fresh seeds confirms it"
    )
