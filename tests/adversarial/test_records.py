"""Attacks through record values and the files beside them: numbers that are not numbers, and `assay new`
led out of the knowledge base."""

from __future__ import annotations

import json

import pytest

from assay import audit, cli
from assay.records.knowledge_base import load


@pytest.mark.parametrize("number", [".inf", "-.inf", ".nan"])
def test_a_reported_number_that_is_not_finite_is_an_error_so_the_json_export_stays_json(kb_root, capsys, number):
    path = kb_root / "claims" / "SOTA-364.yaml"
    path.write_text(path.read_text().replace("    value: 60.6\n", f"    value: {number}\n", 1))
    got = "-inf" if number == "-.inf" else number.lstrip(".")
    assert [d.render() for d in audit.run(load(kb_root))] == [
        f"claims/SOTA-364.yaml:17:5: error[wrong-type]: 'reported[0].value' input should be a finite number "
        f"(got {got} that is a float)"
    ]
    assert cli.main(["--root", str(kb_root), "export", "json"]) == 0
    json.loads(capsys.readouterr().out, parse_constant=lambda c: pytest.fail(f"{c} in the JSON export"))


def test_an_expectation_threshold_of_minus_infinity_cannot_make_a_check_pass_trivially(kb_root):
    path = kb_root / "claims" / "SOTA-364.yaml"
    path.write_text(path.read_text().replace("        value: 50,", "        value: -.inf,", 1))
    assert [d.code for d in audit.run(load(kb_root))] == ["wrong-type"]


def test_new_refuses_to_write_through_a_claims_folder_that_links_outside(kb_root, tmp_path, capsys):
    outside = tmp_path / "outside"
    outside.mkdir()
    for p in (kb_root / "claims").iterdir():
        p.rename(outside / p.name)
    (kb_root / "claims").rmdir()
    (kb_root / "claims").symlink_to(outside)
    assert cli.main(["--root", str(kb_root), "new", "claim", "--source", "LIT-590"]) == 2
    assert capsys.readouterr().err == (
        "assay: error: claims/ is a link to a folder outside the knowledge base; assay new writes only inside it\n"
    )
    assert sorted(p.name for p in outside.iterdir()) == ["SOTA-364.yaml", "THEORY-085.yaml", "THEORY-090.yaml"]


def test_new_writes_no_odd_file_name_into_the_record_it_scaffolds(kb_root, capsys):
    (kb_root / "sources" / "LIT-1\ntitle: injected.yaml").write_text("junk\n")
    assert cli.main(["--root", str(kb_root), "new", "claim", "--source", "LIT-1\ntitle: injected"]) == 2
    assert not (kb_root / "claims" / "SOTA-365.yaml").exists()  # only a well-formed id of a source file is cited
    assert cli.main(["--root", str(kb_root), "new", "claim", "--source", "LIT-590"]) == 0
    text = (kb_root / "claims" / "SOTA-365.yaml").read_text()
    assert "injected" not in text and "  - source: LIT-590\n" in text


def test_a_copied_record_file_that_sorts_first_is_the_duplicate_not_the_real_one(kb_root):
    real = kb_root / "claims" / "SOTA-364.yaml"
    (kb_root / "claims" / "SOTA-364 (copy).yaml").write_text(real.read_text())  # sorts before SOTA-364.yaml
    kb = load(kb_root)
    assert kb.claim_files["SOTA-364"].path == "claims/SOTA-364.yaml"
    found = [(d.path, d.code) for d in audit.run(kb)]
    assert ("claims/SOTA-364 (copy).yaml", "duplicate-id") in found
    assert all(path != "claims/SOTA-364.yaml" for path, _ in found)


def test_a_hidden_file_is_no_record(kb_root):
    real = kb_root / "claims" / "SOTA-364.yaml"
    (kb_root / "claims" / ".SOTA-364.yaml.swp.yaml").write_text(real.read_text().replace("title:", "title: Not me,", 1))
    kb = load(kb_root)
    assert [f.path for f in kb.files if f.id == "SOTA-364"] == ["claims/SOTA-364.yaml"]
    assert audit.run(kb) == []


def test_a_record_that_would_expand_to_millions_of_items_is_refused_before_it_is_parsed(kb_root):
    import resource
    import time

    path = kb_root / "claims" / "SOTA-380.yaml"
    path.write_text("id: SOTA-380\ntags: [" + ",".join(["x"] * 4_000_000) + "]\n")  # 8 MiB, 4 million items
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.process_time()
    found = [d.render() for d in audit.run(load(kb_root)) if d.path == "claims/SOTA-380.yaml"]
    assert found == [
        "claims/SOTA-380.yaml:1:1: error[yaml-too-large]: holds 4,000,003 items, over the 200,000 a record may have\n"
        "  hint: a record is a page of fields, not data: keep data in files the verifier reads"
    ]
    assert time.process_time() - started < 5
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KiB: no node graph was built


def test_an_anchor_that_no_alias_repeats_in_a_flow_list_is_refused(kb_root):
    path = kb_root / "claims" / "SOTA-364.yaml"
    text = path.read_text()
    line = text.splitlines().index("    devices: [cpu]") + 1
    path.write_text(text.replace("    devices: [cpu]\n", "    devices: [&here cpu]\n", 1))
    assert [d.render() for d in audit.run(load(kb_root)) if d.path == "claims/SOTA-364.yaml"] == [
        f"claims/SOTA-364.yaml:{line}:15: error[yaml-alias]: an anchor (&here) names a value for an alias to repeat\n"
        "  hint: remove the anchor; records spell every value out"
    ]


@pytest.mark.parametrize(
    ("written", "got"),
    [("true", "True that is a bool"), ('"0.5"', "'0.5' that is a string"), ("yes", "True that is a bool")],
)
def test_a_threshold_written_as_a_boolean_or_a_string_is_no_number(kb_root, written, got):
    path = kb_root / "claims" / "SOTA-364.yaml"
    path.write_text(path.read_text().replace('op: "<", value: 0.6,', f'op: "<", value: {written},', 1))
    assert [d.render() for d in audit.run(load(kb_root)) if d.path == "claims/SOTA-364.yaml"] == [
        f"claims/SOTA-364.yaml:50:51: error[wrong-type]: 'checks[1].expect[1].value' input should be a valid number (got {got})"
    ]


def test_a_seed_count_written_as_a_float_is_no_count(kb_root):
    path = kb_root / "claims" / "THEORY-085.yaml"
    path.write_text(path.read_text().replace("    devices: [cpu]\n", "    devices: [cpu]\n    seeds: {count: 3.0}\n", 1))
    assert [d.render() for d in audit.run(load(kb_root)) if d.path == "claims/THEORY-085.yaml"] == [
        "claims/THEORY-085.yaml:16:13: error[wrong-type]: 'checks[0].seeds.count' input should be a valid integer "
        "(got 3.0 that is a float)"
    ]


def test_a_control_flag_written_as_a_string_is_no_boolean(kb_root):
    path = kb_root / "claims" / "SOTA-364.yaml"
    path.write_text(path.read_text().replace("control: true,", 'control: "false",', 1))
    assert [d.render() for d in audit.run(load(kb_root)) if d.path == "claims/SOTA-364.yaml"] == [
        "claims/SOTA-364.yaml:50:63: error[wrong-type]: 'checks[1].expect[1].control' input should be a valid boolean "
        "(got 'false' that is a string)"
    ]
