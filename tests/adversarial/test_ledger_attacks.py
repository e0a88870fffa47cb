"""Attacks on the ledger through what another machine sends: a forged input hash, an impossible time."""

from __future__ import annotations

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
from assay.ledger import merge, problems, store
from assay.ledger.result import Figure
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
    assert out.startswith(
        "results/THEORY-085/log-n-cap.cpu.json:1:1: error[ledger-shape]: results/THEORY-085/log-n-cap.cpu.json: "
        "'inputs.hash' is not the hash of its parts\n"
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


def _with_figure(result, svg: str):
    sha = fingerprints.sha256(svg.encode())
    fig = Figure(name="curve", file=store.figure_file(result.check, result.device, "curve", sha), sha256=sha)
    return result.model_copy(update={"figures": [fig]}), {fig.file: svg}


def test_a_full_disk_during_a_rerun_keeps_the_kept_results_figure(kb_root, monkeypatch):
    ours = store.read_result(kb_root, write_result(kb_root, *KEY, "passed", excess=0.0))
    first, svgs = _with_figure(ours, "<svg>the kept measurement</svg>")
    store.write_result(kb_root, first, svgs)
    rerun, svgs = _with_figure(ours.model_copy(update={"notes": ["a longer note"]}), "<svg>smaller</svg>")
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
    assert "verdict 'passed' beside an expectation that fails" in info.value.message


def test_ledger_files_and_figures_are_readable_by_the_group_and_others_as_the_umask_says(kb_root):
    ours = store.read_result(kb_root, write_result(kb_root, *KEY, "passed", excess=0.0))
    with_figure, svgs = _with_figure(ours, "<svg>drawn</svg>")
    path = store.write_result(kb_root, with_figure, svgs)
    mask = os.umask(0o022)
    os.umask(mask)
    for written in (path, path.with_name(with_figure.figures[0].file)):
        assert written.stat().st_mode & 0o777 == 0o666 & ~mask  # not mkstemp's 0600


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
