"""assay.records.across and assay.audit: rules across records and verifiers.

Each broken fixture is laid over the valid knowledge base and the run's whole output is compared.
"""

from __future__ import annotations

import difflib
import os
import subprocess
import time

import pytest

from assay import audit
from assay.diagnostics import CATALOGUE, Diagnostic
from assay.records.knowledge_base import load
from assay.records.verifiers import Verifier, scan
from tests.conftest import BROKEN


def test_the_valid_fixture_has_no_diagnostic(diagnose):
    assert diagnose() == ""


def test_a_valid_knowledge_base_is_checked_without_a_single_did_you_mean_search(kb_root, monkeypatch):
    # each search compares one name with every id: fine for a fault, quadratic if every reference paid it
    def refuse(*args, **kwargs):
        raise AssertionError("get_close_matches called on a valid knowledge base")

    monkeypatch.setattr(difflib, "get_close_matches", refuse)
    assert audit.run(load(kb_root)) == []


# --- identity -----------------------------------------------------------------------------------


def test_an_id_that_differs_from_the_file_name_is_reported_with_both(diagnose):
    assert diagnose("id-mismatch") == (
        "claims/SOTA-380.yaml:2:1: error[id-mismatch]: id 'SOTA-381' differs from the file name 'SOTA-380.yaml'\n"
        "  hint: rename the file to SOTA-381.yaml or change the id"
    )


def test_a_claim_filed_among_the_sources_is_reported_once_as_in_the_wrong_folder(diagnose):
    assert diagnose("wrong-folder") == (
        "sources/SOTA-380.yaml:2:1: error[wrong-folder]: 'SOTA-380' is a SOTA record and belongs in claims/"
    )


def test_a_second_record_with_an_id_is_a_duplicate_and_its_file_name_differs(diagnose):
    # a duplicate id in one folder always differs from its file name too: the stem is the id
    assert diagnose("duplicate-id") == (
        "claims/SOTA-380.yaml:2:1: error[duplicate-id]: id 'SOTA-364' is also used by claims/SOTA-364.yaml\n"
        "  hint: give this record the next free id (assay new)\n"
        "claims/SOTA-380.yaml:2:1: error[id-mismatch]: id 'SOTA-364' differs from the file name 'SOTA-380.yaml'\n"
        "  hint: rename the file to SOTA-364.yaml or change the id"
    )


def test_a_check_id_listed_twice_is_reported_at_the_second(diagnose):
    assert diagnose("duplicate-check") == (
        "claims/SOTA-364.yaml:37:5: error[duplicate-check]: check 'bn-cross-sample' is listed twice"
    )


def test_a_reported_number_listed_twice_is_reported_at_the_second(diagnose):
    assert diagnose("duplicate-reported") == (
        "claims/SOTA-364.yaml:22:5: error[duplicate-reported]: reported number 'moco-top1' is listed twice"
    )


# --- references ---------------------------------------------------------------------------------


def test_a_citation_of_a_missing_source_suggests_the_nearest_id(diagnose):
    assert diagnose("unknown-source") == (
        "claims/SOTA-380.yaml:6:5: error[unknown-source]: 'LIT-509' is not a source\n  hint: did you mean 'LIT-590'?"
    )


def test_a_relation_to_a_missing_record_suggests_the_nearest_id(diagnose):
    assert diagnose("unknown-record") == (
        "claims/SOTA-380.yaml:11:5: error[unknown-record]: 'THEORY-058' is not a record\n  hint: did you mean 'THEORY-085'?"
    )


def test_an_expectation_naming_a_missing_reported_number_suggests_the_nearest(diagnose):
    assert diagnose("unknown-reported") == (
        "claims/SOTA-364.yaml:48:9: error[unknown-reported]: 'moco-top5' is not a reported number of SOTA-364\n"
        "  hint: did you mean 'moco-top1'?"
    )


def test_a_comparison_governed_by_a_missing_decision_suggests_the_nearest(diagnose):
    assert diagnose("unknown-decision") == (
        "sources/LIT-612.yaml:15:5: error[unknown-decision]: 'ADR-012' is not a decision\n  hint: did you mean 'ADR-011'?"
    )


def test_a_claim_related_to_itself_is_an_error(diagnose):
    assert diagnose("self-relation") == "claims/SOTA-380.yaml:11:5: error[self-relation]: SOTA-380 refines itself"


