"""assay.records.quotes: every citation quotes a passage of its source, at the locator it gives."""

from __future__ import annotations

from pathlib import Path

from assay import audit
from assay.records.knowledge_base import load


def test_a_quote_changed_by_one_character_is_not_in_the_source_and_the_difference_is_shown(diagnose):
    assert diagnose("quote-not-in-source") == (
        "claims/SOTA-364.yaml:10:5: error[quote-not-in-source]: citation 1 of SOTA-364: the quote is not a passage of "
        "LIT-590; the closest is its passage at '§3.3' (99% alike): …ning good representation[-s-].\n"
        "  hint: [-x-] is the source's, {+x+} the quote's; quote the source's words exactly (… marks an elision), "
        "or add the passage to LIT-590's passages"
    )


def test_a_quote_under_another_locator_than_its_passage_is_a_locator_mismatch(diagnose):
    assert diagnose("locator-mismatch") == (
        "claims/SOTA-364.yaml:9:5: error[locator-mismatch]: citation 1 of SOTA-364: the quote is LIT-590's passage "
        "at '§3.3', not at '§3.4'\n"
        "  hint: give the passage's locator, or correct the passage's if this one is right"
    )


def test_a_source_without_passages_is_named_once_with_the_quotes_left_unchecked(diagnose):
    assert diagnose("source-without-passages") == (
        "sources/LIT-612.yaml:2:1: warning[source-without-passages]: LIT-612 keeps no passages, so 3 quotes citing it "
        "are not checked against its words\n"
        "  hint: add under passages: each passage its claims quote (locator, exact, prefix, suffix), and read_from"
    )


def _quote(root: Path, quote: str, locator: str = "§3.3") -> list[str]:
    path = root / "claims" / "SOTA-364.yaml"
    text = path.read_text(encoding="utf-8")
    text = text.replace("quote: Using BN prevents the model from learning good representations.", f"quote: {quote}")
    path.write_text(text.replace("locator: §3.3", f"locator: {locator}", 1), encoding="utf-8")
    return [d.render() for d in audit.run(load(root))]


def test_a_span_of_a_passage_and_a_quote_eliding_its_middle_are_passages(kb_root):
    assert _quote(kb_root, "prevents the model from learning") == []
    assert _quote(kb_root, "Using BN prevents … good representations.") == []


def test_quote_marks_ligatures_and_whitespace_are_normalised_on_both_sides(kb_root):
    path = kb_root / "sources" / "LIT-590.yaml"
    path.write_text(path.read_text().replace("learning good", "learning “good” ﬁne"), encoding="utf-8")
    assert _quote(kb_root, "'from learning \"good\"   fine representations'") == []


def test_the_parts_of_an_elided_quote_must_come_in_the_passage_s_order(kb_root):
    found = _quote(kb_root, "good representations … Using BN")
    assert [d.split(": ")[1] for d in found] == ["error[quote-not-in-source]"]


def test_a_locator_is_compared_after_the_same_normalisation(kb_root):
    assert _quote(kb_root, "Using BN prevents the model", locator="' §3.3  '") == []


def test_a_source_with_passages_must_say_which_version_they_were_read_from(kb_root):
    path = kb_root / "sources" / "LIT-590.yaml"
    path.write_text(path.read_text().replace("read_from: arXiv v3\n", ""), encoding="utf-8")
    found = [d.render() for d in audit.run(load(kb_root)) if "LIT-590.yaml" in d.path]
    assert found[0].startswith("sources/LIT-590.yaml:")
    assert "a source with passages names the version they were read from in read_from" in found[0]


def test_every_quote_of_this_knowledge_base_is_a_passage_of_its_source_at_its_locator():
    root = Path(__file__).resolve().parents[2]
    kb = load(root)
    codes = {"quote-not-in-source", "locator-mismatch", "source-without-passages"}
    found = [d.render() for d in audit.run(kb) if d.code in codes]
    assert found == []
