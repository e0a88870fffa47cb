"""Attacks on the parse cache: a pickle planted where Assay would read it is refused as data, never run."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import subprocess
import time
from pathlib import Path

from assay.corpus import cache
from assay.corpus import home as cache_folder
from assay.records import knowledge_base
from assay.records.knowledge_base import load


class _Payload:
    """Unpickling this writes the file ``marker``: proof that planted code ran."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "ran"))


def _plant(folder: Path, root: Path, marker: Path, kind: str = "records") -> Path:
    """A pickle at the name the cache of ``root`` would read, as an attacker can compute it."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    name = hashlib.sha256(f"{root.resolve()}\0{kind}".encode()).hexdigest()[:24] + ".msgpack"
    path = folder / name
    path.write_bytes(pickle.dumps(_Payload(marker)))
    return path


def test_a_pickle_committed_in_a_cache_folder_inside_the_knowledge_base_is_never_read(kb_root, monkeypatch, tmp_path):
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(kb_root / ".assay-cache"))  # a CI that caches its workspace
    marker = tmp_path / "ran"
    planted = _plant(kb_root / ".assay-cache", kb_root, marker)
    load(kb_root, cache=True)
    assert not marker.exists()
    assert [p.name for p in (kb_root / ".assay-cache").iterdir()] == [planted.name]  # nothing read, nothing written


def test_a_pickle_planted_where_the_users_cache_file_goes_is_refused_as_data_and_parsed_afresh(kb_root, monkeypatch, tmp_path):
    folder = tmp_path / "cache"
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(folder))
    monkeypatch.setattr(cache, "RACY_S", -1.0)
    first = load(kb_root, cache=True)  # the user's run makes the folder and a cache file
    marker = tmp_path / "ran"
    planted = _plant(folder, kb_root, marker)  # written over by someone who got a file in
    parsed: list[str] = []
    real = knowledge_base.load_record
    counting = lambda root, rel, direct=False: parsed.append(rel) or real(root, rel, direct)  # noqa: E731
    monkeypatch.setattr(knowledge_base, "load_record", counting)
    again = load(kb_root, cache=True)
    assert not marker.exists()
    assert sorted(parsed) == sorted(f.path for f in first.files)  # every record parsed afresh: the file held no data
    assert [f.path for f in again.files] == [f.path for f in first.files]
    assert not planted.read_bytes().startswith(b"\x80")  # and written over with data


def test_a_cache_folder_that_is_a_link_is_not_used(kb_root, monkeypatch, tmp_path):
    real = tmp_path / "real"
    marker = tmp_path / "ran"
    _plant(real, kb_root, marker)
    (tmp_path / "link").symlink_to(real)
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "link"))
    load(kb_root, cache=True)
    assert not marker.exists()
    assert cache_folder.open_private(tmp_path / "link") is None


def test_the_prune_removes_only_the_files_the_cache_wrote(kb_root, monkeypatch, tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    mine = folder / "notes.pickle"  # a user's own file in the folder, long unused
    mine.write_bytes(b"x")
    stale = folder / ("0" * 24 + ".msgpack")  # a cache file nobody used for a long time
    stale.write_bytes(b"x")
    old = time.time() - 40 * 86400
    for p in (mine, stale):
        os.utime(p, (old, old))
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(folder))
    monkeypatch.setattr(cache, "RACY_S", -1.0)
    load(kb_root, cache=True)  # a save prunes
    assert mine.exists() and not stale.exists()


def test_history_summaries_committed_in_a_cache_folder_inside_the_knowledge_base_are_never_read(kb_root, monkeypatch):
    from assay.ledger import history

    subprocess.run(["git", "init", "-q"], cwd=kb_root, check=True)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", "add", "-A"], cwd=kb_root, check=True)
    subprocess.run(["git", "commit", "-qm", "records"], cwd=kb_root, check=True, env={**os.environ, **env})
    blob = subprocess.run(["git", "rev-parse", "HEAD:claims/SOTA-364.yaml"], cwd=kb_root, capture_output=True, text=True)
    inside = kb_root / ".cache"
    inside.mkdir(mode=0o700)
    forged = {blob.stdout.strip(): {"id": "SOTA-364", "checks": {"shuffle-bn": []}}}
    (inside / f"history-{history.SUMMARY_FORMAT}.json").write_text(json.dumps(forged))
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(inside))
    summary = history.read(kb_root).summaries[blob.stdout.strip()]
    assert summary["checks"]["shuffle-bn"] != []  # read from git, not from the planted file
    assert json.loads((inside / f"history-{history.SUMMARY_FORMAT}.json").read_text()) == forged  # nor written over