def test_a_depends_on_cycle_is_reported_once_from_its_smallest_id(diagnose):
    assert diagnose("depends-on-cycle") == (
        "claims/SOTA-380.yaml:11:5: error[depends-on-cycle]: depends_on cycle: SOTA-380 -> SOTA-381 -> SOTA-380\n"
        "  hint: a claim cannot rest on itself; make one of these links 'supports'"
    )


def write_claim(root, cid: str, rests_on: list[str]) -> None:
    """A cited-only claim that depends_on ``rests_on``; its first link's target sits on line 11, column 5."""
    links = "".join(f"  - type: depends_on\n    target: {t}\n" for t in rests_on)
    (root / "claims" / f"{cid}.yaml").write_text(
        "# yaml-language-server: $schema=../schema/claim.schema.json\n"
        f"id: {cid}\ntitle: A claim of a knot\nstatement: It rests on others.\ncitations:\n"
        "  - source: LIT-590\n    locator: §1\n"
        "    quote: We present Momentum Contrast (MoCo) for unsupervised visual representation learning.\n"
        f"relations:\n{links}no_check_reason: cited only.\n"
    )


def test_thirteen_claims_that_each_rest_on_the_other_twelve_are_one_knot_and_one_diagnostic(make_kb):
    # ten such claims already have 1,112,073 simple cycles; listing them all took minutes and gigabytes
    root = make_kb()
    ids = [f"SOTA-{n}" for n in range(380, 393)]
    for cid in ids:
        write_claim(root, cid, [o for o in ids if o != cid])
    start = time.perf_counter()
    found = [d.render() for d in audit.run(load(root))]
    assert found == [
        "claims/SOTA-380.yaml:11:5: error[depends-on-cycle]: depends_on cycle: SOTA-380 -> SOTA-381 -> SOTA-380, "
        "in a knot of 13 claims that rest on one another: " + ", ".join(ids) + "\n"
        "  hint: a claim cannot rest on itself; make one of these links 'supports'"
    ]
    assert time.perf_counter() - start < 10


def test_a_knot_names_its_shortest_cycle_through_its_smallest_id_and_counts_members_past_twenty(make_kb):
    # a ring of 25 claims, SOTA-400 -> SOTA-401 -> ... -> SOTA-424 -> SOTA-400, with a shortcut 400 -> 423
    root = make_kb()
    ids = [f"SOTA-{n}" for n in range(400, 425)]
    for n, cid in enumerate(ids):
        write_claim(root, cid, [ids[(n + 1) % 25]] + (["SOTA-423"] if n == 0 else []))
    assert [d.render() for d in audit.run(load(root))] == [
        "claims/SOTA-400.yaml:13:5: error[depends-on-cycle]: depends_on cycle: SOTA-400 -> SOTA-423 -> SOTA-424 -> SOTA-400, "
        "in a knot of 25 claims that rest on one another: " + ", ".join(ids[:20]) + " and 5 more\n"
        "  hint: a claim cannot rest on itself; make one of these links 'supports'"
    ]


def test_a_claim_that_depends_on_itself_is_a_self_relation_not_also_a_cycle(make_kb):
    root = make_kb()
    write_claim(root, "SOTA-380", ["SOTA-380"])
    assert [d.render() for d in audit.run(load(root))] == [
        "claims/SOTA-380.yaml:11:5: error[self-relation]: SOTA-380 depends_on itself"
    ]


def test_a_source_that_compares_itself_with_a_later_one_breaks_adr_011(diagnose):
    assert diagnose("compared-against-later") == (
        "sources/LIT-590.yaml:15:5: error[compared-against-later]: LIT-590 (2019-11) cannot have compared itself "
        "against the later LIT-612 (2020-02)\n"
        "  hint: file the link on LIT-612 instead, if it runs the comparison (ADR-011)"
    )


def test_a_year_is_not_later_than_a_date_in_that_year(kb_root):
    # LIT-612 (2020-02) compares itself with a source known only by its year, 2020: it may have run it
    path = kb_root / "sources" / "LIT-590.yaml"
    path.write_text(path.read_text().replace("year: 2019\ndate: 2019-11\n", "year: 2020\n"))
    assert audit.run(load(kb_root)) == []


def test_a_source_no_claim_cites_is_a_warning(diagnose):
    assert diagnose("uncited-source") == "sources/LIT-620.yaml:2:1: warning[uncited-source]: no claim cites LIT-620"


