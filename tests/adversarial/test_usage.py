"""Attacks through the command line: arguments out of range and files that are not there are usage errors (exit 2,
one line), never an internal error; a ledger left behind by a renamed check is reported."""

from __future__ import annotations

from assay import audit, cli
from assay.records.knowledge_base import load
from tests.conftest import write_result


def test_a_negative_depth_and_pages_that_are_not_there_are_usage_errors(kb_root, capsys):
    assert cli.main(["--root", str(kb_root), "graph", "--focus", "THEORY-085", "--depth", "-1"]) == 2
    assert capsys.readouterr().err == "assay: error: --depth -1: a number of links is 0 or more\n"
    assert cli.main(["--root", str(kb_root), "readme"]) == 2
    assert "no page with generated sections in " in capsys.readouterr().err


def test_a_result_left_behind_by_a_renamed_check_or_a_removed_claim_is_reported(kb_root):
    path = write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    (kb_root / "results" / "THEORY-099").mkdir()
    for claim, check in (("THEORY-085", "renamed-away"), ("THEORY-099", "log-n-cap")):
        text = path.read_text().replace('"check": "log-n-cap"', f'"check": "{check}"')
        text = text.replace('"claim": "THEORY-085"', f'"claim": "{claim}"')
        (kb_root / "results" / claim / f"{check}.cpu.json").write_text(text)
    found = sorted((d.path, d.code, d.severity) for d in audit.run(load(kb_root)) if d.code == "ledger-orphan")
    assert found == [
        ("results/THEORY-085/renamed-away.cpu.json", "ledger-orphan", "warning"),
        ("results/THEORY-099/log-n-cap.cpu.json", "ledger-orphan", "warning"),
    ]


def test_history_of_a_claim_spelled_in_lower_case_is_a_usage_error_suggesting_the_id(kb_root, capsys):
    assert cli.main(["--root", str(kb_root), "history", "sota-364/shuffle-bn"]) == 2
    assert capsys.readouterr() == (
        "",
        "assay: error: 'sota-364' is not a claim of this knowledge base; did you mean 'SOTA-364'?\n",
    )


def test_a_claim_id_with_a_leading_zero_more_is_not_taken_for_the_claim_but_suggested(kb_root, capsys):
    assert cli.main(["--root", str(kb_root), "plan", "--claim", "THEORY-0085"]) == 2
    assert capsys.readouterr() == (
        "",
        "assay: error: --claim THEORY-0085: 'THEORY-0085' is not a claim of this knowledge base; did you mean 'THEORY-085'?\n",
    )


def test_sources_verify_of_an_unknown_source_is_a_usage_error_before_the_copy_is_asked_for(kb_root, capsys):
    assert cli.main(["--root", str(kb_root), "sources", "verify", "LIT-59"]) == 2
    assert capsys.readouterr() == (
        "",
        "assay: error: 'LIT-59' is not a source of this knowledge base; did you mean 'LIT-590'?\n",
    )


def test_history_of_a_misspelt_check_suggests_the_check(kb_root, capsys):
    assert cli.main(["--root", str(kb_root), "history", "SOTA-364/shufle-bn"]) == 2
    assert capsys.readouterr() == ("", "assay: error: SOTA-364 has no check 'shufle-bn'; did you mean 'shuffle-bn'?\n")
