"""Golden tests of the typed pair (``assay.pairing``) and of the units it converts by (``assay.units``)."""

from __future__ import annotations

import pytest

from assay import pairing, units
from assay.experiment import Check

SETTING = {"data": "digits 8 x 8", "model": "MLP, 64-d h", "steps": "400 Adam steps"}


def _check(tier: str = "toy", setting: dict | None = None) -> Check:
    return Check.model_validate(
        {
            "id": "c",
            "tests": "t",
            "verifier": "verify/test_x.py::test_y",
            "tier": tier,
            "devices": ["cpu"],
            "metrics": [{"name": "acc", "unit": "fraction", "measures": "m", "quantity": "top1-accuracy"}],
            "expect": [{"metric": "acc", "op": ">", "value": 0.5}],
            **({"setting": setting} if setting else {}),
        }
    )


def _pair(check: Check, paper: pairing.Side) -> pairing.Pair:
    kind, differs = pairing.transfer(pairing.Side(0.676, "fraction", "top1-accuracy"), paper, check)
    return pairing.Pair("acc", pairing.Side(0.676, "fraction", "top1-accuracy"), paper, kind, differs, "", "LIT-1", "T3")


def test_the_same_quantity_in_the_same_setting_is_compared_in_the_papers_unit() -> None:
    check = _check("full", {"ours": SETTING, "source": SETTING})
    pair = _pair(check, pairing.Side(67.6, "% top-1", "top1-accuracy"))
    assert (pair.transfer, pair.differs) == ("same-quantity", ("unit: ours fraction, the paper's % top-1",))
    assert pair.ours_in_paper_unit == pytest.approx(67.6)
    assert pair.agrees is True


def test_the_same_quantity_in_another_setting_compares_direction_only_and_names_what_differs() -> None:
    other = {**SETTING, "data": "ImageNet", "steps": "100 epochs"}
    pair = _pair(_check("toy", {"ours": SETTING, "source": other}), pairing.Side(76.5, "%", "top1-accuracy"))
    assert pair.transfer == "direction-only"
    assert pair.differs == (
        "data: ours digits 8 x 8; the paper's ImageNet",
        "steps: ours 400 Adam steps; the paper's 100 epochs",
        "unit: ours fraction, the paper's %",
    )
    assert pair.agrees is True  # the signs agree; the sizes are never compared


def test_a_setting_the_record_does_not_state_reads_as_another_setting() -> None:
    pair = _pair(_check("toy"), pairing.Side(0.7, "fraction", "top1-accuracy"))
    assert (pair.transfer, pair.differs) == ("direction-only", ("setting: not stated (a toy check)",))


def test_another_quantity_stands_beside_ours_and_is_never_compared() -> None:
    pair = _pair(_check("full", {"ours": SETTING, "source": SETTING}), pairing.Side(25.0, "%", "chance-accuracy"))
    assert pair.transfer == "different-quantity"
    assert pair.differs == (
        "quantity: ours top1-accuracy, the paper's chance-accuracy",
        "unit: ours fraction, the paper's %",
    )
    assert (pair.ours_in_paper_unit, pair.agrees) == (None, None)


def test_a_rate_per_doubling_is_another_quantity_than_a_level_in_percent() -> None:
    ours = pairing.Side(0.01, "fraction per doubling of s", "top1-accuracy")
    kind, _ = pairing.transfer(ours, pairing.Side(64.5, "% top-1", "top1-accuracy"), _check())
    assert kind == "different-quantity"


@pytest.mark.parametrize(
    ("value", "unit", "to", "expected"),
    [(0.1843, "fraction", "%", 18.43), (67.6, "% top-1", "fraction", 0.676), (0.5, "fraction", "fraction", 0.5)],
)
def test_percent_and_fraction_convert_by_the_unit(value: float, unit: str, to: str, expected: float) -> None:
    assert units.convert(value, unit, to) == pytest.approx(expected)


def test_a_difference_of_accuracies_recorded_as_a_fraction_is_shown_in_points_never_relabelled() -> None:
    value, word = units.shown(0.1843, "accuracy points")
    assert (round(value, 6), word) == (18.43, "points")
    assert units.shown(0.1843, "fraction") == (0.1843, "fraction")
    assert units.shown(2.5, "nats") == (2.5, "nats")


def test_a_unit_that_is_no_scale_converts_to_nothing_but_itself() -> None:
    assert not units.convertible("nats", "%")
    with pytest.raises(ValueError, match="'nats' does not convert to '%'"):
        units.convert(1.0, "nats", "%")


def test_a_sentence_carries_the_reported_numbers_it_states() -> None:
    from assay.model import Reported

    r = Reported.model_validate(
        {"id": "rot", "what": "rotation from h", "value": 67.6, "unit": "%", "source": "LIT-591", "locator": "Table 3"}
    )
    assert pairing.carried("rotation is recovered with 67.6 % accuracy from h", [r]) == [r]
    assert pairing.carried("rotation is recovered with 67.61 % accuracy", [r]) == []