# --- verifiers ----------------------------------------------------------------------------------


def test_a_check_naming_a_missing_verifier_is_an_error(diagnose):
    assert diagnose("unknown-verifier") == (
        "claims/SOTA-380.yaml:12:5: error[unknown-verifier]: verifier 'verify/test_sota380.py::test_leak' does not exist\n"
        "  hint: did you mean 'verify/test_sota364.py::test_shuffle_bn'?"
    )


def test_a_check_naming_another_claims_verifier_is_a_mismatch(diagnose):
    assert diagnose("verifier-mismatch") == (
        "claims/SOTA-380.yaml:12:5: error[verifier-mismatch]: 'verify/test_sota364.py::test_shuffle_bn' is marked "
        "claim('SOTA-364', 'shuffle-bn'), not ('SOTA-380', 'leak')"
    )


def test_a_verifier_tied_to_a_missing_check_suggests_the_nearest_check(diagnose):
    assert diagnose("orphan-verifier-check") == (
        "verify/test_orphan.py:5:1: error[orphan-verifier]: 'verify/test_orphan.py::test_tied_to_a_check_that_does_not_exist' "
        "is tied to check 'shuffle-bm', which SOTA-364 does not have\n"
        "  hint: did you mean 'shuffle-bn'?"
    )


def test_a_verifier_tied_to_a_missing_claim_suggests_the_nearest_claim(diagnose):
    assert diagnose("orphan-verifier-claim") == (
        "verify/test_orphan.py:5:1: error[orphan-verifier]: 'verify/test_orphan.py::test_tied_to_a_claim_that_does_not_exist' "
        "is tied to 'SOTA-365', which is not a claim\n"
        "  hint: did you mean 'SOTA-364'?"
    )


def test_a_verifier_without_a_claim_marker_is_untied(diagnose):
    assert diagnose("untied-verifier") == (
        "verify/test_untied.py:4:1: error[untied-verifier]: 'verify/test_untied.py::test_measures_nothing_in_particular' "
        "has no claim marker\n"
        "  hint: add @pytest.mark.claim('SOTA-NNN', 'check-id')"
    )


def test_verifiers_of_an_invalid_claim_are_not_reported_as_orphans(make_kb):
    root = make_kb()
    path = root / "claims" / "SOTA-364.yaml"
    path.write_text(path.read_text().replace("title: Batch norm leaks information between contrastive pairs\n", ""))
    assert [d.render() for d in audit.run(load(root))] == ["claims/SOTA-364.yaml:2:1: error[missing-field]: 'title' is required"]


# --- the ledger ---------------------------------------------------------------------------------


def test_a_truncated_ledger_file_is_an_error_not_a_silent_not_run(diagnose):
    assert diagnose("bad-ledger") == (
        "results/SOTA-364/shuffle-bn.cpu.json:1:1: error[bad-ledger]: results/SOTA-364/shuffle-bn.cpu.json is not JSON "
        "(Unterminated string starting at: line 1 column 45 (char 44)); it may be truncated\n"
        "  hint: rerun the check with pytest verify, or delete the file"
    )


def test_a_ledger_file_of_another_format_version_is_named_with_both_versions(diagnose):
    assert diagnose("ledger-format") == (
        "results/SOTA-364/shuffle-bn.cpu.json:1:1: error[ledger-format]: results/SOTA-364/shuffle-bn.cpu.json is ledger "
        "format 1; this Assay reads format 2\n"
        "  hint: rerun the check with this version (pytest verify --claim ID), or delete the file"
    )


def test_a_ledger_file_of_the_wrong_shape_names_the_field(diagnose):
    assert diagnose("ledger-shape") == (
        "results/SOTA-364/shuffle-bn.cpu.json:1:1: error[ledger-shape]: results/SOTA-364/shuffle-bn.cpu.json: 'tier': "
        "field required (and 4 more)\n"
        "  hint: rerun the check with pytest verify; ledger files are written by the plugin, not by hand"
    )


def test_a_stray_copy_of_a_result_is_reported_and_not_read_as_evidence(make_kb):
    root = make_kb("ledger-misplaced")
    assert "\n".join(d.render() for d in audit.run(load(root))) == (
        "results/THEORY-085/zzz-copy.json:1:1: error[ledger-misplaced]: results/THEORY-085/zzz-copy.json holds the "
        "result of THEORY-085/log-n-cap/cpu, not of its path\n"
        "  hint: a result lives at results/<claim>/<check>.<device>.json; delete the stray copy"
    )
    from assay.overview import claim_states

    assert [c.status for c in claim_states(load(root))["THEORY-085"].checks] == ["not-run"]


