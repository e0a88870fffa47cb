"""Attacks on the ledger through what another machine sends: a forged input hash, an impossible time, a judgement
its own measurements do not give, a settling block on seeds already read, a time from the future; and a result past the
ledger's bounds, which no reader would read."""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from assay import cli, fingerprints
from assay.evidence import run
from assay.evidence.judge import VerifierError
from assay.evidence.recorder import Evidence
from assay.ledger import layout, merge, problems, store, vetting
from assay.ledger.result import Figure, Metric, Settling
from assay.ledger.store import LedgerProblem
from tests.conftest import write_result

KEY = ("THEORY-085", "log-n-cap", "cpu")


def _incoming(kb_root: Path, tmp_path: Path, **changes) -> Path:
    """A copy of the knowledge base whose one result is ours, edited by ``changes`` (dotted keys)."""
    other = tmp_path / "other"
    shutil.copytree(kb_root, other)
    path = other / "results" / KEY[0] / f"{KEY[1]}.{KEY[2]}.json"
    data = json.loads(path.read_text())
    for dotted, value in changes.items():
        *up, last = dotted.split(".")
        node = data
        for k in up:
            node = node[k]
        node[last] = value
    path.write_text(json.dumps(data))
    return other


def test_a_forged_input_hash_does_not_win_a_merge_over_a_fresh_pass(kb_root, tmp_path, capsys):
    write_result(kb_root, *KEY, "passed", excess=0.0)
    ours = store.read_result(kb_root, store.ledger_path(kb_root, *KEY))
    forged = dict(ours.inputs.parts, **{"code:verify/test_theory085.py": "0" * 16})  # other parts, our hash kept
    other = _incoming(kb_root, tmp_path, **{"inputs.parts": forged, "finished": "2026-06-01T00:00:00Z", "verdict": "failed"})
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 1
    out = capsys.readouterr().out
    theirs = f"{other.as_posix()}/results/THEORY-085/log-n-cap.cpu.json"
    assert out.startswith(
        f"{theirs}:1:1: error[ledger-shape]: {theirs}: 'inputs.hash' is not the hash of its parts\n"
        "  hint: rerun the check with pytest verify; ledger files are written by the plugin, not by hand\n"
    )
    kept = store.read_result(kb_root, store.ledger_path(kb_root, *KEY))
    assert (kept.verdict, kept.unstable, kept.finished) == ("passed", None, ours.finished)


def test_a_ledger_file_whose_hash_is_not_its_parts_is_refused_when_read(kb_root):
    path = write_result(kb_root, *KEY, "passed", excess=0.0)
    data = json.loads(path.read_text())
    data["inputs"]["hash"] = "0" * 16
    path.write_text(json.dumps(data))
    with pytest.raises(LedgerProblem) as info:
        store.read_result(kb_root, path)
    assert info.value.message == "results/THEORY-085/log-n-cap.cpu.json: 'inputs.hash' is not the hash of its parts"


@pytest.mark.parametrize("when", ["9999-99-99T99:99:99Z", "2026-02-30T00:00:00Z", "2026-01-01T24:00:00Z"])
def test_an_impossible_finish_time_is_refused_and_cannot_beat_a_real_result(kb_root, tmp_path, capsys, when):
    write_result(kb_root, *KEY, "passed", excess=0.0)
    other = _incoming(kb_root, tmp_path, finished=when, verdict="failed")
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 1
    assert "'finished': value error, is not a real utc time" in capsys.readouterr().out
    assert store.read_result(kb_root, store.ledger_path(kb_root, *KEY)).verdict == "passed"


