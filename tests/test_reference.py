"""Generated reference text: the README's sections are current and come from the code."""

from __future__ import annotations

from pathlib import Path

from assay import reference
from assay.experiment import Check

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_generated_sections_are_current() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert reference.render_readme(text) == text, "run `assay readme` to regenerate the README's reference sections"


def test_the_record_reference_lists_every_field_of_a_check_with_its_description() -> None:
    ref = reference.record_reference()
    for name, info in Check.model_fields.items():
        assert f"| `{name}` |" in ref
        assert info.description.split("`")[0] in ref


def test_the_record_reference_marks_required_fields_and_links_nested_structures() -> None:
    ref = reference.record_reference()
    assert "| `citations` | list of [Citation](#citation) | yes | Where the claim comes from, with exact quotes. |" in ref
    assert "| `refined` | str or null | no | The statement as our checks found it to hold, where it differs. |" in ref


def test_the_readmes_example_check_and_assertion_validate_against_the_model() -> None:
    import re

    import yaml

    from assay.experiment import Check
    from assay.model import Assertion

    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", (ROOT / "README.md").read_text(), re.S)]
    checks = [Check.model_validate(c) for b in blocks if isinstance(b, dict) for c in b.get("checks", [])]
    assertions = [Assertion.model_validate(a) for b in blocks if isinstance(b, dict) for a in b.get("assertions", [])]
    assert [c.id for c in checks] == ["gap-closes"] and [a.id for a in assertions] == ["gaps-close"]
    assert checks[0].metric("gap_short").unit == "fraction" and assertions[0].evidence[0].metrics == ["gap_long"]