def test_a_result_of_a_check_the_claim_no_longer_has_is_reported_as_an_orphan(diagnose):
    assert diagnose("ledger-orphan") == (
        "results/THEORY-085/renamed-away.cpu.json:1:1: warning[ledger-orphan]: results/THEORY-085/renamed-away.cpu.json "
        "is a result of check 'renamed-away', which THEORY-085 does not have\n"
        "  hint: delete it (git rm), or restore the check it belongs to; nothing reads it"
    )


def test_a_temporary_file_left_in_the_ledger_is_a_warning_that_says_it_can_be_deleted(diagnose):
    assert diagnose("ledger-leftover") == (
        "results/THEORY-085/.log-n-cap.cpu.json.k9x2ab.tmp:1:1: warning[ledger-leftover]: "
        "results/THEORY-085/.log-n-cap.cpu.json.k9x2ab.tmp is a temporary file left by a run killed between writing a "
        "file of the ledger and renaming it; nothing reads it\n"
        "  hint: delete it (rm results/THEORY-085/.log-n-cap.cpu.json.k9x2ab.tmp); it is no result, and .gitignore keeps "
        "it out of a commit"
    )


def test_a_result_whose_figure_does_not_match_is_a_warning(diagnose):
    assert diagnose("ledger-figure") == (
        "results/THEORY-085/log-n-cap.cpu.json:1:1: warning[ledger-figure]: log-n-cap.cpu.curve.svg cannot be read "
        "(No such file or directory)\n"
        "  hint: rerun the check; the page shows no figure until then"
    )


def _no_history(cid: str) -> str:
    """The one ``no-history`` warning of an overlay with a seeded result: a copied fixture is no git repository."""
    return (
        f"claims/{cid}.yaml:2:1: warning[no-history]: when each expectation was fixed cannot be told (no history here: "
        "not a git repository, or git is not installed): every verdict that reads a seeded expectation reads "
        "provisional (1 claim(s) with results)\n"
        "  hint: read the knowledge base from a clone with its full history (git fetch --unshallow)"
    )


def test_a_seeded_result_in_a_knowledge_base_without_git_history_warns_once_that_its_verdicts_are_provisional(diagnose):
    assert diagnose("no-history") == _no_history("THEORY-085")


def test_a_seeded_expectation_committed_together_with_its_first_result_is_unconfirmed(make_kb):
    root = make_kb("unconfirmed")
    env = {
        "PATH": os.environ["PATH"],
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        **dict.fromkeys(("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"), "t"),
        **dict.fromkeys(("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"), "t@example.org"),
        **dict.fromkeys(("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"), "2026-01-02T00:00:00+0000"),
    }
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "the record and its first result together"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, env=env, check=True, capture_output=True, text=True)
    assert "\n".join(d.render() for d in audit.run(load(root))) == (
        "claims/THEORY-085.yaml:19:9: warning[unconfirmed]: check 'log-n-cap': 'excess == 0 within 1e-06' is "
        f"with-result: stated at {head.stdout[:8]} (2026-01-02) together with its first result; a verdict that reads it "
        "is provisional until a run on fresh seeds confirms it\n"
        "  hint: confirm it on fresh seeds: assay verify --confirm (the path for a new check: measure on pilot seeds, "
        "commit the expectations, then run the ledger)"
    )


# --- what a measurement shows of its expectations -----------------------------------------------


def test_a_counterpart_that_is_one_constant_on_every_seed_challenges_nothing(diagnose):
    assert diagnose("constant-counterpart") == (
        _no_history("SOTA-364") + "\n"
        "claims/SOTA-364.yaml:46:9: warning[constant-counterpart]: check 'shuffle-bn': counterpart 'top1_nofix' of "
        "'top1 >= 50' is the same constant on every seed on cpu: it challenges nothing\n"
        "  hint: record the same statistic measured on the condition without the effect, per seed"
    )


