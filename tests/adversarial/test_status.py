"""Attacks that made a claim vanish: a misspelt field, a file that cannot be read, a repeated id.

``assay status`` listed valid claims only, so a claim with a typo disappeared from it silently.
"""

from __future__ import annotations

from assay import cli

INVALID = "invalid ({n}): The file cannot be read, does not validate or repeats an id, so it has no status; run assay check."


def test_a_claim_with_a_misspelt_field_is_listed_as_invalid_with_its_path(make_kb, capsys):
    assert cli.main(["--root", str(make_kb("unknown-field")), "status"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == [INVALID.format(n=1), "  SOTA-380     claims/SOTA-380.yaml"]


def test_a_claim_file_that_cannot_be_read_and_a_repeated_id_are_listed_as_invalid(make_kb, capsys):
    root = make_kb("unreadable-file")  # claims/SOTA-380.yaml is a folder
    (root / "claims" / "SOTA-381.yaml").write_text((root / "claims" / "SOTA-364.yaml").read_text())
    assert cli.main(["--root", str(root), "status"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-3:] == [INVALID.format(n=2), "  SOTA-380     claims/SOTA-380.yaml", "  SOTA-364     claims/SOTA-381.yaml"]
