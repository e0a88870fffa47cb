"""assay.ledger.merge: result folders from other machines merged into results/ by the ledger's rules."""

from __future__ import annotations

import datetime as dt
import errno
import json
import shutil
from pathlib import Path

import pytest

from assay import cli, fingerprints
from assay.ledger import layout, store, vetting
from assay.ledger.merge import pick
from assay.ledger.result import Figure, Inputs, Metric, Result, RunError, Unstable
from tests.conftest import BROKEN, VALID, write_result

KEY = ("THEORY-085", "log-n-cap", "cpu")


def result(root: Path, verdict: str = "passed", finished: str = "2026-01-01T00:00:00Z", **update) -> Result:
    r = Result.model_validate_json(write_result(root, *KEY, verdict, excess=0.0).read_text())
    return r.model_copy(update={"finished": finished, **update})


def error(finished: str) -> RunError:
    return RunError(kind="crash", message="died", finished=finished)


def failing(r: Result) -> Result:
    """``r`` as a rerun that measured otherwise would write it: excess 1.0, so its expectation fails."""
    e = r.expectation[0].model_copy(update={"measured": 1.0, "holds": False, "outcome": "fails"})
    return r.model_copy(update={"metrics": {"excess": Metric(value=1.0)}, "expectation": [e], "verdict": "failed"})


def test_the_rules_pick_fresh_over_stale_then_the_later_and_never_an_error_over_a_measurement(kb_root):
    fresh = result(kb_root)
    current = fresh.inputs.hash
    stale = fresh.model_copy(update={"inputs": Inputs(hash="old", parts={}), "finished": "2026-06-01T00:00:00Z"})
    later = failing(fresh).model_copy(update={"finished": "2026-03-01T00:00:00Z"})  # other numbers, same inputs
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
    failing = Result.model_validate_json(write_result(other, *KEY, "failed", excess=1.0).read_text())
    store.write_result(other, failing.model_copy(update={"finished": "2026-02-01T00:00:00Z"}))
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


def from_bytes(root: Path, r: Result) -> Result:
    """``r`` as the engine recorded it before the token digest: each module's part the digest of its bytes."""
    parts = {
        k: fingerprints.digest((root / k[5:]).read_bytes()) if k.startswith("code:") else v for k, v in r.inputs.parts.items()
    }
    return r.model_copy(update={"inputs": Inputs(hash=fingerprints.input_hash(parts), parts=parts)})


def test_a_result_recorded_from_bytes_and_a_later_one_of_the_same_modules_have_the_same_inputs(kb_root, tmp_path, capsys):
    store.write_result(kb_root, from_bytes(kb_root, result(kb_root)))
    other = copy_of(kb_root, tmp_path)
    failing = Result.model_validate_json(write_result(other, *KEY, "failed", excess=1.0).read_text())
    store.write_result(other, failing.model_copy(update={"finished": "2026-02-01T00:00:00Z"}))
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 0
    assert (
        "conflict: THEORY-085/log-n-cap/cpu: ours passed (2026-01-01T00:00:00Z), theirs failed "
        "(2026-02-01T00:00:00Z) with the same inputs; theirs finished later; the verdict moved with the same inputs\n"
        in capsys.readouterr().out
    )


def test_a_result_recorded_from_bytes_its_modules_no_longer_have_loses_to_one_that_matches(kb_root, tmp_path, capsys):
    ours = from_bytes(kb_root, result(kb_root, finished="2026-03-01T00:00:00Z"))
    store.write_result(kb_root, ours)
    verifier = kb_root / "verify" / "test_theory085.py"
    verifier.write_text('"""A docstring: only words, but other bytes."""\n' + verifier.read_text())
    other = copy_of(kb_root, tmp_path)
    write_result(other, *KEY, "failed", excess=1.0)  # earlier than ours, yet its inputs are today's
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 0
    assert capsys.readouterr().out == "replaced: THEORY-085/log-n-cap/cpu: theirs matches the repository's inputs\n"


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
    theirs = f"{other.as_posix()}/results/SOTA-364/shuffle-bn.cpu.json"
    assert out.startswith(f"{theirs}:1:1: error[bad-ledger]: {theirs} is not JSON (")  # their file, not ours
    assert "added: THEORY-085/log-n-cap/cpu: new\n" in out


