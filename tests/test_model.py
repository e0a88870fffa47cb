"""assay.model: the record classes, their rules, and the helpers on them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from assay.bibliography import Identifiers
from assay.experiment import Check, Expectation
from assay.model import BY_KIND, MODELS, SERIES, Claim, Source, series, series_of

CITATION = {"source": "LIT-590", "locator": "§3.3", "quote": "Using BN prevents the model from learning."}
CHECK = {
    "id": "leak",
    "tests": "The leak exists.",
    "verifier": "verify/test_x.py::test_leak",
    "tier": "toy",
    "devices": ["cpu"],
    "expect": [{"metric": "gap", "op": ">=", "value": 0.15}],
}


def claim(**fields):
    base = {"id": "SOTA-364", "title": "T", "statement": "S.", "citations": [CITATION], "checks": [CHECK]}
    return Claim.model_validate({**base, **fields})


@pytest.mark.parametrize(
    ("op", "value", "tol", "measured", "holds"),
    [
        (">", 0.15, None, 0.16, True),
        (">", 0.15, None, 0.15, False),
        (">=", 0.15, None, 0.15, True),
        ("<", 1.0, None, 1.0, False),
        ("<=", 1.0, None, 1.0, True),
        ("==", 0.0, 1e-6, 5e-7, True),
        ("==", 0.0, 1e-6, 2e-6, False),
        ("==", 2.0, None, 2.0, True),
    ],
)
def test_an_expectation_holds_exactly_when_its_comparison_does(op, value, tol, measured, holds):
    assert Expectation(metric="m", op=op, value=value, tol=tol).holds(measured) is holds


def test_an_expectation_reads_as_metric_op_value_within_tol():
    assert str(Expectation(metric="reliance", op="==", value=0, tol=1e-6)) == "reliance == 0 within 1e-06"
    assert str(Expectation(metric="loss_gap", op=">=", value=0.15)) == "loss_gap >= 0.15"


def test_a_tolerance_is_only_allowed_with_equality():
    with pytest.raises(ValidationError, match="tol is only meaningful with op '=='"):
        Expectation(metric="m", op=">", value=1, tol=0.1)


def test_a_nan_measurement_never_holds():
    assert not any(Expectation(metric="m", op=op, value=0).holds(float("nan")) for op in (">", ">=", "<", "<=", "=="))


def test_a_source_needs_at_least_one_identifier_that_locates_it():
    with pytest.raises(ValidationError, match="give at least one of arxiv, doi or url"):
        Identifiers(code="https://github.com/x/y")
    assert Identifiers(arxiv="1911.05722v3").arxiv == "1911.05722v3"


def test_an_arxiv_id_needs_its_version():
    with pytest.raises(ValidationError, match="string_pattern_mismatch|should match pattern"):
        Identifiers(arxiv="1911.05722")


def test_a_claim_without_checks_needs_a_reason():
    with pytest.raises(ValidationError, match="a claim without checks must say why in no_check_reason"):
        claim(checks=[])
    assert claim(checks=[], no_check_reason="cited only: needs ImageNet").checks == []


def test_a_claim_needs_a_citation():
    with pytest.raises(ValidationError, match="citations"):
        claim(citations=[])


def test_a_claim_finds_its_check_by_id():
    c = claim()
    assert c.check("leak") == Check.model_validate(CHECK)
    assert c.check("nope") is None


def test_records_refuse_unknown_fields_and_stay_frozen():
    with pytest.raises(ValidationError, match="extra_forbidden|Extra inputs are not permitted"):
        claim(statment="typo")
    c = claim()
    with pytest.raises(ValidationError):
        c.title = "changed"


def test_text_fields_are_stripped_and_must_not_be_blank():
    assert claim(title="  padded  ").title == "padded"
    with pytest.raises(ValidationError):
        claim(title="   ")


def test_a_verifier_names_a_test_function_in_verify():
    with pytest.raises(ValidationError):
        Check.model_validate({**CHECK, "verifier": "tests/test_x.py::test_leak"})
    with pytest.raises(ValidationError):
        Check.model_validate({**CHECK, "verifier": "verify/test_x.py"})


def test_a_check_defaults_to_a_thirty_second_timeout_and_bounds_it():
    assert Check.model_validate(CHECK).timeout == 30
    with pytest.raises(ValidationError):
        Check.model_validate({**CHECK, "timeout": 0})


def test_tags_are_kebab_case_slugs():
    assert claim(tags=["batch-norm", "moco2"]).tags == ["batch-norm", "moco2"]
    with pytest.raises(ValidationError):
        claim(tags=["Batch Norm"])


def test_a_source_year_is_bounded():
    base = {"id": "LIT-590", "kind": "paper", "title": "T", "authors": ["A"], "identifiers": {"doi": "10.1109/x.1"}}
    assert Source.model_validate({**base, "year": 2019}).year == 2019
    with pytest.raises(ValidationError):
        Source.model_validate({**base, "year": 19})


@pytest.mark.parametrize(
    ("record_id", "prefix"),
    [
        ("LIT-590", "LIT"),
        ("SOTA-364", "SOTA"),
        ("THEORY-085", "THEORY"),
        ("ADR-011", "ADR"),
        ("XYZ-001", None),
        ("SOTA364", None),
        ("sota-364", None),
    ],
)
def test_series_is_the_known_prefix_of_an_id(record_id, prefix):
    assert series(record_id) == prefix


def test_every_series_lives_in_a_folder_whose_model_it_validates_against():
    assert {s.folder for s in SERIES.values()} == set(MODELS)
    assert all(MODELS[s.folder] is s.model for s in SERIES.values())


def test_each_series_is_its_own_node_kind():
    assert {k: s.prefix for k, s in BY_KIND.items()} == {"source": "LIT", "claim": "SOTA", "theory": "THEORY", "decision": "ADR"}


@pytest.mark.parametrize("record_id, prefix", [("SOTA-364", "SOTA"), ("SOTA-36a", "SOTA"), ("XYZ-001", None), ("LIT-590", "LIT")])
def test_series_of_reads_the_prefix_even_of_a_malformed_id(record_id, prefix):
    assert (s.prefix if (s := series_of(record_id)) else None) == prefix
