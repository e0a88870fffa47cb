"""Attacks on record ids: look-alike digits and ids with space around them.

An id is the key of a record everywhere (the graph, the site's paths, the CLI), so it must be written
exactly: ASCII, nothing stripped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay import audit, cli
from assay.records.knowledge_base import load
from assay.site import generate

HINT = "  hint: ids look like LIT-590, SOTA-364, THEORY-085, ADR-011"


def with_id(root: Path, new_id: str) -> Path:
    """The fixture's SOTA-364 with its id line replaced by ``id: <new_id as a YAML string>``."""
    path = root / "claims" / "SOTA-364.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("id: SOTA-364\n", f"id: {json.dumps(new_id, ensure_ascii=False)}\n", 1), encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("look_alike", "flaw"),
    [
        ("SOTA-𝟯𝟲𝟵", "'𝟯' (U+1D7EF MATHEMATICAL SANS-SERIF BOLD DIGIT THREE)"),
        ("SOTA-３６８", "'３' (U+FF13 FULLWIDTH DIGIT THREE)"),
        ("SOTA-٣٦٤", "'٣' (U+0663 ARABIC-INDIC DIGIT THREE)"),
    ],
)
def test_an_id_with_look_alike_digits_is_a_bad_id_that_says_ids_are_ascii(kb_root, look_alike, flaw):
    found = audit.run(load(with_id(kb_root, look_alike)))
    assert [d.render() for d in found] == [
        f"claims/SOTA-364.yaml:2:1: error[bad-id]: id '{look_alike}' does not have the form of its series: "
        f"ids are ASCII, and {flaw} is not\n{HINT}"
    ]


def test_every_pattern_of_the_model_is_ascii_so_no_field_takes_look_alike_digits(kb_root):
    path = kb_root / "sources" / "LIT-612.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("arxiv: 2002.05709v3", "arxiv: 2002.０5709v3").replace("date: 2020-02", "date: 2020-０2"), encoding="utf-8"
    )
    assert [d.render() for d in audit.run(load(kb_root))] == [
        "sources/LIT-612.yaml:7:1: error[wrong-type]: 'date' must match ^[0-9]{4}-[0-9]{2}(-[0-9]{2})?$ (got '2020-０2')",
        "sources/LIT-612.yaml:10:3: error[wrong-type]: 'identifiers.arxiv' must match ^[0-9]{4}\\.[0-9]{4,5}v[0-9]+$ "
        "(got '2002.０5709v3')",
    ]


@pytest.mark.parametrize("spaced", [" SOTA-364", "SOTA-364 ", "SOTA-364\n", "\tSOTA-364"])
def test_an_id_with_space_or_a_line_break_around_it_is_a_bad_id_not_stripped(kb_root, spaced):
    found = audit.run(load(with_id(kb_root, spaced)))
    assert [d.render() for d in found] == [
        f"claims/SOTA-364.yaml:2:1: error[bad-id]: id {spaced!r} does not have the form of its series: "
        f"it has space or a line break around it\n{HINT}"
    ]


def test_a_record_with_a_spaced_id_goes_by_its_file_name_in_the_graph(kb_root):
    kb = load(with_id(kb_root, " SOTA-364"))
    assert kb.by_id["SOTA-364"].record is None and " SOTA-364" not in kb.by_id


@pytest.mark.parametrize(
    "argv",
    [
        ["check"],
        ["status"],
        ["show", "SOTA-364"],
        ["graph"],
        ["graph", "--format", "dot"],
        ["graph", "--format", "mermaid"],
        ["export", "json"],
        ["export", "bibtex"],
    ],
)
@pytest.mark.parametrize("bad", [" SOTA-364", "SOTA-364\n", "SOTA-３６４"])
def test_no_command_crashes_on_a_malformed_id(kb_root, capsys, argv, bad):
    status = cli.main(["--root", str(with_id(kb_root, bad)), *argv])
    out, err = capsys.readouterr()
    assert status in (0, 1) and "internal error" not in err and "Traceback" not in out + err


def test_show_says_a_claim_with_a_malformed_id_is_invalid(kb_root, capsys):
    assert cli.main(["--root", str(with_id(kb_root, "SOTA-364\n")), "show", "SOTA-364"]) == 1
    assert capsys.readouterr().out == "SOTA-364  (claims/SOTA-364.yaml)\n  invalid: run `assay check`\n"


@pytest.mark.parametrize("bad", [" SOTA-364", "SOTA-364\n", "SOTA-３６４"])
def test_the_site_generator_gives_a_claim_with_a_malformed_id_its_invalid_page(kb_root, bad):
    outputs = {o.path: o for o in generate(with_id(kb_root, bad))}
    assert "claims/SOTA-364.md" in outputs
    assert outputs["claims/SOTA-364.md"].title == "SOTA-364 (invalid)"


def test_an_id_that_is_a_path_never_becomes_a_page_path(kb_root):
    with_id(kb_root, "SOTA-1/../../../../escaped")
    paths = [o.path for o in generate(kb_root)]
    assert not [p for p in paths if ".." in p or p.startswith("/")]
    assert "claims/SOTA-364.md" in paths


@pytest.mark.parametrize(
    ("spelt", "flaw"),
    [
        ("SOTA-0364", "a number longer than three digits has no leading zero, so that one id has one spelling"),
        ("sota-364", "ids are upper case"),
    ],
)
def test_an_id_spelt_another_way_than_its_one_spelling_is_a_bad_id_saying_how(kb_root, spelt, flaw):
    found = audit.run(load(with_id(kb_root, spelt)))
    assert [d.render() for d in found] == [
        f"claims/SOTA-364.yaml:2:1: error[bad-id]: id {spelt!r} does not have the form of its series: {flaw}\n{HINT}"
    ]


def test_a_relation_to_an_id_with_a_leading_zero_more_is_no_link_to_the_record(kb_root):
    path = kb_root / "claims" / "THEORY-090.yaml"
    text = path.read_text(encoding="utf-8")
    assert "target: SOTA-364" in text
    path.write_text(text.replace("target: SOTA-364", "target: SOTA-0364", 1), encoding="utf-8")
    assert [d.code for d in audit.run(load(kb_root))] == ["wrong-type"]
