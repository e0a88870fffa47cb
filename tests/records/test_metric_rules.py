"""The metrics a check declares against those its verifier records, reported by `assay check` before anything runs."""

from __future__ import annotations

from assay import corpus
from assay.records.metric_rules import recorded


def test_a_metric_renamed_in_the_verifier_is_reported_at_the_declaration_and_at_the_call(diagnose):
    assert diagnose("undeclared-recording") == (
        "claims/THEORY-085.yaml:17:10: error[unrecorded-metric]: check 'log-n-cap' declares metric 'excess', which its "
        "verifier 'test_infonce_never_exceeds_log_n' (verify/test_theory085.py:7) never records; it records "
        "'excess_nats' (verify/test_theory085.py:9), which the check does not declare\n"
        "  hint: rename one of the two to match, or record 'excess'\n"
        "verify/test_theory085.py:9:5: warning[undeclared-recording]: 'test_infonce_never_exceeds_log_n' records metric "
        "'excess_nats', which check 'log-n-cap' of THEORY-085 does not declare, and never records 'excess', which it "
        "declares (claims/THEORY-085.yaml:17:10): was one of the two renamed?\n"
        "  hint: rename one of the two to match, or declare this one too"
    )


def test_a_declared_metric_no_call_of_the_verifier_records_is_an_error(diagnose):
    assert diagnose("unrecorded-metric") == (
        "claims/SOTA-364.yaml:43:99: error[unrecorded-metric]: check 'shuffle-bn' declares metric 'top1_nofix', which "
        "its verifier 'test_shuffle_bn' (verify/test_sota364.py:14) never records\n"
        "  hint: record it in the verifier, or remove it"
    )


def test_a_unit_changed_in_the_verifier_is_reported_at_its_unit_keyword(diagnose):
    assert diagnose("unit-mismatch") == (
        "verify/test_sota364.py:10:63: error[unit-mismatch]: 'test_bn_couples_samples' records metric "
        "'cross_sample_jacobian' in 'absolute Jacobian entry', but check 'bn-cross-sample' of SOTA-364 declares it in "
        "'fraction' (claims/SOTA-364.yaml:32:39)\n"
        "  hint: record it in the declared unit, or correct the declaration"
    )


def test_names_the_reading_cannot_evaluate_give_one_warning_and_no_error(diagnose):
    assert diagnose("unread-metric-names") == (
        "verify/test_theory085.py:7:1: warning[unread-metric-names]: cannot tell before a run whether "
        "'test_infonce_never_exceeds_log_n' records 'excess', declared by check 'log-n-cap' of THEORY-085 "
        "(claims/THEORY-085.yaml:16:5): at line 10, the metric name `name` is not one this reading can evaluate\n"
        "  hint: a run tells (pytest verify --claim THEORY-085 --check log-n-cap); names written as literals, or built "
        "from literal loops, are checked without one"
    )


def test_a_verifier_that_records_more_than_its_check_declares_is_not_reported(kb_root):
    module = kb_root / "verify" / "test_theory085.py"
    module.write_text(module.read_text() + '    evidence.metric("chance", 0.5)  # a reference level, for the notes\n')
    from assay import audit
    from assay.records.knowledge_base import load

    assert [d.render() for d in audit.run(load(kb_root))] == []


def test_the_reading_is_kept_by_node_id_with_the_marker_and_a_module_that_does_not_parse_records_nothing(kb_root):
    (kb_root / "verify" / "test_broken.py").write_text("def test_x(evidence:\n")
    found = recorded(kb_root)
    assert sorted(found) == [
        "verify/test_sota364.py::test_bn_couples_samples",
        "verify/test_sota364.py::test_shuffle_bn",
        "verify/test_theory085.py::test_infonce_never_exceeds_log_n",
    ]
    tie, calls = found["verify/test_sota364.py::test_shuffle_bn"]
    assert tie == ("SOTA-364", "shuffle-bn", 14)
    assert [c.name for c in calls.calls] == [
        "top1",
        "top1_nofix",
        "signature_acc_shuffled",
        "signature_acc_nofix",
    ]


def test_a_declared_metric_no_name_built_at_run_time_can_be_is_an_error_and_one_that_could_be_a_warning(kb_root):
    from assay import audit
    from assay.records.knowledge_base import load

    module = kb_root / "verify" / "test_theory085.py"
    module.write_text(
        module.read_text().replace(
            '    evidence.metric("excess", 0.0)\n', '    for tag in table():\n        evidence.metric(f"bias_{tag}", 0.0)\n'
        )
    )
    assert [d.render() for d in audit.run(load(kb_root))] == [
        "claims/THEORY-085.yaml:17:10: error[unrecorded-metric]: check 'log-n-cap' declares metric 'excess', which its "
        "verifier 'test_infonce_never_exceeds_log_n' (verify/test_theory085.py:7) never records (nor can any name it "
        "builds at run time, line 10, be it)\n"
        "  hint: record it in the verifier, or remove it"
    ]
    module.write_text(module.read_text().replace('f"bias_{tag}"', 'f"{tag}s"'))  # "excess" could be one of these
    assert [d.code for d in audit.run(load(kb_root))] == ["unread-metric-names"]


def test_many_verifier_modules_are_read_in_processes_with_the_same_result(tmp_path, monkeypatch):
    """Many modules are read by forked processes; they find what one process does."""
    from assay.corpus import forking
    from assay.records import metric_rules, verifiers

    verify = tmp_path / "verify"
    verify.mkdir()
    modules = -(-corpus.LARGE_FROM // verifiers.COST) + 5
    for n in range(modules):
        (verify / f"test_m{n:03d}.py").write_text(
            "import pytest\n\n\n"
            f'@pytest.mark.claim("SOTA-{n + 1:03d}", "c")\n'
            f"def test_c(evidence):\n"
            f'    evidence.metric("gap_{n}", 1.0, unit="units")\n'
        )
    shared = metric_rules.recorded(tmp_path)
    monkeypatch.setattr(forking, "can_fork", lambda: False)
    alone = metric_rules.recorded(tmp_path)
    assert shared == alone and len(shared) == modules
    assert shared["verify/test_m003.py::test_c"][1].names == frozenset({"gap_3"})
