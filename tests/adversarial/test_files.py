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
