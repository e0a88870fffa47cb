"""Attacks on the ledger through what another machine sends: a forged input hash, an impossible time."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay import cli
from assay.ledger import store
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
