"""assay.cli: every command through ``main([...])``, its output and exit status; one run of the installed script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay import audit, cli
from tests.conftest import write_result

COMMANDS = ["check", "new", "show", "status", "graph", "export", "schema"]


def assay(root: Path, *argv: str) -> int:
    return cli.main(["--root", str(root), *argv])


# --- check --------------------------------------------------------------------------------------


def test_check_on_a_valid_knowledge_base_prints_only_the_counts_and_exits_0(kb_root, capsys):
    assert assay(kb_root, "check") == 0
    out, err = capsys.readouterr()
    assert (out, err) == ("", "0 error(s), 0 warning(s) in 6 records (3 claims, 2 sources, 1 decisions)\n")


def test_check_prints_each_diagnostic_with_its_hint_and_exits_1(make_kb, capsys):
    assert assay(make_kb("unknown-source"), "check") == 1
    out, err = capsys.readouterr()
    assert out == "claims/SOTA-380.yaml:6:5: error[unknown-source]: 'LIT-509' is not a source\n  hint: did you mean 'LIT-590'?\n"
    assert err == "1 error(s), 0 warning(s) in 7 records (4 claims, 2 sources, 1 decisions)\n"


def test_check_prints_every_diagnostic_of_the_run_not_just_the_first(make_kb, capsys):
    assert assay(make_kb("yaml-tag", "uncited-source", "untied-verifier"), "check") == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "claims/SOTA-380.yaml:3:8: error[yaml-tag]: tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed",
        "  hint: remove the tag; records are plain data",
        "sources/LIT-620.yaml:2:1: warning[uncited-source]: no claim cites LIT-620",
        "verify/test_untied.py:4:1: error[untied-verifier]: 'verify/test_untied.py::test_measures_nothing_in_particular' "
        "has no claim marker",
        "  hint: add @pytest.mark.claim('SOTA-NNN', 'check-id')",
    ]
    assert err == "2 error(s), 1 warning(s) in 8 records (3 claims, 3 sources, 1 decisions)\n"


def test_check_with_only_warnings_exits_0(make_kb, capsys):
    assert assay(make_kb("schema-line"), "check") == 0
    assert capsys.readouterr().out.startswith("claims/SOTA-380.yaml:1:1: warning[schema-line]:")


def test_the_root_option_also_works_after_the_command(make_kb, capsys):
    assert cli.main(["check", "--root", str(make_kb("bad-id"))]) == 1
    assert "error[bad-id]" in capsys.readouterr().out


# --- new ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "path"),
    [
        (["new", "claim", "--source", "LIT-590"], "claims/SOTA-365.yaml\nverify/test_sota365.py"),
        (["new", "claim", "--theory", "--source", "LIT-590"], "claims/THEORY-091.yaml\nverify/test_theory091.py"),
        (["new", "source"], "sources/LIT-613.yaml"),
        (["new", "decision"], "decisions/ADR-012.yaml"),
    ],
)
def test_new_scaffolds_the_next_free_id_of_the_series(kb_root, capsys, argv, path):
    assert assay(kb_root, *argv) == 0
    assert capsys.readouterr().out == path + "\n"
    path = path.split("\n")[0]
    assert (kb_root / path).read_text(encoding="utf-8").startswith("# yaml-language-server: $schema=../schema/")


def test_new_takes_one_past_the_highest_number_not_the_first_gap(kb_root, capsys):
    (kb_root / "claims" / "SOTA-400.yaml").write_text(
        (kb_root / "claims" / "THEORY-090.yaml").read_text().replace("THEORY-090", "SOTA-400")
    )
    assert assay(kb_root, "new", "claim", "--source", "LIT-590") == 0
    assert capsys.readouterr().out == "claims/SOTA-401.yaml\nverify/test_sota401.py\n"


def test_new_starts_a_series_at_001_in_an_empty_knowledge_base(tmp_path, capsys):
    (tmp_path / "claims").mkdir()
    assert assay(tmp_path, "new", "decision") == 0
    assert capsys.readouterr().out == "decisions/ADR-001.yaml\n"


def test_every_scaffold_validates_and_only_its_placeholder_texts_are_errors(kb_root, capsys):
    for argv in (["claim", "--source", "LIT-590"], ["claim", "--theory", "--source", "LIT-590"], ["source"], ["decision"]):
        assert assay(kb_root, "new", *argv) == 0
    capsys.readouterr()
    assert assay(kb_root, "check") == 1
    out, _ = capsys.readouterr()
    codes = [line.split("[")[1].split("]")[0] for line in out.splitlines() if not line.startswith("  hint")]
    # the new source is cited by nobody yet, and the check's thresholds were never measured: warnings
    assert set(codes) == {"placeholder", "uncited-source", "scaffold-threshold"}
    assert (
        "claims/SOTA-365.yaml:4:1: error[placeholder]: 'statement' still holds the text assay new wrote: "
        '"The claim as filed, in the source document\'s words."' in out
    )


def test_a_scaffold_validates_against_the_committed_json_schema(kb_root, capsys):
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the test extra")
    import yaml

    root = Path(__file__).resolve().parents[1]
    for kind, schema in (("claim", "claim"), ("source", "source"), ("decision", "decision")):
        assert assay(kb_root, "new", kind, *(["--source", "LIT-590"] if kind == "claim" else [])) == 0
        path = kb_root / capsys.readouterr().out.splitlines()[0]
        data = json.loads(json.dumps(yaml.safe_load(path.read_text(encoding="utf-8")), default=str))
        jsonschema.Draft7Validator(json.loads((root / "schema" / f"{schema}.schema.json").read_text())).validate(data)


# --- show ---------------------------------------------------------------------------------------


def test_show_prints_a_claim_in_words_and_the_record_only_with_json(kb_root, capsys):
    assert assay(kb_root, "show", "SOTA-364") == 0
    assert capsys.readouterr().out.splitlines() == [
        "SOTA-364  (claims/SOTA-364.yaml)",
        "  Batch norm leaks information between contrastive pairs",
        "  status: not-run — No check has a result yet.",
        "  assertions: cpu: not run; cuda: not run",
        "  closure: open (this claim is not-run, not verified)",
        "  assertion leak: cpu not-run, cuda not-run",
        "    filed: lets a contrastive model find the positive key through batch statistics",
        "    source: paraphrased",
        "    supports by check bn-cross-sample",
        "    supports by check shuffle-bn",
        "  check bn-cross-sample on cpu: not-run",
        "  check shuffle-bn on cpu: not-run",
        "  check shuffle-bn on cuda: not-run",
        "  (the record's fields: assay show SOTA-364 --json)",
    ]
    assert assay(kb_root, "show", "SOTA-364", "--json") == 0
    assert json.loads(capsys.readouterr().out)["id"] == "SOTA-364"


def test_show_gives_each_expectation_as_measured_with_its_counterparts(kb_root, capsys):
    write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    assert assay(kb_root, "show", "THEORY-085") == 0
    out = capsys.readouterr().out
    assert "  check log-n-cap on cpu: passed\n    excess = 0, expected == 0 within 1e-06: holds\n" in out


@pytest.mark.parametrize("message", ["", "\n  \n"])
def test_show_gives_a_last_error_that_says_nothing_as_its_kind_alone(kb_root, capsys, message):
    path = write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    data = json.loads(path.read_text())
    data["last_error"] = {"kind": "error", "message": message, "finished": "2026-01-02T00:00:00Z"}
    path.write_text(json.dumps(data))
    assert assay(kb_root, "show", "THEORY-085") == 0
    line = "  check log-n-cap on cpu: error (last measured passed on 2026-01-01T00:00:00Z; last run ended in error)\n"
    assert line in capsys.readouterr().out


def test_show_of_a_verified_claim_cut_into_assertions_says_only_what_verified_means_for_it(kb_root, capsys):
    write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)  # its one assertion, cap, reads it
    assert assay(kb_root, "show", "THEORY-085") == 0
    assert "  status: verified — Every assertion is supported on every device that ran.\n" in capsys.readouterr().out


def test_show_of_a_verified_claim_not_yet_cut_into_assertions_says_that_every_check_passed(kb_root, capsys):
    record = kb_root / "claims" / "THEORY-085.yaml"
    record.write_text(record.read_text().split("assertions:\n")[0])
    write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    assert assay(kb_root, "show", "THEORY-085") == 0
    out = capsys.readouterr().out
    assert "  status: verified — A claim not yet cut into assertions: every check passed on every device that ran.\n" in out


def test_show_tags_a_regime_expectation_as_it_tags_a_control(kb_root, capsys):
    record = kb_root / "claims" / "THEORY-085.yaml"
    text = record.read_text().replace(
        "      - {name: excess,",
        "      - {name: reached, unit: fraction, measures: Whether the run reached the regime}\n      - {name: excess,",
    )
    record.write_text(text.replace("    expect:\n", '    expect:\n      - {metric: reached, op: ">", value: 0, regime: true}\n'))
    write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0, reached=1.0)
    assert assay(kb_root, "show", "THEORY-085") == 0
    out = capsys.readouterr().out
    assert "    reached = 1, expected > 0: holds [regime]\n    excess = 0, expected == 0 within 1e-06: holds\n" in out


def test_show_explains_a_stale_result(kb_root, capsys):
    write_result(
        kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", parts={"code:verify/test_theory085.py": "0" * 16}, excess=0.0
    )
    assert assay(kb_root, "show", "THEORY-085") == 0
    out = capsys.readouterr().out
    assert "  status: stale — A result was computed from inputs that have changed since; rerun it.\n" in out
    assert "  check log-n-cap on cpu: passed (stale: verify/test_theory085.py changed)\n" in out


def test_show_of_a_source_prints_it_without_a_status(kb_root, capsys):
    assert assay(kb_root, "show", "LIT-590") == 0
    out = capsys.readouterr().out
    assert out == (
        "LIT-590  (sources/LIT-590.yaml)\n  Momentum Contrast for Unsupervised Visual Representation Learning\n"
        "  (the record's fields: assay show LIT-590 --json)\n"
    )


def test_show_of_an_invalid_record_points_at_check_and_exits_1(make_kb, capsys):
    assert assay(make_kb("missing-field"), "show", "SOTA-380") == 1
    assert capsys.readouterr().out == "SOTA-380  (claims/SOTA-380.yaml)\n  invalid: run `assay check`\n"


def test_show_of_an_unknown_id_is_one_line_and_exit_2(kb_root, capsys):
    assert assay(kb_root, "show", "SOTA-999") == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", "assay: error: 'SOTA-999' is not a record of this knowledge base; did you mean 'SOTA-364'?\n")


# --- status -------------------------------------------------------------------------------------


def test_status_lists_claims_by_status_and_why_a_result_is_stale(kb_root, capsys):
    (kb_root / "requirements.lock").write_text("torch==2.13.0+cpu\n")
    write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", parts={"pin:torch": "1.0"}, excess=0.0)
    assert assay(kb_root, "status") == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "stale (1): A result was computed from inputs that have changed since; rerun it.",
        "  THEORY-085   The InfoNCE estimate is capped at log N",
        "    cpu: 1 stale",
        "    log-n-cap.cpu is stale: the lock's pin of torch changed from 1.0 to 2.13.0+cpu",
        "not-run (1): No check has a result yet.",
        "  SOTA-364     Batch norm leaks information between contrastive pairs",
        "    cpu: not run; cuda: not run",
        "cited-only (1): No check tests it: every part of it is untested (cited only), and the record says why.",
        "  THEORY-090   Larger batches give contrastive learning more negatives",
    ]
    assert err.startswith("legend: verified = Every assertion is supported on every device that ran")


# --- graph --------------------------------------------------------------------------------------


def test_graph_focus_as_json_holds_the_records_within_depth(kb_root, capsys):
    assert assay(kb_root, "graph", "--focus", "THEORY-085", "--depth", "1", "--format", "json") == 0
    g = json.loads(capsys.readouterr().out)
    assert [n["id"] for n in g["nodes"]] == ["LIT-612", "SOTA-364", "THEORY-085"]
    assert [(e["source"], e["target"]) for e in g["edges"]] == [
        ("SOTA-364", "LIT-612"),
        ("SOTA-364", "THEORY-085"),
        ("THEORY-085", "LIT-612"),
    ]


def test_graph_as_dot_is_a_digraph(kb_root, capsys):
    assert assay(kb_root, "graph", "--focus", "LIT-590", "--depth", "1", "--format", "dot") == 0
    out = capsys.readouterr().out
    assert out.startswith("digraph assay {\n") and out.endswith("}\n")
    assert '  "LIT-612" -> "LIT-590" [label="compared_against"];\n' in out


def test_graph_as_mermaid_starts_with_its_direction(kb_root, capsys):
    assert assay(kb_root, "graph", "--format", "mermaid") == 0
    out = capsys.readouterr().out
    assert out.startswith("graph LR\n") and "  THEORY_090 -->|supports| SOTA_364\n" in out


def test_graph_focus_on_an_unknown_id_is_one_line_and_exit_2(kb_root, capsys):
    assert assay(kb_root, "graph", "--focus", "SOTA-999") == 2
    assert capsys.readouterr() == (
        "",
        "assay: error: --focus SOTA-999: 'SOTA-999' is not a record of this knowledge base; did you mean 'SOTA-364'?\n",
    )


# --- export -------------------------------------------------------------------------------------


def test_export_bibtex_writes_an_entry_per_source(kb_root, capsys):
    assert assay(kb_root, "export", "bibtex") == 0
    out = capsys.readouterr().out
    assert out.count("\n@") + out.startswith("@") == 2
    assert "@inproceedings{chen2020simple,\n" in out and "  note = {Assay LIT-612}\n" in out


def test_export_json_holds_every_record_with_status_and_the_graph(kb_root, capsys):
    assert assay(kb_root, "export", "json") == 0
    data = json.loads(capsys.readouterr().out)
    assert sorted(data) == ["claims", "decisions", "graph", "sources"]
    assert [(c["id"], c["status"]) for c in data["claims"]] == [
        ("SOTA-364", "not-run"),
        ("THEORY-085", "not-run"),
        ("THEORY-090", "cited-only"),
    ]


# --- schema -------------------------------------------------------------------------------------


def test_schema_writes_the_record_schemas_and_the_ledger_schema(tmp_path, capsys):
    assert assay(tmp_path, "schema") == 0
    assert capsys.readouterr().out.splitlines() == [
        "schema/source.schema.json",
        "schema/claim.schema.json",
        "schema/decision.schema.json",
        "schema/result.schema.json",
    ]


# --- help, errors, the installed script ---------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_help_of_each_command_ends_with_an_example(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main([command, "--help"])
    assert exit_.value.code == 0
    assert f"example: assay {command}" in capsys.readouterr().out


def test_an_unknown_command_is_a_usage_error_with_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["frobnicate"])
    assert exit_.value.code == 2
    assert "invalid choice: 'frobnicate'" in capsys.readouterr().err


def _boom(kb):
    raise RuntimeError("boom")


def test_an_internal_error_is_one_line_without_debug(kb_root, capsys, monkeypatch):
    monkeypatch.setattr(audit, "run", _boom)
    assert assay(kb_root, "check") == 3
    out, err = capsys.readouterr()
    assert (out, err) == ("", "assay: internal error: RuntimeError: boom (run with --debug for the traceback)\n")


def test_an_internal_error_shows_its_traceback_with_debug(kb_root, capsys, monkeypatch):
    monkeypatch.setattr(audit, "run", _boom)
    assert cli.main(["--root", str(kb_root), "--debug", "check"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):\n")
    assert err.endswith("RuntimeError: boom\n") and "in _boom" in err


def test_debug_after_the_command_also_shows_the_traceback(kb_root, capsys, monkeypatch):
    monkeypatch.setattr(audit, "run", _boom)
    assert cli.main(["check", "--root", str(kb_root), "--debug"]) == 3
    assert capsys.readouterr().err.startswith("Traceback (most recent call last):\n")


def test_the_installed_assay_script_checks_a_broken_knowledge_base(make_kb):
    script = Path(sys.executable).with_name("assay")
    if not script.exists():
        pytest.skip(f"the assay script is not installed beside {sys.executable}")
    done = subprocess.run([str(script), "check"], cwd=make_kb("bad-id"), capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (
        1,
        "claims/SOTA-38.yaml:2:1: error[bad-id]: id 'SOTA-38' does not have the form of its series\n"
        "  hint: ids look like LIT-590, SOTA-364, THEORY-085, ADR-011\n",
        "1 error(s), 0 warning(s) in 7 records (3 claims, 2 sources, 1 decisions)\n",
    )


def test_a_reader_that_stops_early_ends_the_output_quietly(kb_root):
    import subprocess
    import sys

    child = subprocess.Popen(
        [sys.executable, "-m", "assay.cli", "--root", str(kb_root), "export", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    child.stdout.close()  # the reader is gone before the first byte, like `| head -0`
    _, err = child.communicate(timeout=60)
    assert (child.returncode, err.decode()) == (0, "")


def test_check_for_one_claim_prints_only_what_bears_on_it(make_kb, capsys):
    # broken/unknown-source gives SOTA-380 a citation of a missing source; broken/unknown-record a relation to one
    root = make_kb("unknown-source")
    assert cli.main(["--root", str(root), "check"]) == 1
    everything = capsys.readouterr().out
    assert "claims/SOTA-380.yaml" in everything
    assert cli.main(["--root", str(root), "check", "--claim", "SOTA-364"]) == 0
    assert "SOTA-380" not in capsys.readouterr().out
    assert cli.main(["--root", str(root), "check", "--claim", "SOTA-380"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("claims/SOTA-380.yaml:") and "error[unknown-source]" in out


def test_check_for_two_claims_prints_what_bears_on_either_not_only_the_last(make_kb, capsys):
    root = make_kb("unknown-source")
    assert cli.main(["--root", str(root), "check", "--claim", "SOTA-380"]) == 1
    alone = capsys.readouterr().out
    assert cli.main(["--root", str(root), "check", "--claim", "SOTA-380", "--claim", "SOTA-364"]) == 1
    assert capsys.readouterr().out == alone  # SOTA-364 adds nothing here, and SOTA-380's problems stay
    assert cli.main(["--root", str(root), "check", "--claim", "SOTA-364", "--claim", "SOTA-380"]) == 1
    assert capsys.readouterr().out == alone


def test_check_for_a_claim_that_is_not_there_is_a_usage_error_with_a_suggestion(kb_root, capsys):
    assert cli.main(["--root", str(kb_root), "check", "--claim", "SOTA-36"]) == 2
    assert capsys.readouterr().err == (
        "assay: error: --claim SOTA-36: 'SOTA-36' is not a claim of this knowledge base; did you mean 'SOTA-364'?\n"
    )
