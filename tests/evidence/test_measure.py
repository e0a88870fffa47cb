"""assay.evidence.measure: what `pytest verify --measure` prints for a person to paste into the record."""

from __future__ import annotations

import yaml

from assay.evidence.measure import stub


def test_the_yaml_stub_parses_with_a_unit_that_yaml_would_misread_unquoted():
    measured = {
        "top1": {"unit": "% top-1", "seeds": [70.0, 71.0, 72.0], "value": 71.0},
        "gap": {"unit": None, "seeds": [], "value": 0.3},
    }
    assert yaml.safe_load(stub(measured)) == {
        "metrics": [
            {"name": "gap", "unit": "UNIT", "measures": "WHAT IT MEASURES"},
            {"name": "top1", "unit": "% top-1", "measures": "WHAT IT MEASURES"},
        ],
        "expect": None,
    }
