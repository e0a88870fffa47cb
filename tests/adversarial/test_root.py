"""Attacks on where the CLI looks: a wrong --root, or a run from inside the knowledge base.

A wrong root used to print "0 records" and exit 0, so CI passed on nothing.
"""

from __future__ import annotations

import pytest

from assay import cli

NOT_A_KB = "is not a knowledge base (no claims/ or sources/ folder); run assay init to start one, or pass --root"


@pytest.mark.parametrize(
    "command", [["check"], ["status"], ["graph"], ["export", "json"], ["show", "SOTA-364"], ["new", "claim"]]
)
def test_a_root_that_does_not_exist_is_a_usage_error_for_every_command_that_reads_a_knowledge_base(tmp_path, capsys, command):
    missing = tmp_path / "no-such-folder"
    assert cli.main(["--root", str(missing), *command]) == 2
    assert capsys.readouterr() == ("", f"assay: error: {missing} {NOT_A_KB}\n")


def test_a_root_that_is_a_file_is_a_usage_error(kb_root, capsys):
    readme = kb_root / "README.md"
    readme.write_text("# not a knowledge base\n")
    assert cli.main(["--root", str(readme), "check"]) == 2
    assert capsys.readouterr() == ("", f"assay: error: {readme} {NOT_A_KB}\n")


def test_a_root_folder_without_claims_or_sources_is_a_usage_error(tmp_path, capsys):
    assert cli.main(["check", "--root", str(tmp_path)]) == 2
    assert capsys.readouterr() == ("", f"assay: error: {tmp_path} {NOT_A_KB}\n")


def test_without_root_the_knowledge_base_is_found_from_a_folder_inside_it(kb_root, capsys, monkeypatch):
    monkeypatch.chdir(kb_root / "claims")
    assert cli.main(["check"]) == 0
    assert capsys.readouterr() == ("", "0 error(s), 0 warning(s) in 6 records (3 claims, 2 sources, 1 decisions)\n")


def test_without_root_outside_any_knowledge_base_is_a_usage_error_naming_the_current_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["status"]) == 2
    assert capsys.readouterr() == ("", f"assay: error: {tmp_path} {NOT_A_KB}\n")


def test_new_run_from_inside_claims_writes_into_the_knowledge_base_not_below_it(kb_root, capsys, monkeypatch):
    monkeypatch.chdir(kb_root / "claims")
    assert cli.main(["new", "claim", "--source", "LIT-590"]) == 0
    assert capsys.readouterr().out == "claims/SOTA-365.yaml\nverify/test_sota365.py\n"
    assert (kb_root / "claims" / "SOTA-365.yaml").is_file() and not (kb_root / "claims" / "claims").exists()
    assert (kb_root / "verify" / "test_sota365.py").is_file()


def test_a_file_with_look_alike_digits_does_not_move_the_next_free_id(kb_root, capsys):
    (kb_root / "claims" / "SOTA-９９９９.yaml").write_text("id: SOTA-９９９９\n", encoding="utf-8")
    assert cli.main(["--root", str(kb_root), "new", "claim", "--source", "LIT-590"]) == 0
    assert capsys.readouterr().out == "claims/SOTA-365.yaml\nverify/test_sota365.py\n"


def test_schema_works_in_a_folder_that_is_not_yet_a_knowledge_base(tmp_path, capsys):
    assert cli.main(["--root", str(tmp_path), "schema"]) == 0
    assert (tmp_path / "schema" / "claim.schema.json").is_file()