def test_a_merge_and_a_run_that_finish_together_keep_the_newer_result(kb_root, tmp_path, monkeypatch):
    # the merge reads our pass and picks theirs; a run writes a newer pass meanwhile: the merge's older pick must
    # not land over it (writers take the folder's lock, and read what they replace under it)
    write_result(kb_root, *KEY, "passed", excess=0.0)
    other = _incoming(kb_root, tmp_path, finished="2026-06-01T00:00:00Z")
    picked, go_on = threading.Event(), threading.Event()
    real_pick = merge.pick

    def slow_pick(*args):
        picked.set()
        go_on.wait(5)
        return real_pick(*args)

    monkeypatch.setattr(merge, "pick", slow_pick)
    merging = threading.Thread(target=cli.main, args=(["--root", str(kb_root), "merge", str(other)],))
    merging.start()
    assert picked.wait(5)
    newest = store.read_result(kb_root, store.ledger_path(kb_root, *KEY)).model_copy(update={"finished": "2026-09-01T00:00:00Z"})
    run_writes = threading.Thread(target=lambda: _write_as_a_run_does(kb_root, newest))
    run_writes.start()
    run_writes.join(0.5)
    assert run_writes.is_alive()  # the run waits for the merge's lock
    go_on.set()
    merging.join(10)
    run_writes.join(10)
    assert store.read_result(kb_root, store.ledger_path(kb_root, *KEY)).finished == "2026-09-01T00:00:00Z"


def _write_as_a_run_does(root: Path, result) -> None:
    with store.locked(root, result.claim):
        store.write_result(root, result)


def test_the_plugin_writes_its_result_under_the_ledgers_lock(kb_root):
    ours = store.read_result(kb_root, write_result(kb_root, *KEY, "passed", excess=0.0))
    report = run.RunReport(
        claim=ours.claim,
        check=ours.check,
        device=ours.device,
        tier=ours.tier,
        when="call",
        outcome="passed",
        metrics=ours.metrics,
        expectation=ours.expectation,
        parts=ours.inputs.parts,
        environment=ours.environment,
    )
    done = []
    recording = threading.Thread(
        target=lambda: done.append(run.record(kb_root, [report], None, duration=1.0, commit="c0ffee", compare=False))
    )
    with store.locked(kb_root, KEY[0]):  # as a merge holds it
        recording.start()
        recording.join(0.5)
        assert recording.is_alive() and not done
    recording.join(10)
    assert done == [("written", "log-n-cap.cpu: passed")]


SVG_NS = 'xmlns="http://www.w3.org/2000/svg"'  # a figure is SVG by its namespace (assay.svg), not by its tag's name


def _with_figure(result, svg: str):
    sha = fingerprints.sha256(svg.encode())
    fig = Figure(name="curve", file=layout.figure_file(result.check, result.device, "curve", sha), sha256=sha)
    return result.model_copy(update={"figures": [fig]}), {fig.file: svg}


def test_a_full_disk_during_a_rerun_keeps_the_kept_results_figure(kb_root, monkeypatch):
    ours = store.read_result(kb_root, write_result(kb_root, *KEY, "passed", excess=0.0))
    first, svgs = _with_figure(ours, f"<svg {SVG_NS}>the kept measurement</svg>")
    store.write_result(kb_root, first, svgs)
    rerun, svgs = _with_figure(ours.model_copy(update={"notes": ["a longer note"]}), f"<svg {SVG_NS}>smaller</svg>")
    real_write = store.write_atomic

    def full_disk(path: Path, data) -> None:
        if path.suffix == ".json":
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(path, data)

    monkeypatch.setattr(store, "write_atomic", full_disk)
    with pytest.raises(OSError):
        store.write_result(kb_root, rerun, svgs)
    kept = store.read_result(kb_root, store.ledger_path(kb_root, *KEY))
    assert kept.figures == first.figures
    assert problems.figure_problems(kb_root, KEY, tuple((f.file, f.sha256) for f in kept.figures)) == []
    folder = store.ledger_path(kb_root, *KEY).parent
    assert sorted(p.name for p in folder.glob("*.svg")) == [first.figures[0].file]  # the new one cleaned up
    monkeypatch.setattr(store, "write_atomic", real_write)
    store.write_result(kb_root, rerun, svgs)  # with room: the new figure in, then the old one out
    assert sorted(p.name for p in folder.glob("*.svg")) == [rerun.figures[0].file]