def test_a_toy_expectation_whose_seeds_and_counterparts_all_agree_is_a_likely_identity(diagnose):
    # its counterpart agrees on every seed too, so it is also a constant counterpart: the rule asks both to be flat
    assert diagnose("likely-identity") == (
        _no_history("SOTA-364") + "\n"
        "claims/SOTA-364.yaml:46:9: warning[constant-counterpart]: check 'shuffle-bn': counterpart 'top1_nofix' of "
        "'top1 >= 50' is the same constant on every seed on cpu: it challenges nothing\n"
        "  hint: record the same statistic measured on the condition without the effect, per seed\n"
        "claims/SOTA-364.yaml:46:9: warning[likely-identity]: check 'shuffle-bn': 'top1 >= 50' is 60 on every one of "
        "3 seeds on cpu, and so are its counterparts\n"
        "  hint: mark it identity: true (shown, never support outside an analytic check), or measure what varies"
    )


# --- numbers in prose ---------------------------------------------------------------------------


def test_a_reference_in_prose_to_a_metric_the_check_does_not_declare_is_an_error(diagnose):
    assert diagnose("unknown-reference") == (
        "claims/THEORY-085.yaml:15:5: error[unknown-reference]: {log-n-cap.exces} names metric 'exces' of check "
        "'log-n-cap' that the record does not hold\n"
        "  hint: write {CHECK.METRIC} for a metric a check's result holds, {reported.ID} for a reported number"
    )


def test_a_decimal_typed_in_prose_that_no_measured_or_recorded_value_rounds_to_warns(diagnose):
    assert diagnose("number-not-in-ledger") == (
        "claims/THEORY-085.yaml:15:5: warning[number-not-in-ledger]: 0.03 in the note matches no value the ledger or "
        "the record holds for this claim: a number typed by hand drifts from the measurement\n"
        "  hint: write it as a reference ({CHECK.METRIC}, {reported.ID}), or mark a number from elsewhere as {source: N}"
    )


# --- what a verdict means -----------------------------------------------------------------------


def test_a_formula_in_a_title_that_draws_a_box_larger_than_the_page_is_an_error(diagnose):
    assert diagnose("unbounded-formula") == (
        "claims/THEORY-085.yaml:3:1: error[unbounded-formula]: title: the formula '\\rule{3000px}{6000px}' uses \\rule, "
        "which draws a box of any size and colour; it gives the size 6000px (about 602em, over 10em)\n"
        "  hint: write the formula without it, with sizes up to 10em: record text holds no boxes, links or macros"
    )


def test_an_assertion_that_reports_what_a_source_says_cannot_name_checks_as_its_evidence(diagnose):
    assert diagnose("reported-with-evidence") == (
        "claims/SOTA-364.yaml:55:5: error[reported-with-evidence]: assertion 'leak' reports what a source says, yet "
        "names check(s) bn-cross-sample, shuffle-bn as its evidence: a run cannot contradict a quotation\n"
        "  hint: rest it on its quote (cited_only: reports what the source says), or file what the world does as its "
        "own assertion with its source kind (quoted, paraphrased, not-in-source) and the checks"
    )


def test_an_assertion_reading_all_of_a_check_whose_expectation_tests_another_sentence_warns(diagnose):
    assert diagnose("reads-other-sentence") == (
        "claims/SOTA-364.yaml:57:9: warning[reads-other-sentence]: assertion 'leak' reads all of check 'shuffle-bn', "
        "whose expectations top1 test the sentence of shuffled-accuracy: it is not judged by those\n"
        "  hint: name under metrics: the expectations that test its own says: (and because: why only those)"
    )


def test_a_threshold_read_by_words_that_state_a_size_without_a_source_value_warns(diagnose):
    assert diagnose("size-unstated") == (
        "claims/THEORY-085.yaml:19:9: warning[size-unstated]: check 'log-n-cap': 'excess == 0 within 1e-06' is read by "
        "assertion 'cap', whose words or citation state a size ('0.5'), but it carries no source_value\n"
        "  hint: hold it to the source's size with source_value: {says, value, citation} (a weaker threshold reads "
        "direction-only), or say why not with no_size_because:"
    )


# --- one run, every diagnostic ------------------------------------------------------------------


def test_faults_in_two_files_are_both_reported_in_file_order(make_kb):
    found = audit.run(load(make_kb("unknown-source", "untied-verifier")))
    assert [d.render() for d in found] == [
        "claims/SOTA-380.yaml:6:5: error[unknown-source]: 'LIT-509' is not a source\n  hint: did you mean 'LIT-590'?",
        "verify/test_untied.py:4:1: error[untied-verifier]: 'verify/test_untied.py::test_measures_nothing_in_particular' "
        "has no claim marker\n  hint: add @pytest.mark.claim('SOTA-NNN', 'check-id')",
    ]


