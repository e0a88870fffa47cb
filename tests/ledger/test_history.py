"""A check's history read from git, and each expectation's registration computed from it, on small repositories
built commit by commit."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from assay import audit
from assay.cli import main
from assay.ledger import history, registration
from assay.ledger.history import CheckHistory, Commit, Point, ResultVersion, Spec
from assay.records.knowledge_base import load
from tests.conftest import load_states, write_result

PASS = {"top1": 60.0, "top1_nofix": 40.0, "signature_acc_shuffled": 0.2, "signature_acc_nofix": 0.9}
WHEN = [1_700_000_000]  # committer dates, one minute apart, so the order is the dates' order too


def git(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    WHEN[0] += 60
    env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"{WHEN[0]} +0000"
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True).stdout


def commit(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def set_threshold(root: Path, value: float) -> None:
    path = root / "claims" / "SOTA-364.yaml"
    text = path.read_text()
    path.write_text(re.sub(r"(op: \">=\",\n\s+value: )[0-9.]+", rf"\g<1>{value}", text, count=1))


@pytest.fixture
def repo(kb_root: Path) -> Path:
    git(kb_root, "init", "-q", "-b", "main")
    return kb_root


def top1(root: Path) -> registration.Registration:
    kb = load(root)
    check = kb.claims["SOTA-364"].check("shuffle-bn")
    from assay.ledger.store import read_ledger

    ledger = read_ledger(root)
    results = {d: ledger.get(("SOTA-364", "shuffle-bn", d)) for d in check.devices}
    return registration.of_check(history.read(root, use_cache=False), "SOTA-364", check, results)[0]


def test_a_threshold_committed_before_its_first_result_is_registered(repo: Path) -> None:
    first = commit(repo, "the record")
    write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "passed", **PASS)
    second = commit(repo, "its first result")
    r = top1(repo)
    assert r.kind == "registered"
    assert (r.committed.sha, r.first_result.sha) == (first, second)
    assert r.why.startswith(f"stated at {first[:8]} (") and f"before its first result at {second[:8]}" in r.why


def test_a_threshold_committed_with_its_first_result_is_with_result(repo: Path) -> None:
    write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "passed", **PASS)
    only = commit(repo, "record and result together")
    r = top1(repo)
    assert r.kind == "with-result" and r.committed.sha == only == r.first_result.sha
    assert r.votes


def test_a_threshold_moved_after_a_failing_result_into_a_pass_is_post_hoc_and_votes_for_nothing(repo: Path) -> None:
    commit(repo, "the record: top1 >= 50")
    write_result(repo, "SOTA-364", "bn-cross-sample", "cpu", "passed", cross_sample_jacobian=0.1)
    write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "failed", **{**PASS, "top1": 45.0})
    commit(repo, "a failing result")
    _, before = load_states(repo)
    set_threshold(repo, 40)
    write_result(repo, "SOTA-364", "bn-cross-sample", "cpu", "passed", cross_sample_jacobian=0.1)
    write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "passed", **{**PASS, "top1": 45.0})
    moved = commit(repo, "threshold lowered, rerun")
    r = top1(repo)
    assert r.kind == "post-hoc" and not r.votes
    (m,) = r.moves
    assert (m.at.sha, m.change, m.device, m.before, m.after) == (moved, ">= 50 -> >= 40", "cpu", "fails", "holds")
    _, after = load_states(repo)
    leak = {a.id: a for a in after["SOTA-364"].assertions}["leak"]
    assert before["SOTA-364"].assertions[0].why["cpu"].startswith("checks disagree")  # the failing result counted
    assert leak.by_device["cpu"] == "inconclusive"  # it passes now, and votes for nothing
    assert leak.why["cpu"].startswith("post-hoc: top1 was moved after its result")
    found = [d.render() for d in audit.run(load(repo)) if d.code == "post-hoc"]
    assert len(found) == 1 and found[0].startswith("claims/SOTA-364.yaml:")
    assert "warning[post-hoc]: check 'shuffle-bn': 'top1 >= 50' is post-hoc" not in found[0]  # today's threshold
    assert "'top1 >= 40' is post-hoc: post-hoc: >= 50 -> >= 40 at" in found[0]


def test_a_move_in_the_working_tree_counts_before_it_is_committed(repo: Path) -> None:
    commit(repo, "the record")
    write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "failed", **{**PASS, "top1": 45.0})
    commit(repo, "a failing result")
    set_threshold(repo, 40)
    write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "passed", **{**PASS, "top1": 45.0})
    r = top1(repo)
    assert r.kind == "post-hoc" and r.moves[0].at is registration.WORKING_TREE
    assert "at the working tree after a result that fails on cpu (then holds)" in r.why


def test_a_threshold_raised_after_a_passing_result_is_moved_not_post_hoc(repo: Path) -> None:
    commit(repo, "the record")
    write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "passed", **PASS)
    commit(repo, "a passing result")
    set_threshold(repo, 55)
    write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "passed", **PASS)
    commit(repo, "threshold raised to the source's size")
    r = top1(repo)
    assert r.kind == "moved-after-result" and r.votes
    assert r.why.startswith("moved after a result: >= 50 -> >= 55 at ")


def _inconclusive_then(seeds_after: int, settling: bool = False) -> list[registration.Registration]:
    c = [Commit(f"{n:040x}", 1_700_000_000 + n, f"c{n}", n) for n in range(4)]
    spec = (Spec("gap", ">", 0.1, seeds="mean"),)
    ch = CheckHistory("SOTA-1", "k", specs=[(c[0], spec)])
    ch.results["cpu"] = [
        (c[1], ResultVersion("inconclusive", (Point("gap", ">", 0.1, 0.12, "inconclusive", 3),))),
        (c[2], ResultVersion("passed", (Point("gap", ">", 0.1, 0.13, "holds", seeds_after),), settling)),
    ]
    return registration.register(ch, spec, {"cpu": ch.results["cpu"][-1][1]})


def test_seeds_raised_after_an_inconclusive_result_are_post_hoc() -> None:
    (r,) = _inconclusive_then(seeds_after=6)
    assert r.kind == "post-hoc" and not r.votes
    assert r.moves[0].change == "seeds read 3 -> 6"


def test_a_settling_run_is_no_optional_stopping_and_confirms_a_post_hoc_move() -> None:
    (r,) = _inconclusive_then(seeds_after=6, settling=True)
    assert r.kind == "registered" and r.votes  # a settling run reads its own fresh seeds
    c = [Commit(f"{n:040x}", 1_700_000_000 + n, f"c{n}", n) for n in range(4)]
    old, new = (Spec("gap", ">", 0.1),), (Spec("gap", ">", 0.05),)
    ch = CheckHistory("SOTA-1", "k", specs=[(c[0], old), (c[2], new)])
    ch.results["cpu"] = [
        (c[1], ResultVersion("failed", (Point("gap", ">", 0.1, 0.07, "fails", None),), seeds=(0, 1, 2))),
        (c[2], ResultVersion("passed", (Point("gap", ">", 0.05, 0.07, "holds", None),), seeds=(0, 1, 2))),
    ]
    (moved,) = registration.register(ch, new, {"cpu": ch.results["cpu"][-1][1]})
    assert moved.kind == "post-hoc" and not moved.votes
    settled = ResultVersion("passed", (Point("gap", ">", 0.05, 0.08, "holds", None),), True, seeds=(1000, 1001, 1002))
    ch.results["cpu"].append((c[3], settled))
    (confirmed,) = registration.register(ch, new, {"cpu": ch.results["cpu"][-1][1]})
    assert confirmed.kind == "post-hoc" and confirmed.confirmed and confirmed.votes and confirmed.shown == "confirmed"
    assert confirmed.why.endswith(f"; confirmed on fresh seeds 1000..1002 on cpu at {c[3].short} (2023-11-14)")


def test_a_settling_run_on_seeds_read_before_confirms_nothing() -> None:
    c = [Commit(f"{n:040x}", 1_700_000_000 + n, f"c{n}", n) for n in range(4)]
    old, new = (Spec("gap", ">", 0.1),), (Spec("gap", ">", 0.05),)
    ch = CheckHistory("SOTA-1", "k", specs=[(c[0], old), (c[2], new)])
    ch.results["cpu"] = [
        (c[1], ResultVersion("failed", (Point("gap", ">", 0.1, 0.07, "fails", None),), seeds=(0, 1, 2))),
        (c[2], ResultVersion("passed", (Point("gap", ">", 0.05, 0.07, "holds", None),), seeds=(3, 4, 5))),
        # a plan that names seeds an earlier run read: the same numbers again, no confirmation
        (c[3], ResultVersion("passed", (Point("gap", ">", 0.05, 0.08, "holds", None),), True, seeds=(2, 6, 7))),
    ]
    (r,) = registration.register(ch, new, {"cpu": ch.results["cpu"][-1][1]})
    assert (r.kind, r.confirmed, r.votes) == ("post-hoc", False, False)


def test_a_shallow_clone_or_a_folder_without_git_has_no_history_and_no_error(repo: Path, tmp_path: Path) -> None:
    commit(repo, "one")
    write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "passed", **PASS)
    commit(repo, "two")
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", repo.as_uri(), str(shallow)], check=True)
    h = history.read(shallow)
    assert not h.available and h.why == "no history here: a shallow clone holds only the latest commits"
    plain = tmp_path / "plain"
    plain.mkdir()
    assert history.read(plain).why == "no history here: not a git repository, or git is not installed"
    kb, states = load_states(shallow)  # the status is computed as without history
    assert states["SOTA-364"].checks[0].registration == ()


def test_assay_history_prints_each_version_and_the_registration(repo: Path, capsys) -> None:
    commit(repo, "the record")
    write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "failed", **{**PASS, "top1": 45.0})
    commit(repo, "a failing result")
    assert main(["--root", str(repo), "history", "SOTA-364/shuffle-bn"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("SOTA-364/shuffle-bn\n  on cpu:\n")
    assert "failed         a failing result" in out
    assert "      top1 = 45 (>= 50): fails" in out
    assert "    top1: registered: stated at " in out
    assert main(["--root", str(repo), "history", "SOTA-364/shuffle-bn", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (check,) = data["checks"]
    assert [v["verdict"] for v in check["devices"]["cpu"]] == ["failed"]
    assert check["devices"]["cpu"][0]["expectations"][0] == "top1 >= 50"
    assert [r["kind"] for r in check["registration"]] == ["registered", "registered"]
    assert main(["--root", str(repo), "history", "SOTA-364/nope"]) == 2
    assert "SOTA-364 has no check 'nope'; its checks: bn-cross-sample, shuffle-bn" in capsys.readouterr().err


def test_history_is_read_with_one_log_and_one_batch_read(repo: Path, monkeypatch) -> None:
    for n in range(5):
        set_threshold(repo, 50 + n)
        write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "passed", **{**PASS, "top1": 70.0})
        commit(repo, f"step {n}")
    calls = []
    real = subprocess.Popen  # what subprocess.run starts too
    monkeypatch.setattr(subprocess, "Popen", lambda cmd, *a, **k: calls.append(cmd[:2]) or real(cmd, *a, **k))
    h = history.read(repo, use_cache=False)
    assert len(h.commits) == 5
    assert [c for c in calls if c[1] in ("log", "cat-file", "-c")] == [["git", "-c"], ["git", "cat-file"]]


def test_the_post_hoc_fixture_is_a_threshold_lowered_after_a_failing_result(repo: Path) -> None:
    import shutil

    from tests.conftest import BROKEN

    commit(repo, "the record: top1 >= 50")
    write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "failed", **{**PASS, "top1": 45.0})
    failing = commit(repo, "a failing result")
    # top1 >= 40; written, not copied with its metadata: a file of the same size and modification time as the one it
    # replaces would look unchanged to git's index
    shutil.copytree(BROKEN / "post-hoc", repo, dirs_exist_ok=True, copy_function=shutil.copyfile)
    write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "passed", **{**PASS, "top1": 45.0})
    moved = commit(repo, "lowered and rerun")
    (found,) = [d.render() for d in audit.run(load(repo)) if d.code == "post-hoc"]
    assert found.startswith("claims/SOTA-364.yaml:46:9: warning[post-hoc]: check 'shuffle-bn': 'top1 >= 40' is post-hoc: ")
    assert f"post-hoc: >= 50 -> >= 40 at {moved[:8]} (" in found and failing[:8] not in found.splitlines()[0]
    assert "after a result that fails on cpu (then holds); it votes for nothing until a run on fresh seeds holds" in found
    assert found.endswith(
        "hint: run the check on fresh seeds in a settling run (assay verify --confirm), or restore what was registered; "
        "assay history SOTA-364/shuffle-bn"
    )


def test_assay_status_warns_of_a_post_hoc_expectation(repo: Path, capsys) -> None:
    commit(repo, "the record")
    write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "failed", **{**PASS, "top1": 45.0})
    commit(repo, "a failing result")
    set_threshold(repo, 40)
    write_result(repo, "SOTA-364", "shuffle-bn", "cpu", "passed", **{**PASS, "top1": 45.0})
    assert main(["--root", str(repo), "status"]) == 0
    err = capsys.readouterr().err
    assert (
        "warning[post-hoc]: claims/SOTA-364.yaml:46: check 'shuffle-bn': 'top1 >= 40' is post-hoc: post-hoc: >= 50 -> >= 40"
        in err
    )


def test_an_anchor_bomb_in_a_past_commit_is_refused_and_that_version_has_no_history(repo: Path, capsys) -> None:
    path = repo / "claims" / "SOTA-364.yaml"
    good = path.read_text()
    first = commit(repo, "the record")
    # nine levels of nine aliases in flow mappings, the last one an expectation's metric: 9**9 values if expanded
    bomb = "".join(f"x{i}: &b{i} {{{', '.join(f'k{j}: *b{i - 1}' for j in range(9))}}}\n" for i in range(1, 10))
    bombed_text = good.replace("id: SOTA-364\n", "id: SOTA-364\nx0: &b0 {k: v}\n" + bomb, 1)
    path.write_text(bombed_text.replace("{metric: top1,", "{metric: *b9,", 1))
    bombed = commit(repo, "a bomb, later removed")
    path.write_text(good)
    commit(repo, "restore")
    started = time.monotonic()
    assert main(["--root", str(repo), "check"]) == 0
    assert time.monotonic() - started < 20
    capsys.readouterr()
    specs = history.read(repo, use_cache=False).check("SOTA-364", "shuffle-bn").specs
    assert [c.sha for c, _ in specs] == [first]  # the bomb's version is skipped; the restored one changed nothing
    assert bombed not in [c.sha for c, _ in specs]