@pytest.mark.parametrize(
    ("where", "what"), [("nowhere", "not there"), ("a-file", "a file"), ("a-folder", "a folder without results/ in it")]
)
def test_a_merge_of_a_file_or_a_folder_without_results_is_a_usage_error_and_merges_nothing(
    kb_root, tmp_path, capsys, where, what
):
    other = copy_of(kb_root, tmp_path)
    write_result(other, *KEY, "passed", excess=0.0)
    target = tmp_path / where
    if where == "a-file":
        target.write_text("x")
    elif where == "a-folder":
        target.mkdir()
    assert cli.main(["--root", str(kb_root), "merge", str(other), str(target)]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == (
        "",
        f"assay: error: {target} is {what}, so it holds no results to merge; give another checkout's folder or its "
        "results/ folder (assay merge ../gpu-box/results)\n",
    )
    assert not (kb_root / "results" / KEY[0]).exists()  # checked before anything is merged


def _with_figure(root: Path, r: Result, svg: str, sha: str | None = None) -> Result:
    """``r`` naming one figure, written under ``root`` with the text ``svg`` (``sha``: the hash it claims, if not svg's)."""
    sha = sha or fingerprints.sha256(svg.encode())
    fig = Figure(name="curve", file=layout.figure_file(r.check, r.device, "curve", sha), sha256=sha)
    with_figure = r.model_copy(update={"figures": [fig]})
    store.write_result(root, with_figure)
    (store.ledger_path(root, *KEY).with_name(fig.file)).write_text(svg)
    return with_figure


def test_an_incoming_figure_that_is_not_the_one_it_names_refuses_the_result_and_keeps_ours_with_its_figure(
    kb_root, tmp_path, capsys
):
    ours = _with_figure(kb_root, result(kb_root), "<svg>ours</svg>")
    other = copy_of(kb_root, tmp_path)
    later = result(other, finished="2026-03-01T00:00:00Z")
    theirs = _with_figure(other, later, "<svg>tampered</svg>", sha=fingerprints.sha256(b"<svg>drawn</svg>"))
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 1
    their_json = store.ledger_path(other, *KEY).as_posix()
    their_svg = store.ledger_path(other, *KEY).with_name(theirs.figures[0].file).as_posix()
    assert capsys.readouterr().out == (
        f"{their_svg}:1:1: error[merge-figure]: {their_json} names the figure {their_svg}, which is missing, not a "
        "regular file inside its folder, not the figure it names (its hash) or not a safe SVG; the result is not merged, "
        "ours is kept\n"
        "  hint: copy the result with its figures (its whole results/<claim>/ folder), or rerun the check there\n"
    )
    assert store.read_result(kb_root, store.ledger_path(kb_root, *KEY)) == ours
    folder = store.ledger_path(kb_root, *KEY).parent
    assert [p.name for p in folder.glob("*.svg")] == [ours.figures[0].file]
    assert (folder / ours.figures[0].file).read_text() == "<svg>ours</svg>"


def test_a_write_that_fails_is_reported_as_such_and_its_conflict_is_not_counted(kb_root, tmp_path, capsys, monkeypatch):
    ours = result(kb_root)
    store.write_result(kb_root, ours)
    other = copy_of(kb_root, tmp_path)
    failing = Result.model_validate_json(write_result(other, *KEY, "failed", excess=1.0).read_text())
    store.write_result(other, failing.model_copy(update={"finished": "2026-02-01T00:00:00Z"}))

    def read_only(path: Path, data) -> None:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(store, "write_atomic", read_only)
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 1
    out, err = capsys.readouterr()
    assert out == "error: THEORY-085/log-n-cap/cpu: could not write results/THEORY-085/: Read-only file system\n"
    assert err == "0 added, 0 replaced, 0 kept, 0 conflict(s), 0 skipped\n"
    assert store.read_result(kb_root, store.ledger_path(kb_root, *KEY)) == ours


def test_an_incoming_result_for_a_check_the_record_no_longer_has_is_skipped_and_not_written(kb_root, tmp_path, capsys):
    other = copy_of(kb_root, tmp_path)
    gone = result(other).model_copy(update={"check": "gone-check"})
    store.write_result(other, gone)
    store.ledger_path(other, *KEY).unlink()  # only the result of the check the record no longer has
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 0
    theirs = store.ledger_path(other, "THEORY-085", "gone-check", "cpu").as_posix()
    assert capsys.readouterr().out == (
        f"skipped: THEORY-085/gone-check/cpu: not a check and device of this knowledge base ({theirs})\n"
    )
    assert not store.ledger_path(kb_root, "THEORY-085", "gone-check", "cpu").exists()


def test_a_finish_time_in_the_future_does_not_win_the_merge(kb_root, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(vetting, "clock", lambda: dt.datetime(2026, 7, 1, 12, 0, 0, tzinfo=dt.timezone.utc))
    ours = result(kb_root)
    store.write_result(kb_root, ours)
    other = copy_of(kb_root, tmp_path)
    store.write_result(other, result(other, finished="2026-07-01T12:06:00Z"))  # six minutes ahead of our clock
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 1
    theirs = store.ledger_path(other, *KEY).as_posix()
    assert capsys.readouterr().out == (
        f"{theirs}:1:1: error[merge-future]: {theirs}: its 'finished' is 2026-07-01T12:06:00Z, later than this machine's "
        "clock (2026-07-01T12:05:00Z with 300 s of skew allowed); a later time would win the merge\n"
        "  hint: set that machine's clock right and rerun the check there, then merge again\n"
    )
    assert store.read_result(kb_root, store.ledger_path(kb_root, *KEY)) == ours
    store.write_result(other, result(other, finished="2026-07-01T12:04:00Z"))  # within the skew: a clock a little ahead
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 0
    assert capsys.readouterr().out == "replaced: THEORY-085/log-n-cap/cpu: theirs finished later\n"


def test_a_result_is_rejudged_as_the_plugin_judges_it_a_known_failing_check_included(kb_root):
    from assay.ledger.judgement import rejudge
    from assay.records.knowledge_base import load

    claim = load(kb_root).claims[KEY[0]]
    check = claim.check(KEY[1])
    declared = check.model_copy(update={"known_failing": "the cap does not hold at this scale"})
    failing = Result.model_validate_json(write_result(kb_root, *KEY, "failed", excess=1.0).read_text())
    passing = result(kb_root)
    undecided = passing.model_copy(update={"metrics": {"excess": Metric(value=0.0, seeds=[0.0, 1.0])}})
    verdicts = [
        rejudge(claim, c, r).verdict
        for c, r in [(check, passing), (check, failing), (declared, failing), (declared, passing), (check, undecided)]
    ]
    assert verdicts == ["passed", "failed", "known-failing", "failed", "inconclusive"]


# --- each refusal from its broken fixture: the other machine's checkout is the valid one with it laid over ---------


def incoming(tmp_path: Path, broken: str) -> Path:
    """Another machine's checkout: the valid knowledge base with ``broken/<broken>``'s results laid over it."""
    other = tmp_path / "other"
    shutil.copytree(VALID, other)
    shutil.copytree(BROKEN / broken, other, dirs_exist_ok=True)
    return other


def refused(kb_root: Path, other: Path, capsys) -> str:
    """What ``assay merge other`` prints of its one refused result, once it has written nothing."""
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 1
    out, err = capsys.readouterr()
    assert err == "0 added, 0 replaced, 0 kept, 0 conflict(s), 0 skipped\n"
    assert not store.ledger_path(kb_root, *KEY).exists()
    return out


def test_an_incoming_result_finished_past_this_machines_clock_is_refused(kb_root, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(vetting, "clock", lambda: dt.datetime(2026, 7, 1, tzinfo=dt.timezone.utc))
    theirs = store.ledger_path(other := incoming(tmp_path, "merge-future"), *KEY).as_posix()
    assert refused(kb_root, other, capsys) == (
        f"{theirs}:1:1: error[merge-future]: {theirs}: its 'finished' is 2099-01-01T00:00:00Z, later than this machine's "
        "clock (2026-07-01T00:05:00Z with 300 s of skew allowed); a later time would win the merge\n"
        "  hint: set that machine's clock right and rerun the check there, then merge again\n"
    )


def test_an_incoming_failure_whose_expectation_holds_on_a_check_not_known_to_fail_is_misjudged(kb_root, tmp_path, capsys):
    theirs = store.ledger_path(other := incoming(tmp_path, "merge-misjudged"), *KEY).as_posix()
    assert refused(kb_root, other, capsys) == (
        f"{theirs}:1:1: error[merge-misjudged]: {theirs}: its verdict is 'failed', but its expectation as its own "
        "measurements give it makes 'passed'\n"
        "  hint: rerun the check on that machine with this record (pytest verify --claim THEORY-085), then merge again\n"
    )


def test_an_incoming_settling_run_on_seeds_below_the_settling_range_is_refused(kb_root, tmp_path, capsys):
    theirs = store.ledger_path(other := incoming(tmp_path, "merge-settling"), *KEY).as_posix()
    assert refused(kb_root, other, capsys) == (
        f"{theirs}:1:1: error[merge-settling]: {theirs}: its settling seeds [0, 1, 2] are not fresh: a settling run "
        "reads seeds from 1000 on\n"
        "  hint: settle the check with assay verify --settle on that machine, then merge again\n"
    )


def test_an_incoming_result_whose_figure_holds_a_script_is_refused_with_its_figure(kb_root, tmp_path, capsys):
    their_json = store.ledger_path(other := incoming(tmp_path, "merge-figure"), *KEY)
    their_svg = their_json.with_name("log-n-cap.cpu.curve.8d491313ee7d.svg").as_posix()
    assert "<script>" in Path(their_svg).read_text()
    assert refused(kb_root, other, capsys) == (
        f"{their_svg}:1:1: error[merge-figure]: {their_json.as_posix()} names the figure {their_svg}, which is missing, "
        "not a regular file inside its folder, not the figure it names (its hash) or not a safe SVG; the result is not "
        "merged, ours is kept\n"
        "  hint: copy the result with its figures (its whole results/<claim>/ folder), or rerun the check there\n"
    )
