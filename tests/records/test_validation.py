"""assay.records (document, validation, knowledge_base): safe YAML with positions, validation against the model,
one diagnostic per fault.

Each broken fixture is laid over the valid knowledge base and the whole run's output is compared, so a
test also shows the fault does not cascade into other diagnostics.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.model import Claim, Decision, Source
from assay.records.knowledge_base import load
from assay.records.validation import load_record
from assay.records.yaml_safe import MAX_DEPTH, read_yaml

# --- reading files ------------------------------------------------------------------------------


def test_a_file_that_is_not_utf8_is_reported_at_the_bad_byte(diagnose):
    assert diagnose("not-utf8") == (
        "claims/SOTA-380.yaml:3:11: error[not-utf8]: byte 0xe9 is not UTF-8\n  hint: save the file as UTF-8"
    )


def test_a_yaml_syntax_error_is_reported_where_the_parser_gave_up(diagnose):
    assert diagnose("yaml-syntax") == (
        "claims/SOTA-380.yaml:5:1: error[yaml-syntax]: while scanning a quoted scalar found unexpected end of stream"
    )


def test_a_repeated_key_is_an_error_that_names_the_first_line(diagnose):
    assert diagnose("yaml-duplicate-key") == (
        "claims/SOTA-380.yaml:5:1: error[yaml-duplicate-key]: key 'title' repeats the one on line 3\n  hint: keep one of the two"
    )


def test_a_python_object_tag_is_refused_before_anything_is_constructed(diagnose):
    assert diagnose("yaml-tag") == (
        "claims/SOTA-380.yaml:3:8: error[yaml-tag]: tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed\n"
        "  hint: remove the tag; records are plain data"
    )


def test_an_anchor_bomb_is_refused_at_its_first_anchor(diagnose):
    assert diagnose("yaml-alias") == (
        "claims/SOTA-380.yaml:3:4: error[yaml-alias]: an anchor (&a) names a value for an alias to repeat\n"
        "  hint: remove the anchor; records spell every value out"
    )


def test_a_list_instead_of_a_mapping_is_not_a_record(diagnose):
    assert diagnose("yaml-not-mapping-list") == (
        "claims/SOTA-380.yaml:1:1: error[yaml-not-mapping]: a record must be a mapping of fields (got a list)"
    )


def test_an_empty_file_is_not_a_record(diagnose):
    assert diagnose("yaml-not-mapping-empty") == (
        "claims/SOTA-380.yaml:1:1: error[yaml-not-mapping]: a record must be a mapping of fields (got an empty file)"
    )


def test_nesting_deeper_than_any_record_is_refused_where_it_gets_too_deep(diagnose):
    assert diagnose("yaml-too-deep") == (
        f"claims/SOTA-380.yaml:3:37: error[yaml-too-deep]: nesting deeper than {MAX_DEPTH} levels"
    )


def test_a_record_with_more_items_than_any_record_has_is_refused_before_it_is_parsed(diagnose, monkeypatch):
    from assay.records import yaml_safe

    monkeypatch.setattr(yaml_safe, "MAX_ITEMS", 1_000)  # the fixture's 2,000 tags; the real bound is 200,000
    assert diagnose("yaml-too-large") == (
        "claims/SOTA-380.yaml:1:1: error[yaml-too-large]: holds 2,005 items, over the 1,000 a record may have\n"
        "  hint: a record is a page of fields, not data: keep data in files the verifier reads"
    )


def test_a_bidirectional_control_written_as_a_yaml_escape_is_an_error_where_it_stands(diagnose):
    found = [line for line in diagnose("bidi-control").splitlines() if "bidi-control" in line]
    assert found == [
        "claims/SOTA-380.yaml:3:16: error[bidi-control]: U+202E, a bidirectional control, can make the text show in "
        "another order than it reads",
        "claims/SOTA-380.yaml:3:26: error[bidi-control]: U+202C, a bidirectional control, can make the text show in "
        "another order than it reads",
    ]


def test_a_record_without_the_schema_line_gets_a_warning_with_the_line_to_add(diagnose):
    assert diagnose("schema-line") == (
        "claims/SOTA-380.yaml:1:1: warning[schema-line]: the first line does not point editors at the schema\n"
        "  hint: add '# yaml-language-server: $schema=../schema/claim.schema.json' as the first line"
    )


def test_several_documents_in_one_file_are_not_a_record():
    _, _, diags = read_yaml(b"id: SOTA-380\n---\nid: SOTA-381\n", "claims/SOTA-380.yaml")
    assert [d.render() for d in diags] == [
        "claims/SOTA-380.yaml:2:1: error[yaml-not-mapping]: the file holds several documents\n"
        "  hint: a record is one mapping; put each record in its own file"
    ]


def test_a_control_character_is_a_syntax_error_not_an_exception():
    _, _, diags = read_yaml(b"title: a\x01b\n", "x.yaml")
    assert [d.render() for d in diags] == [
        "x.yaml:1:1: error[yaml-syntax]: unacceptable character #x0001: control characters are not allowed"
    ]


def test_a_key_that_is_not_a_string_is_a_syntax_error():
    _, _, diags = read_yaml(b"id: SOTA-380\n2020: year\n", "x.yaml")
    assert [d.render() for d in diags] == [
        "x.yaml:2:1: error[yaml-syntax]: key 2020 is not a string\n  hint: field names are plain words"
    ]


def test_a_custom_tag_is_refused():
    _, _, diags = read_yaml(b"title: !custom x\n", "x.yaml")
    assert [d.render() for d in diags] == [
        "x.yaml:1:8: error[yaml-tag]: tag '!custom' is not allowed\n  hint: remove the tag; records are plain data"
    ]


@pytest.mark.parametrize(
    ("text", "tag", "kind"),
    [("title: !!map x\n", "map", "scalar"), ("title: !!seq x\n", "seq", "scalar"), ("tags: !!str [a]\n", "str", "list")],
)
def test_a_plain_tag_on_the_wrong_kind_of_value_is_refused(text, tag, kind):
    data, _, diags = read_yaml(text.encode(), "x.yaml")
    assert data is None
    assert [(d.code, d.message) for d in diags] == [("yaml-tag", f"tag 'tag:yaml.org,2002:{tag}' does not fit a {kind}")]


def test_recursion_too_deep_for_the_parser_is_reported_not_raised():
    text = ("x: " + "[" * 1500 + "]" * 1500 + "\n").encode()
    data, _, diags = read_yaml(text, "x.yaml")
    assert data is None
    assert [(d.line, d.col, d.code) for d in diags] == [(1, 1003, "yaml-too-deep")]  # libyaml stops at its depth limit


def test_dates_stay_text_in_iso_form():
    data, _, diags = read_yaml(b"date: 2024-05-02\nat: 2024-05-02 10:30:00\n", "x.yaml")
    assert (data, diags) == ({"date": "2024-05-02", "at": "2024-05-02T10:30:00"}, [])


def test_every_field_remembers_the_line_and_column_of_its_key():
    text = b'id: SOTA-380\ncitations:\n  - source: LIT-590\n    locator: "\\xa73.3"\n'
    data, positions, diags = read_yaml(text, "x.yaml")
    assert diags == []
    assert positions[("id",)] == (1, 1)
    assert positions[("citations",)] == (2, 1)
    assert positions[("citations", 0)] == (3, 5)
    assert positions[("citations", 0, "source")] == (3, 5)
    assert positions[("citations", 0, "locator")] == (4, 5)


# --- validation against the model ---------------------------------------------------------------


def test_an_id_without_three_digits_is_a_bad_id(diagnose):
    assert diagnose("bad-id") == (
        "claims/SOTA-38.yaml:2:1: error[bad-id]: id 'SOTA-38' does not have the form of its series\n"
        "  hint: ids look like LIT-590, SOTA-364, THEORY-085, ADR-011"
    )


def test_a_missing_field_is_reported_at_the_record(diagnose):
    assert diagnose("missing-field") == "claims/SOTA-380.yaml:2:1: error[missing-field]: 'title' is required"


def test_an_unknown_field_suggests_the_field_it_resembles(diagnose):
    assert diagnose("unknown-field") == (
        "claims/SOTA-380.yaml:5:1: error[unknown-field]: 'condition' is not a field of this record\n"
        "  hint: did you mean 'conditions'?"
    )


def test_an_unknown_field_unlike_any_lists_the_allowed_fields(tmp_path):
    path = tmp_path / "decisions" / "ADR-001.yaml"
    path.parent.mkdir()
    path.write_text(
        "# yaml-language-server: $schema=../schema/decision.schema.json\n"
        "id: ADR-001\ntitle: T\nstatus: accepted\ndate: '2024-01-01'\ncontext: C\ndecision: D\nconsequences: E\nzzz: 1\n"
    )
    assert [d.render() for d in load_record(tmp_path, "decisions/ADR-001.yaml").diagnostics] == [
        "decisions/ADR-001.yaml:9:1: error[unknown-field]: 'zzz' is not a field of this record\n"
        "  hint: allowed fields: consequences, context, date, decision, id, status, tags, title"
    ]


def test_a_word_where_a_number_belongs_is_a_wrong_type_with_the_value_and_its_type(diagnose):
    assert diagnose("wrong-type") == (
        "sources/LIT-620.yaml:6:1: error[wrong-type]: 'year' input should be a valid integer "
        "(got 'twenty twenty' that is a string)"
    )


def test_a_value_outside_a_literal_lists_the_allowed_ones(diagnose):
    assert diagnose("bad-value") == (
        "sources/LIT-620.yaml:3:1: error[bad-value]: 'kind' must be one of "
        "'paper', 'preprint', 'blog', 'code' or 'book' (got 'article')"
    )


def test_a_citation_without_a_locator_is_an_error_with_examples(diagnose):
    assert diagnose("missing-locator-citation") == (
        "claims/SOTA-380.yaml:6:5: error[missing-locator]: 'citations[0].locator' is required\n"
        "  hint: give the section, figure, table, page or equation, e.g. '§3.3' or 'Table 2'"
    )


def test_a_reported_number_without_a_locator_is_an_error(diagnose):
    assert diagnose("missing-locator-reported") == (
        "claims/SOTA-380.yaml:10:5: error[missing-locator]: 'reported[0].locator' is required\n"
        "  hint: give the section, figure, table, page or equation, e.g. '§3.3' or 'Table 2'"
    )


def test_an_empty_quote_is_an_error_at_the_quote(diagnose):
    assert diagnose("empty-quote") == "claims/SOTA-380.yaml:8:5: error[empty-quote]: 'citations[0].quote' must not be empty"


def test_a_claim_without_checks_must_say_why(diagnose):
    assert diagnose("no-check-reason") == (
        "claims/SOTA-380.yaml:2:1: error[bad-value]: the record: a claim without checks must say why in no_check_reason"
    )


def test_a_pattern_mismatch_in_a_nested_field_shows_the_pattern_and_the_value(kb_root):
    path = kb_root / "sources" / "LIT-590.yaml"
    path.write_text(path.read_text().replace("arxiv: 1911.05722v3", "arxiv: 1911.05722v"))
    assert [d.render() for d in load_record(kb_root, "sources/LIT-590.yaml").diagnostics] == [
        "sources/LIT-590.yaml:10:3: error[wrong-type]: 'identifiers.arxiv' must match ^[0-9]{4}\\.[0-9]{4,5}v[0-9]+$ "
        "(got '1911.05722v')"
    ]


def test_an_arxiv_id_that_yaml_reads_as_a_number_says_it_got_a_float(kb_root):
    path = kb_root / "sources" / "LIT-590.yaml"
    path.write_text(path.read_text().replace("arxiv: 1911.05722v3", "arxiv: 1911.05722"))
    assert [d.render() for d in load_record(kb_root, "sources/LIT-590.yaml").diagnostics] == [
        "sources/LIT-590.yaml:10:3: error[wrong-type]: 'identifiers.arxiv' input should be a valid string "
        "(got 1911.05722 that is a float)"
    ]


def test_a_record_filed_in_the_wrong_folder_is_not_validated_against_that_folders_model(kb_root):
    path = kb_root / "sources" / "SOTA-380.yaml"
    path.write_text((kb_root / "claims" / "THEORY-090.yaml").read_text().replace("THEORY-090", "SOTA-380"))
    loaded = load_record(kb_root, "sources/SOTA-380.yaml")
    assert (loaded.record, loaded.diagnostics) == (None, [])


# --- the whole knowledge base -------------------------------------------------------------------


def test_the_valid_fixture_loads_every_record_valid_and_in_folder_order(kb_root):
    kb = load(kb_root)
    assert [(f.path, type(f.record).__name__) for f in kb.files] == [
        ("sources/LIT-590.yaml", "Source"),
        ("sources/LIT-612.yaml", "Source"),
        ("claims/SOTA-364.yaml", "Claim"),
        ("claims/THEORY-085.yaml", "Claim"),
        ("claims/THEORY-090.yaml", "Claim"),
        ("decisions/ADR-011.yaml", "Decision"),
    ]
    assert all(f.diagnostics == [] for f in kb.files)
    assert list(kb.claims) == ["SOTA-364", "THEORY-085", "THEORY-090"]
    assert isinstance(kb.sources["LIT-590"], Source) and isinstance(kb.decisions["ADR-011"], Decision)


def test_an_invalid_record_is_kept_by_its_id_without_a_record(make_kb):
    kb = load(make_kb("missing-field"))
    loaded = kb.by_id["SOTA-380"]
    assert loaded.record is None and loaded.data["id"] == "SOTA-380"
    assert "SOTA-380" not in kb.claims


def test_a_file_that_cannot_be_read_is_kept_under_its_file_stem(make_kb):
    kb = load(make_kb("not-utf8"))
    assert kb.by_id["SOTA-380"].data is None


def test_of_two_records_with_one_id_the_first_is_the_one_the_knowledge_base_uses(make_kb):
    kb = load(make_kb("duplicate-id"))
    assert kb.by_id["SOTA-364"].path == "claims/SOTA-364.yaml"
    assert [c.id for c in kb.claims["SOTA-364"].checks] == ["bn-cross-sample", "shuffle-bn"]


def test_the_indices_are_built_once_when_the_knowledge_base_is_loaded(kb_root):
    kb = load(kb_root)
    assert kb.by_id is kb.by_id and kb.claims is kb.claims
    assert kb.sources is kb.sources and kb.decisions is kb.decisions
    assert list(kb.by_id) == ["LIT-590", "LIT-612", "SOTA-364", "THEORY-085", "THEORY-090", "ADR-011"]


def test_where_falls_back_to_the_deepest_known_prefix(kb_root):
    loaded = load_record(kb_root, "claims/SOTA-364.yaml")
    assert loaded.where(("citations", 1, "quote")) == (13, 5)
    assert loaded.where(("citations", 1, "nothing", "here")) == (11, 5)
    assert loaded.where(("no-such-field",)) == (2, 1)
    assert isinstance(loaded.record, Claim)


@pytest.mark.parametrize("folder", ["claims", "sources", "decisions"])
def test_an_empty_knowledge_base_loads_nothing(tmp_path: Path, folder: str):
    (tmp_path / folder).mkdir()
    assert load(tmp_path).files == []


def test_a_folder_named_like_a_record_is_reported_not_read(diagnose):
    assert diagnose("unreadable-file") == (
        "claims/SOTA-380.yaml:1:1: error[unreadable-file]: claims/SOTA-380.yaml is not a regular file (a directory)\n"
        "  hint: records are regular files inside the knowledge base"
    )