@pytest.mark.parametrize(
    "dotted",
    ["expectation.0.value", "expectation.0.measured", "cpu_s", "peak_memory_mb", "duration_s"],
)
def test_a_non_finite_number_anywhere_in_a_ledger_file_is_a_shape_diagnostic_and_the_export_stays_json(
    kb_root, tmp_path, capsys, dotted
):
    path = write_result(kb_root, *KEY, "passed", excess=0.0)
    text = path.read_text()
    data = json.loads(text)
    node = data
    *up, last = dotted.split(".")
    for k in up:
        node = node[int(k)] if k.isdigit() else node[k]
    if last not in node:
        pytest.skip(f"{dotted} is not in this result")
    node[last] = float("nan")
    path.write_text(json.dumps(data))  # Python writes NaN, as a forged file would
    assert cli.main(["--root", str(kb_root), "check"]) == 1
    assert "error[ledger-shape]" in capsys.readouterr().out
    assert cli.main(["--root", str(kb_root), "export", "json"]) == 0
    json.loads(capsys.readouterr().out, parse_constant=lambda c: pytest.fail(f"{c} in the JSON export"))
    other = tmp_path / "other"
    shutil.copytree(kb_root, other)
    shutil.rmtree(kb_root / "results")
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 1  # reported, not a crash
    assert "error[ledger-shape]" in capsys.readouterr().out


@pytest.mark.parametrize("what", ["file", "fifo", "read-only"])
def test_a_merge_into_a_results_folder_that_cannot_take_it_is_an_error_not_a_crash(kb_root, tmp_path, capsys, what):
    write_result(kb_root, *KEY, "passed", excess=0.0)
    other = tmp_path / "other"
    shutil.copytree(kb_root, other)
    shutil.rmtree(kb_root / "results")
    results = kb_root / "results"
    if what == "file":
        results.write_text("not a folder")
    elif what == "fifo":
        os.mkfifo(results)
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into a read-only folder all the same")
        results.mkdir()
        results.chmod(0o500)
    try:
        code = cli.main(["--root", str(kb_root), "merge", str(other)])
    finally:
        if what == "read-only":
            results.chmod(0o700)
    out = capsys.readouterr()
    assert code == 1, out
    assert "Traceback" not in out.out + out.err and "internal error" not in (out.out + out.err).lower()
    assert "results/" in out.out + out.err


def test_a_ledger_file_that_says_passed_beside_an_expectation_that_fails_is_refused(kb_root):
    path = write_result(kb_root, *KEY, "passed", excess=0.0)
    data = json.loads(path.read_text())
    data["expectation"][0].update(outcome="fails", holds=False)
    path.write_text(json.dumps(data))
    with pytest.raises(LedgerProblem) as info:
        store.read_result(kb_root, path)
    assert info.value.message.endswith(  # the measurements decide, never the stored word
        "its stored judgement does not follow from its measurements: 'excess' is stored as fails, but its "
        "measurements make it holds"
    )


def test_ledger_files_and_figures_are_readable_by_the_group_and_others_as_the_umask_says(kb_root):
    ours = store.read_result(kb_root, write_result(kb_root, *KEY, "passed", excess=0.0))
    with_figure, svgs = _with_figure(ours, "<svg xmlns='http://www.w3.org/2000/svg'>drawn</svg>")
    path = store.write_result(kb_root, with_figure, svgs)
    mask = os.umask(0o022)
    os.umask(mask)
    for written in (path, path.with_name(with_figure.figures[0].file)):
        assert written.stat().st_mode & 0o777 == 0o666 & ~mask  # not mkstemp's 0600


def _theirs(other: Path) -> str:
    return f"{other.as_posix()}/results/{KEY[0]}/{KEY[1]}.{KEY[2]}.json"


_RERUN = "  hint: rerun the check on that machine with this record (pytest verify --claim THEORY-085), then merge again\n"


_SHAPE = "  hint: rerun the check with pytest verify; ledger files are written by the plugin, not by hand\n"


