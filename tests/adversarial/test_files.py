"""Attacks through what a record file is: a folder named like one, a FIFO, a link to a secret, a link loop.

Every record is read by ``loader.read_regular``: a regular file inside the knowledge base, bounded in size.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from assay import audit, cli
from assay.records.knowledge_base import load

HINT = "  hint: records are regular files inside the knowledge base"


def check(root) -> list[str]:
    return [d.render() for d in audit.run(load(root))]


def test_a_folder_named_like_a_record_is_an_unreadable_file(kb_root):
    (kb_root / "claims" / "SOTA-999.yaml").mkdir()
    assert check(kb_root) == [
        f"claims/SOTA-999.yaml:1:1: error[unreadable-file]: claims/SOTA-999.yaml is not a regular file (a directory)\n{HINT}"
    ]


def test_a_record_that_links_to_a_secret_outside_is_not_read(kb_root, tmp_path):
    secret = tmp_path / "secret.yaml"
    secret.write_text("id: SOTA-999\ntitle: MY_CI_TOKEN=secret\n")
    (kb_root / "claims" / "SOTA-999.yaml").symlink_to(secret)
    assert check(kb_root) == [
        f"claims/SOTA-999.yaml:1:1: error[unreadable-file]: claims/SOTA-999.yaml is a link to a file outside the "
        f"knowledge base\n{HINT}"
    ]


def test_a_record_that_is_a_link_loop_is_an_unreadable_file(kb_root):
    (kb_root / "claims" / "SOTA-999.yaml").symlink_to(kb_root / "claims" / "SOTA-999.yaml")
    assert check(kb_root) == [
        f"claims/SOTA-999.yaml:1:1: error[unreadable-file]: claims/SOTA-999.yaml cannot be read (a symlink loop)\n{HINT}"
    ]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_named_like_a_record_does_not_hang_assay_check(kb_root):
    os.mkfifo(kb_root / "claims" / "SOTA-999.yaml")
    done = subprocess.run(
        [sys.executable, "-m", "assay.cli", "--root", str(kb_root), "check"], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout) == (
        1,
        f"claims/SOTA-999.yaml:1:1: error[unreadable-file]: claims/SOTA-999.yaml is not a regular file\n{HINT}\n",
    )


@pytest.mark.parametrize("argv", [["status"], ["show", "SOTA-999"], ["graph", "--format", "mermaid"], ["export", "json"]])
def test_no_command_crashes_on_a_folder_named_like_a_record(kb_root, capsys, argv):
    (kb_root / "claims" / "SOTA-999.yaml").mkdir()
    assert cli.main(["--root", str(kb_root), *argv]) in (0, 1)
    assert "internal error" not in capsys.readouterr().err


def _fstat_tells(monkeypatch, size) -> None:
    """``fstat`` as ``assay.files`` sees it tells ``size(true size)`` for a file's size: what it was at the open,
    before the file grew or shrank."""
    from assay import files

    real_fstat = os.fstat

    class Told:
        def __init__(self, st):
            self._st = st

        def __getattr__(self, name):
            return getattr(self._st, name)

        @property
        def st_size(self):
            return size(self._st.st_size)

    monkeypatch.setattr(files.os, "fstat", lambda fd: Told(real_fstat(fd)))


@pytest.mark.parametrize("told", [-7, 0, 9])
def test_a_file_whose_size_changes_between_its_open_and_its_read_is_read_to_its_end(tmp_path, monkeypatch, told):
    """One read of one byte more than fstat says ends an unchanged file; a file that grew or shrank after the open
    (fstat told too little or too much) is read on to its end, so no byte is lost and none made up."""
    from assay import files

    data = b"x" * 5000 + b"tail"
    (tmp_path / "r.yaml").write_bytes(data)
    _fstat_tells(monkeypatch, lambda size: size + told)
    reads: list[int] = []
    real_read = os.read
    monkeypatch.setattr(files.os, "read", lambda fd, n: reads.append(n) or real_read(fd, n))
    raw, info = files.read_in_stat(str(tmp_path), "r.yaml")
    assert raw == data
    assert (len(reads) == 1) if told == 0 else (len(reads) >= 2)


def test_a_file_that_grows_past_the_limit_after_its_open_is_refused(tmp_path, monkeypatch):
    from assay import files

    (tmp_path / "r.yaml").write_bytes(b"y" * 300)
    _fstat_tells(monkeypatch, lambda size: 10)  # 10 bytes when opened; 300 by the read
    with pytest.raises(files.Unreadable, match="grew past"):
        files.read_in_stat(str(tmp_path), "r.yaml", limit=100)


def test_asking_ahead_for_a_fifo_a_link_a_folder_or_nothing_neither_hangs_nor_opens_the_link(tmp_path, monkeypatch):
    """``corpus.read_ahead`` is a hint given before the reads: it opens what ``read_in_stat`` would open, never blocks on
    a FIFO, never follows a link, and leaves whatever it cannot open to the read that says why."""
    from assay import corpus, files

    secret = tmp_path / "secret"
    secret.write_text("outside")
    (tmp_path / "plain.json").write_text("{}")
    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "link.json").symlink_to(secret)
    (tmp_path / "folder.json").mkdir()
    hinted: list[int] = []
    real = os.posix_fadvise
    monkeypatch.setattr(corpus.os, "posix_fadvise", lambda fd, *a: hinted.append(os.fstat(fd).st_ino) or real(fd, *a))
    names = ("plain.json", "fifo.json", "link.json", "folder.json", "gone.json")
    corpus.read_ahead(str(tmp_path / n) for n in names)  # returns at once: the FIFO's open does not wait for a writer
    assert secret.stat().st_ino not in hinted and (tmp_path / "plain.json").stat().st_ino in hinted
    assert files.read_in_stat(str(tmp_path), "plain.json")[0] == b"{}"