def test_a_bad_id_is_an_error_and_an_uncited_source_a_warning(make_kb):
    found = audit.run(load(make_kb("uncited-source", "bad-id")))
    assert [(d.code, d.severity) for d in found] == [("bad-id", "error"), ("uncited-source", "warning")]


# --- diagnostics as data ------------------------------------------------------------------------


def test_a_diagnostic_renders_as_path_line_col_severity_code_message_and_hint():
    d = Diagnostic("claims/SOTA-364.yaml", 12, 5, "unknown-source", "'LIT-509' is not a source", "did you mean 'LIT-590'?")
    assert d.render() == (
        "claims/SOTA-364.yaml:12:5: error[unknown-source]: 'LIT-509' is not a source\n  hint: did you mean 'LIT-590'?"
    )


def test_a_diagnostic_with_a_code_outside_the_catalogue_cannot_be_made():
    with pytest.raises(ValueError, match="unknown diagnostic code 'no-such-code'"):
        Diagnostic("x.yaml", 1, 1, "no-such-code", "message")


def test_every_code_in_the_catalogue_has_a_severity_and_a_sentence_of_meaning():
    for code in CATALOGUE.values():
        assert code.severity in ("error", "warning"), code
        assert len(code.meaning) > 20 and code.meaning.endswith("."), code


def test_every_code_in_the_catalogue_has_a_broken_fixture_named_after_it():
    names = [p.name for p in BROKEN.iterdir()]
    missing = [c for c in CATALOGUE if not any(n == c or n.startswith(c + "-") for n in names)]
    assert missing == [], f"add tests/fixtures/kb/broken/<code>/ and a test for: {missing}"


def test_diagnostics_sort_by_file_then_line_then_column():
    a = Diagnostic("a.yaml", 9, 1, "bad-id", "m")
    b = Diagnostic("b.yaml", 1, 1, "bad-id", "m")
    c = Diagnostic("a.yaml", 2, 3, "bad-id", "m")
    assert sorted([a, b, c]) == [c, a, b]


# --- the verifier index -------------------------------------------------------------------------


def test_scan_finds_each_test_with_the_marker_on_it_or_on_its_module(kb_root):
    assert scan(kb_root) == {
        "verify/test_sota364.py::test_bn_couples_samples": Verifier(
            "verify/test_sota364.py::test_bn_couples_samples", 8, "SOTA-364", "bn-cross-sample"
        ),
        "verify/test_sota364.py::test_shuffle_bn": Verifier(
            "verify/test_sota364.py::test_shuffle_bn", 14, "SOTA-364", "shuffle-bn"
        ),
        "verify/test_theory085.py::test_infonce_never_exceeds_log_n": Verifier(
            "verify/test_theory085.py::test_infonce_never_exceeds_log_n", 7, "THEORY-085", "log-n-cap"
        ),
    }


def test_scan_skips_a_module_that_does_not_parse(kb_root):
    (kb_root / "verify" / "test_broken.py").write_text("def test_x(:\n")
    assert "verify/test_broken.py::test_x" not in scan(kb_root)


# --- assertions ---------------------------------------------------------------------------------


def test_an_assertion_whose_words_are_not_in_the_text_is_reported_at_the_span(diagnose):
    assert diagnose("span-not-in-text") == (
        "claims/THEORY-085.yaml:4:1: error[uncovered-sentence]: no assertion of THEORY-085 covers: "
        "'The InfoNCE bound on mutual information can never exceed the log of the batch size.'\n"
        "  hint: quote it in an assertion's filed: list\n"
        "claims/THEORY-085.yaml:25:13: error[span-not-in-text]: assertion 'cap': 'The InfoNCE bound can never exceed log N.' "
        "is not in the statement or a condition of THEORY-085\n"
        "  hint: copy the words exactly; an assertion quotes the filed text"
    )


def test_a_sentence_no_assertion_covers_is_reported_with_its_words(diagnose):
    assert diagnose("uncovered-sentence") == (
        "claims/THEORY-085.yaml:4:1: error[uncovered-sentence]: no assertion of THEORY-085 covers: "
        "'It is tight when N is large.'\n"
        "  hint: quote it in an assertion's filed: list"
    )