def _refused(theirs: str, why: str) -> str:
    """How a merge names an incoming file whose stored judgement does not follow from its own measurements: it is
    refused as it is read, before any rule of the merge is asked (every reader refuses it alike)."""
    return (
        f"{theirs}:1:1: error[ledger-shape]: {theirs}: its stored judgement does not follow from its measurements: {why}\n"
        + _SHAPE
    )


def test_a_forged_pass_with_a_later_date_and_no_settling_block_does_not_replace_our_failure(kb_root, tmp_path, capsys):
    ours = store.read_result(kb_root, write_result(kb_root, *KEY, "failed", excess=1.0))
    holds = dict(ours.expectation[0].model_dump(mode="json"), outcome="holds", holds=True)
    other = _incoming(kb_root, tmp_path, verdict="passed", finished="2026-06-01T00:00:00Z", expectation=[holds])
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 1
    theirs = _theirs(other)
    assert capsys.readouterr().out == _refused(theirs, "'excess' is stored as holds, but its measurements make it fails")
    assert store.read_result(kb_root, store.ledger_path(kb_root, *KEY)) == ours


def test_an_expectation_stored_as_holding_while_its_per_seed_values_fail_is_refused(kb_root, tmp_path, capsys):
    ours = store.read_result(kb_root, write_result(kb_root, *KEY, "failed", excess=1.0))
    every_seed = dict(
        ours.expectation[0].model_dump(mode="json"),
        measured=0.0,
        outcome="holds",
        holds=True,
        seeds="all",
        seeds_holding=3,
        seeds_total=3,
    )
    other = _incoming(
        kb_root,
        tmp_path,
        verdict="passed",
        expectation=[every_seed],
        metrics={"excess": {"value": 0.0, "unit": None, "seeds": [0.5, 0.5, 0.5]}},  # no seed is 0
        finished="2026-06-01T00:00:00Z",
    )
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 1
    theirs = _theirs(other)
    assert capsys.readouterr().out == _refused(theirs, "'excess' is stored as holds, but its measurements make it fails")
    assert store.read_result(kb_root, store.ledger_path(kb_root, *KEY)) == ours


def test_a_verdict_that_its_own_expectation_does_not_give_is_refused(kb_root, tmp_path, capsys):
    ours = store.read_result(kb_root, write_result(kb_root, *KEY, "passed", excess=0.0))
    other = _incoming(kb_root, tmp_path, verdict="known-failing", finished="2026-06-01T00:00:00Z")
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 1
    theirs = _theirs(other)
    assert capsys.readouterr().out == _refused(
        theirs, "its verdict is known-failing, but its expectations make it passed or failed"
    )
    assert store.read_result(kb_root, store.ledger_path(kb_root, *KEY)) == ours


@pytest.mark.parametrize(
    ("ours_read", "settled", "why"),
    [
        ([0, 1, 2], [0, 1, 2], "its settling seeds [0, 1, 2] are not fresh: a settling run reads seeds from 1000 on"),
        (
            [1000, 1001],
            [1000, 1001],
            "its settling seeds [1000, 1001] were read before ([1000, 1001]); a settling run reads fresh ones",
        ),
    ],
    ids=["below-the-settling-range", "read-by-our-result"],
)
def test_a_settling_block_on_seeds_already_read_does_not_exempt_another_verdict_from_the_conflict_rules(
    kb_root, tmp_path, capsys, ours_read, settled, why
):
    ours = store.read_result(kb_root, write_result(kb_root, *KEY, "passed", excess=0.0))
    store.write_result(kb_root, ours := ours.model_copy(update={"seeds_used": ours_read}))
    other = tmp_path / "other"
    shutil.copytree(kb_root, other)
    failing = store.read_result(other, write_result(other, *KEY, "failed", excess=1.0))  # honestly judged
    settling = {"plan": "fresh seeds", "seeds": settled, "before_verdict": "inconclusive", "before_finished": ours.finished}
    forged = failing.model_copy(update={"seeds_used": settled, "settling": Settling(**settling)})
    store.write_result(other, forged.model_copy(update={"finished": "2026-06-01T00:00:00Z"}))
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 1
    theirs = _theirs(other)
    assert capsys.readouterr().out == (
        f"{theirs}:1:1: error[merge-settling]: {theirs}: {why}\n"
        "  hint: settle the check with assay verify --settle on that machine, then merge again\n"
    )
    assert store.read_result(kb_root, store.ledger_path(kb_root, *KEY)) == ours


