"""assay.ledger.merge: result folders from other machines merged into results/ by the ledger's rules."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay import cli, fingerprints
from assay.ledger import store
from assay.ledger.merge import pick
from assay.ledger.result import Figure, Inputs, Result, RunError, Unstable
from tests.conftest import write_result

KEY = ("THEORY-085", "log-n-cap", "cpu")


def result(root: Path, verdict: str = "passed", finished: str = "2026-01-01T00:00:00Z", **update) -> Result:
    r = Result.model_validate_json(write_result(root, *KEY, verdict, excess=0.0).read_text())
    return r.model_copy(update={"finished": finished, **update})


def error(finished: str) -> RunError:
    return RunError(kind="crash", message="died", finished=finished)


def test_the_rules_pick_fresh_over_stale_then_the_later_and_never_an_error_over_a_measurement(kb_root):
    fresh = result(kb_root)
    current = fresh.inputs.hash
    stale = fresh.model_copy(update={"inputs": Inputs(hash="old", parts={}), "finished": "2026-06-01T00:00:00Z"})
    later = fresh.model_copy(update={"finished": "2026-03-01T00:00:00Z", "verdict": "failed"})
    crashed = fresh.model_copy(
        update={
            "verdict": "error",
            "metrics": {},
            "finished": "2026-04-01T00:00:00Z",
            "last_error": error("2026-04-01T00:00:00Z"),
        }
    )
    assert pick(None, fresh, current) == (fresh, "new")
    assert pick(fresh, fresh, current) == (None, "the same result")
    assert pick(fresh, stale, current) == (None, "ours matches the repository's inputs")
    assert pick(stale, fresh, current) == (fresh, "theirs matches the repository's inputs")
    moved = Unstable(verdicts=["passed", "failed"], since="2026-03-01T00:00:00Z")
    assert pick(fresh, later, current) == (
        later.model_copy(update={"unstable": moved}),
        "theirs finished later; the verdict moved with the same inputs",
    )
    assert pick(later, fresh, current) == (
        later.model_copy(update={"unstable": moved}),  # ours kept, marked
        "ours finished later; the verdict moved with the same inputs",
    )
    marked = later.model_copy(update={"unstable": moved})
    assert pick(marked, later, current) == (None, "ours finished later")  # the mark stays, nothing to write
    assert pick(marked, stale, current) == (None, "ours matches the repository's inputs")  # other inputs: no vote
    kept, why = pick(fresh, crashed, current)
    assert (kept.verdict, kept.metrics, kept.last_error, why) == (
        "passed",
        fresh.metrics,
        crashed.last_error,
        "their later error kept beside our measurement",
    )
    replaced, why = pick(crashed, fresh, current)  # our error came after their measurement: it stays beside it
    assert (replaced.verdict, replaced.last_error, why) == ("passed", crashed.last_error, "their measurement replaces our error")


def copy_of(kb_root: Path, tmp_path: Path) -> Path:
    other = tmp_path / "other"
    shutil.copytree(kb_root, other)
    return other


def test_merging_a_folder_adds_its_results_and_a_second_merge_changes_nothing(kb_root, tmp_path, capsys):
    other = copy_of(kb_root, tmp_path)
    write_result(other, *KEY, "passed", excess=0.0)
    assert cli.main(["--root", str(kb_root), "merge", str(other / "results")]) == 0
    out, err = capsys.readouterr()
    assert out == "added: THEORY-085/log-n-cap/cpu: new\n"
    before = (kb_root / "results" / "THEORY-085" / "log-n-cap.cpu.json").read_bytes()
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 0
    out, err = capsys.readouterr()
    assert out == "kept: THEORY-085/log-n-cap/cpu: the same result\n"
    assert err == "0 added, 0 replaced, 1 kept, 0 conflict(s), 0 skipped\n"
    assert (kb_root / "results" / "THEORY-085" / "log-n-cap.cpu.json").read_bytes() == before


def test_two_fresh_results_with_different_verdicts_are_a_conflict_and_the_later_wins_marked_unstable(kb_root, tmp_path, capsys):
    ours = result(kb_root)
    store.write_result(kb_root, ours)
    other = copy_of(kb_root, tmp_path)
    store.write_result(other, ours.model_copy(update={"verdict": "failed", "finished": "2026-02-01T00:00:00Z"}))
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 0
    out = capsys.readouterr().out
    assert (
        "conflict: THEORY-085/log-n-cap/cpu: ours passed (2026-01-01T00:00:00Z), theirs failed "
        "(2026-02-01T00:00:00Z) with the same inputs; theirs finished later; the verdict moved with the same inputs\n" in out
    )
    kept = json.loads((kb_root / "results" / "THEORY-085" / "log-n-cap.cpu.json").read_text())
    assert (kept["verdict"], kept["unstable"]) == ("failed", {"verdicts": ["passed", "failed"], "since": "2026-02-01T00:00:00Z"})
    before = (kb_root / "results" / "THEORY-085" / "log-n-cap.cpu.json").read_bytes()
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 0  # again: the mark stays, nothing is written
    assert (kb_root / "results" / "THEORY-085" / "log-n-cap.cpu.json").read_bytes() == before


def test_figures_travel_with_the_result_that_names_them(kb_root, tmp_path, capsys):
    other = copy_of(kb_root, tmp_path)
    r = result(other)
    fig = Figure(
        name="curve", file="log-n-cap.cpu.curve.svg", sha256=fingerprints.sha256(b"<svg xmlns='http://www.w3.org/2000/svg'/>")
    )
    store.write_result(other, r.model_copy(update={"figures": [fig]}), {fig.file: "<svg xmlns='http://www.w3.org/2000/svg'/>"})
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 0
    assert (
        kb_root / "results" / "THEORY-085" / "log-n-cap.cpu.curve.svg"
    ).read_text() == "<svg xmlns='http://www.w3.org/2000/svg'/>"


def test_an_unreadable_incoming_file_is_reported_and_nothing_else_is_lost(kb_root, tmp_path, capsys):
    other = copy_of(kb_root, tmp_path)
    write_result(other, *KEY, "passed", excess=0.0)
    (other / "results" / "SOTA-364").mkdir(parents=True, exist_ok=True)
    (other / "results" / "SOTA-364" / "shuffle-bn.cpu.json").write_text("{not json")
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("results/SOTA-364/shuffle-bn.cpu.json:1:1: error[bad-ledger]: ")
    assert "added: THEORY-085/log-n-cap/cpu: new\n" in out


@pytest.mark.parametrize("where", ["nowhere", "a-file"])
def test_a_folder_without_results_is_skipped_with_a_line(kb_root, tmp_path, capsys, where):
    target = tmp_path / where
    if where == "a-file":
        target.write_text("x")
    assert cli.main(["--root", str(kb_root), "merge", str(target)]) == 0
    assert capsys.readouterr().out == f"skipped: {target}: no results/ folder here\n"