def test_an_assertion_naming_a_missing_check_suggests_the_nearest(diagnose):
    assert diagnose("unknown-check") == (
        "claims/THEORY-085.yaml:29:10: error[unknown-check]: assertion 'cap' names check 'log-n-capp', which THEORY-085 "
        "does not have\n"
        "  hint: did you mean 'log-n-cap'?"
    )


def test_a_check_that_is_evidence_for_no_assertion_is_reported(diagnose):
    assert diagnose("unused-check") == (
        "claims/THEORY-085.yaml:11:5: error[unused-check]: check 'log-n-cap' is evidence for no assertion of THEORY-085\n"
        "  hint: add it to an assertion's evidence with its stance (supports or refutes)"
    )


def test_an_assertion_naming_a_citation_the_claim_lacks_is_reported(diagnose):
    assert diagnose("unknown-citation") == (
        "claims/THEORY-085.yaml:26:50: error[unknown-citation]: assertion 'cap' names citation 3; THEORY-085 has 1"
    )


def test_two_assertions_with_one_id_are_reported_at_the_second(diagnose):
    assert diagnose("duplicate-assertion") == (
        "claims/THEORY-085.yaml:29:5: error[duplicate-assertion]: assertion 'cap' is listed twice"
    )


def test_text_that_assay_new_wrote_and_nobody_replaced_is_an_error_at_each_field(diagnose):
    assert diagnose("placeholder") == (
        "claims/SOTA-380.yaml:4:1: error[placeholder]: 'statement' still holds the text assay new wrote: "
        '"The claim as filed, in the source document\'s words."\n'
        "  hint: replace it with what the source says\n"
        "claims/SOTA-380.yaml:9:5: error[placeholder]: 'citations[0].quote' still holds the text assay new wrote: "
        '"The source\'s exact words."\n'
        "  hint: replace it with what the source says\n"
        "claims/SOTA-380.yaml:11:1: error[placeholder]: 'no_check_reason' still holds the text assay new wrote: "
        "'Not yet checked: add a check with a verifier in verify/, or say why the claim cannot be checked.'\n"
        "  hint: replace it with what the source says"
    )


def test_a_check_above_the_analytic_tier_that_marks_no_control_is_a_warning(diagnose):
    assert diagnose("no-control") == (
        "claims/SOTA-364.yaml:44:5: warning[no-control]: check 'shuffle-bn' of SOTA-364 marks no control\n"
        "  hint: mark the expectation that must hold for a model without the effect: control: true"
    )


def test_an_expectation_on_a_metric_its_check_does_not_declare_is_reported(diagnose):
    assert diagnose("undeclared-metric") == (
        "claims/THEORY-085.yaml:17:9: error[undeclared-metric]: check 'log-n-cap' of THEORY-085 "
        "does not declare metric 'excess'\n"
        "  hint: add it under the check's metrics: with its unit and what it measures"
    )


def test_a_reported_number_of_another_unit_cannot_stand_beside_a_metric(diagnose):
    assert diagnose("incomparable-reported") == (
        "claims/SOTA-364.yaml:49:9: error[incomparable-reported]: check 'shuffle-bn': 'top1' (top1-accuracy, in accuracy points) "
        "cannot stand beside reported 'moco-top1' (top1-accuracy, in %)\n"
        "  hint: link only a number of the same quantity in the same unit; otherwise drop reported: and the paper's number "
        "stays on the page as context"
    )


def test_evidence_reading_a_metric_no_expectation_names_suggests_the_nearest(diagnose):
    assert diagnose("unknown-metric") == (
        "claims/THEORY-085.yaml:28:56: error[unknown-metric]: assertion 'cap' reads metric 'exces', which no expectation "
        "of check 'log-n-cap' names\n"
        "  hint: did you mean 'excess'?"
    )


def test_a_closed_chain_of_50000_claims_is_one_knot_and_a_link_to_an_unknown_id_makes_none():
    """As long a chain as the recursion limit could not walk; a target that is not a key is no node."""
    from assay.records.across import strongly_connected

    links = {f"N{i}": [f"N{i + 1}"] for i in range(50_000)} | {"N50000": ["N0"], "M": ["X", "M"]}
    knots = sorted(len(c) for c in strongly_connected(links))
    assert knots[-1] == 50_001 and knots[:-1] == [1]