def test_a_run_error_from_the_future_is_refused_and_our_measurement_keeps_no_error(kb_root, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(vetting, "clock", lambda: dt.datetime(2026, 7, 1, tzinfo=dt.timezone.utc))
    ours = store.read_result(kb_root, write_result(kb_root, *KEY, "passed", excess=0.0))
    error = {"kind": "crash", "message": "died", "finished": "2099-01-01T00:00:00Z"}
    other = _incoming(kb_root, tmp_path, verdict="error", metrics={}, expectation=[], last_error=error)
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 1
    theirs = _theirs(other)
    assert capsys.readouterr().out == (
        f"{theirs}:1:1: error[merge-future]: {theirs}: its 'last_error.finished' is 2099-01-01T00:00:00Z, later than "
        "this machine's clock (2026-07-01T00:05:00Z with 300 s of skew allowed); a later time would win the merge\n"
        "  hint: set that machine's clock right and rerun the check there, then merge again\n"
    )
    assert store.read_result(kb_root, store.ledger_path(kb_root, *KEY)) == ours


def _recorded(**fields) -> Evidence:
    ev = Evidence()
    ev.metric("excess", 0.0)
    for name, value in fields.items():
        setattr(ev, name, value)
    return ev


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"units": {"excess": "u" * 100_000}},
            "the unit of metric 'excess' has 100000 characters, more than the 4096 a result keeps",
        ),
        ({"notes": ["n"] * 10_000}, "10000 notes were recorded, more than the 1000 a result keeps"),
        (
            {"figures": {"curve": "<svg xmlns='http://www.w3.org/2000/svg'/>"}, "captions": {"curve": "c" * 2**20}},
            "the caption of figure 'curve' has 1048576 characters, more than the 4096 a result keeps",
        ),
        (
            {"metrics": {f"m{i}": 0.0 for i in range(600)}, "seeds": {f"m{i}": [0.0] * 1000 for i in range(600)}},
            "the metrics hold 600000 per-seed values together, more than the 100000 a result keeps",
        ),
    ],
    ids=["unit-of-100-kb", "10000-notes", "caption-of-1-mb", "600-metrics-by-1000-seeds"],
)
def test_evidence_past_a_bound_of_the_ledger_is_the_verifiers_error_as_it_is_recorded(fields, message):
    with pytest.raises(VerifierError) as info:
        _recorded(**fields).validate()
    assert str(info.value) == message


def test_a_result_within_each_bound_but_past_the_files_size_is_an_error_beside_the_kept_measurement(kb_root):
    ours = store.read_result(kb_root, write_result(kb_root, *KEY, "passed", excess=0.0))
    # each within its bound: 999 metrics, 4,000 characters of name and unit, 99,900 per-seed values in all
    wide = {("m" * 4000) + str(i): Metric(value=0.0, unit="u" * 4000, seeds=[0.5] * 100) for i in range(999)}
    report = run.RunReport(
        claim=ours.claim,
        check=ours.check,
        device=ours.device,
        tier=ours.tier,
        when="call",
        outcome="passed",
        metrics={**ours.metrics, **wide},
        expectation=ours.expectation,
        parts=ours.inputs.parts,
        environment=ours.environment,
    )
    done = run.record(kb_root, [report], None, duration=1.0, commit="c0ffee", compare=False)
    why = "the result cannot be kept: it is 8.9 MiB as written"
    assert done[0] == "refused" and done[1].startswith(f"log-n-cap.cpu: error ({why}")
    kept = store.read_result(kb_root, store.ledger_path(kb_root, *KEY))  # readable, with the last measurement
    assert (kept.verdict, kept.metrics, kept.finished) == ("passed", ours.metrics, ours.finished)
    assert kept.last_error.message == (
        f"{why}, more than the 8 MiB a ledger file holds; record less (fewer metrics, seeds or notes, shorter text)"
    )


