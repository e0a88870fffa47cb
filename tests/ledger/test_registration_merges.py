"""Registration where a contributor's branch lands through a merge commit, a squash or a fast-forward: an expectation
is registered when it stood, for good, at an ancestor of the commit that first brought its result, in any line."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.ledger import registration
from assay.ledger.history import Commit
from tests.conftest import write_result
from tests.ledger.test_history import PASS, commit, git, set_threshold, top1

SEEDS = {"top1": [60.0, 62.0, 61.0], "top1_nofix": [20.0, 23.0, 21.0]}
SETTLED = {"plan": "3 fresh seeds", "seeds": [1000, 1001, 1002], "before_verdict": "passed"}


@pytest.fixture
def repo(kb_root: Path) -> Path:
    """A main line whose record reads ``top1 >= 40``: the branches below fix ``top1 >= 50``."""
    git(kb_root, "init", "-q", "-b", "main")
    set_threshold(kb_root, 40)
    commit(kb_root, "the record, top1 >= 40")
    return kb_root


def at(repo: Path, sha: str) -> str:
    """A commit as registration names it: its short id and date."""
    return registration.when(Commit(sha, int(git(repo, "show", "-s", "--format=%ct", sha)), ""))


def main_moves_on(repo: Path) -> None:
    """Another check's result lands on main while the branch is open: the merge below is a merge of two lines."""
    git(repo, "checkout", "-q", "main")
    write_result(repo, "SOTA-364", "bn-cross-sample", "cpu", "passed", cross_sample_jacobian=0.1)
    commit(repo, "another check's result, on main")


def branch_with_expectation_then_result(repo: Path) -> tuple[str, str]:
    git(repo, "checkout", "-q", "-b", "contributor")
    set_threshold(repo, 50)
    fixed = commit(repo, "top1 >= 50, before any result")
    write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "passed", **PASS)
    result = commit(repo, "its result")
    git(repo, "checkout", "-q", "main")
    return fixed, result


def test_a_branch_merged_with_a_merge_commit_keeps_its_expectation_registered(repo: Path) -> None:
    fixed, result = branch_with_expectation_then_result(repo)
    main_moves_on(repo)
    git(repo, "merge", "-q", "--no-ff", "contributor", "-m", "Merge pull request #1")
    r = top1(repo)
    assert (r.kind, r.committed.sha, r.first_result.sha, r.moves) == ("registered", fixed, result, ())
    assert r.why == f"stated at {at(repo, fixed)}, before its first result at {at(repo, result)}"


def test_a_squash_merged_branch_brings_expectation_and_result_in_one_commit(repo: Path) -> None:
    branch_with_expectation_then_result(repo)
    main_moves_on(repo)
    git(repo, "merge", "-q", "--squash", "contributor")
    squashed = commit(repo, "Squashed pull request #1")
    r = top1(repo)
    assert (r.kind, r.committed.sha, r.first_result.sha) == ("with-result", squashed, squashed)
    assert r.why == (
        f"stated at {at(repo, squashed)} together with its first result; a verdict that reads it is "
        "provisional until a run on fresh seeds confirms it"
    )


def test_a_fast_forwarded_branch_keeps_its_expectation_registered(repo: Path) -> None:
    fixed, result = branch_with_expectation_then_result(repo)
    git(repo, "merge", "-q", "--ff-only", "contributor")
    r = top1(repo)
    assert (r.kind, r.committed.sha, r.first_result.sha) == ("registered", fixed, result)


def test_a_result_from_a_branch_that_began_before_the_expectation_is_not_registered_after_the_merge(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "early")
    write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "passed", **PASS)
    result = commit(repo, "a result, run against top1 >= 40")
    git(repo, "checkout", "-q", "main")
    set_threshold(repo, 50)
    fixed = commit(repo, "top1 >= 50 on main")
    git(repo, "merge", "-q", "--no-ff", "early", "-m", "Merge the early branch")
    r = top1(repo)
    assert (r.kind, r.committed.sha, r.first_result.sha, r.moves) == ("with-result", fixed, result, ())
    assert r.why == (
        f"stated at {at(repo, fixed)}, on another line than its first result at {at(repo, result)}; a verdict that "
        "reads it is provisional until a run on fresh seeds confirms it"
    )


def test_a_threshold_moved_on_main_after_a_merged_result_is_moved_after_result(repo: Path) -> None:
    branch_with_expectation_then_result(repo)
    main_moves_on(repo)
    git(repo, "merge", "-q", "--no-ff", "contributor", "-m", "Merge pull request #1")
    set_threshold(repo, 55)
    write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "passed", **PASS)
    moved = commit(repo, "top1 >= 55 on main, rerun")
    r = top1(repo)
    assert (r.kind, r.committed.sha) == ("moved-after-result", moved)
    assert r.why == (
        f"moved after a result: >= 50 -> >= 55 at {at(repo, moved)} (holds on cpu before, holds after); "
        "a verdict that reads it is provisional until a run on fresh seeds confirms it"
    )


def test_a_settling_run_merged_from_a_branch_confirms_an_expectation_fixed_with_its_result(repo: Path) -> None:
    set_threshold(repo, 50)
    write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "passed", seeds=SEEDS, seeds_used=[0, 1, 2], **PASS)
    together = commit(repo, "top1 >= 50 with its first result")
    git(repo, "checkout", "-q", "-b", "settle")
    settled = {**SETTLED, "before_finished": "2026-01-01T00:00:00Z"}
    write_result(
        repo, "SOTA-364", "shuffle-bn", "cpu", "passed", seeds=SEEDS, seeds_used=[1000, 1001, 1002], settling=settled, **PASS
    )
    settling = commit(repo, "a settling run on fresh seeds")
    main_moves_on(repo)
    git(repo, "merge", "-q", "--no-ff", "settle", "-m", "Merge the settling run")
    r = top1(repo)
    assert (r.kind, r.shown, r.confirmed, r.committed.sha) == ("with-result", "confirmed", True, together)
    assert r.why == (
        f"stated at {at(repo, together)} together with its first result; confirmed on fresh seeds "
        f"1000..1002 on cpu at {at(repo, settling)}"
    )