def test_the_writer_refuses_a_result_no_reader_would_read_and_leaves_the_kept_one(kb_root):
    path = write_result(kb_root, *KEY, "passed", excess=0.0)
    before = path.read_bytes()
    ours = store.read_result(kb_root, path)
    long_unit = ours.model_copy(update={"metrics": {"excess": Metric(value=0.0).model_copy(update={"unit": "u" * 5000})}})
    with pytest.raises(store.Unkeepable) as info:  # model_copy never validated it: the writer reads it back
        store.write_result(kb_root, long_unit)
    assert str(info.value) == "'metrics.excess.unit': string should have at most 4096 characters"
    assert path.read_bytes() == before


def test_a_ledger_file_with_a_text_past_its_bound_is_refused_when_read(kb_root):
    path = write_result(kb_root, *KEY, "passed", excess=0.0)
    data = json.loads(path.read_text())
    data["figures"] = [{"name": "curve", "file": "log-n-cap.cpu.curve.svg", "sha256": "0" * 64, "caption": "c" * 2**20}]
    path.write_text(json.dumps(data))
    with pytest.raises(LedgerProblem) as info:
        store.read_result(kb_root, path)
    assert info.value.message == (
        "results/THEORY-085/log-n-cap.cpu.json: 'figures.0.caption': string should have at most 4096 characters"
    )


def test_two_settling_runs_on_the_same_fresh_seeds_with_different_verdicts_are_a_conflict(kb_root, tmp_path, capsys):
    fresh = [1000, 1001, 1002]
    block = Settling(plan="fresh seeds", seeds=fresh, before_verdict="inconclusive", before_finished="2026-01-01T00:00:00Z")
    settled = {"seeds_used": fresh, "settling": block}
    ours = store.read_result(kb_root, write_result(kb_root, *KEY, "passed", excess=0.0)).model_copy(update=settled)
    store.write_result(kb_root, ours)
    other = tmp_path / "other"
    shutil.copytree(kb_root, other)
    theirs = store.read_result(other, write_result(other, *KEY, "failed", excess=1.0))
    store.write_result(other, theirs.model_copy(update={**settled, "finished": "2026-06-01T00:00:00Z"}))
    assert cli.main(["--root", str(kb_root), "merge", str(other)]) == 0
    assert capsys.readouterr().out == (
        "replaced: THEORY-085/log-n-cap/cpu: theirs finished later; the verdict moved with the same inputs\n"
        "conflict: THEORY-085/log-n-cap/cpu: ours passed (2026-01-01T00:00:00Z), theirs failed (2026-06-01T00:00:00Z) "
        "with the same inputs; theirs finished later; the verdict moved with the same inputs\n"
    )
    kept = store.read_result(kb_root, store.ledger_path(kb_root, *KEY))
    assert (kept.verdict, kept.unstable.verdicts) == ("failed", ["passed", "failed"])  # the same seeds: no new measurement


def test_a_figure_left_half_written_by_a_killed_run_is_reported_and_git_leaves_it_out(tmp_path, capsys):
    root = tmp_path / "kb"
    assert cli.main(["init", str(root)]) == 0
    leftover = root / "results" / "SOTA-001" / ".main.cpu.curve.0123456789ab.svg.x1y2z3.tmp"
    leftover.parent.mkdir(parents=True)
    leftover.write_text("<svg")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    added = subprocess.run(["git", "add", "-n", "results"], cwd=root, capture_output=True, text=True, check=True)
    assert ".tmp" not in added.stdout
    capsys.readouterr()
    cli.main(["--root", str(root), "check"])
    rel = "results/SOTA-001/.main.cpu.curve.0123456789ab.svg.x1y2z3.tmp"
    assert (
        f"{rel}:1:1: warning[ledger-leftover]: {rel} is a temporary file left by a run killed between writing a file of "
        f"the ledger and renaming it; nothing reads it\n  hint: delete it (rm {rel}); it is no result, and .gitignore "
        "keeps it out of a commit"
    ) in capsys.readouterr().out
