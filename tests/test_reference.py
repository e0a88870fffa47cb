"""Generated reference text: the pages' generated sections are current and come from the code."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import readme, reference
from assay.diagnostics import CATALOGUE, UsageProblem
from assay.experiment import Check

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("page", readme.PAGES)
def test_the_generated_sections_of_each_page_are_current(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    assert readme.render(text, ROOT) == text, f"run `assay readme` to regenerate the generated sections of {page}"


def test_the_reference_page_holds_the_record_ledger_status_and_diagnostics_tables() -> None:
    text = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    for name in ("record-reference", "status-legend", "ledger-reference", "diagnostics"):
        assert f"<!-- BEGIN {name} -->" in text and f"<!-- END {name} -->" in text
    assert "| `quote-not-in-source` | error |" in text and "| `known-failing` |" in text


def test_the_cluster_page_lists_every_slurm_setting_with_its_default() -> None:
    from assay.settings import SlurmSettings

    table = readme.slurm_settings()
    for name in SlurmSettings.model_fields:
        assert f"| `{name}` |" in table
    assert "| `array_parallelism` | int | `64` | How many tasks of the array may run at once. |" in table
    assert "| `partition` | str or null | unset |" in table


def test_the_diagnostics_catalogue_lists_every_code_once() -> None:
    rows = [line for line in reference.diagnostics_catalogue().splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == list(CATALOGUE)


def test_the_record_reference_lists_every_field_of_a_check_with_its_description() -> None:
    ref = reference.record_reference()
    for name, info in Check.model_fields.items():
        assert f"| `{name}` |" in ref
        assert info.description.split("`")[0] in ref


def test_the_record_reference_marks_required_fields_and_links_nested_structures() -> None:
    ref = reference.record_reference()
    assert "| `citations` | list of [Citation](#citation) | yes | Where the claim comes from, with exact quotes. |" in ref
    assert "| `refined` | str or null | no | The statement as our checks found it to hold, where it differs. |" in ref


def test_a_file_section_is_the_file_as_a_fenced_block(tmp_path: Path) -> None:
    (tmp_path / "example.yaml").write_text("id: SOTA-001\n")
    page = "Before.\n<!-- BEGIN file example.yaml -->\nold\n<!-- END file -->\nAfter.\n"
    assert readme.render(page, tmp_path) == (
        "Before.\n<!-- BEGIN file example.yaml -->\n\n```yaml\nid: SOTA-001\n```\n\n<!-- END file -->\nAfter.\n"
    )


def test_a_file_outside_the_root_or_an_unknown_section_is_a_usage_problem(tmp_path: Path) -> None:
    (tmp_path / "kb").mkdir()
    (tmp_path / "secret.txt").write_text("not for a page\n")
    with pytest.raises(UsageProblem, match=r"^\.\./secret\.txt: is a link to a file outside the knowledge base"):
        readme.render("<!-- BEGIN file ../secret.txt -->\n<!-- END file -->\n", tmp_path / "kb")
    with pytest.raises(UsageProblem, match=r"^unknown generated section '<!-- BEGIN legend -->'"):
        readme.render("<!-- BEGIN legend -->\n<!-- END legend -->\n", tmp_path)


def test_assay_readme_rewrites_the_pages_that_exist_and_says_which_changed(tmp_path: Path, capsys) -> None:
    from assay import cli

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "reference.md").write_text("# R\n\n<!-- BEGIN diagnostics -->\n<!-- END diagnostics -->\n")
    assert cli.main(["--root", str(tmp_path), "readme"]) == 0
    assert capsys.readouterr().out == "docs/reference.md updated\n"
    assert cli.main(["--root", str(tmp_path), "readme"]) == 0
    assert capsys.readouterr().out == "docs/reference.md is current\n"
    assert "| `yaml-syntax` | error | The YAML does not parse. |" in (tmp_path / "docs" / "reference.md").read_text()


def test_the_layout_page_names_every_module_of_the_engine_once() -> None:
    """site/reference/layout.md is the map of src/assay/: a module added, moved or renamed is named there, under its
    package, so that a newcomer can read the engine from the page."""
    import re

    src = Path(__file__).resolve().parents[1] / "src" / "assay"
    page = (src.parents[1] / "site" / "reference" / "layout.md").read_text(encoding="utf-8")
    block = page[page.index("```\nground") + 4 :]
    named: list[str] = []
    package = ""
    for line in block[: block.index("```")].splitlines():
        parts = re.split(r"\s{2,}", line.strip())  # the names, then what they are
        if parts[0].endswith("/") or parts[0] == "ground":
            package, names = ("" if parts[0] == "ground" else parts[0]), parts[1]
        elif line.startswith(" "):
            names = parts[0]  # another module of the package above
        else:
            package, names = "", parts[0]
        named += [package + name for name in names.split(", ")]
    modules = {p.relative_to(src).as_posix() for p in src.rglob("*.py") if p.name != "__init__.py"}
    assert sorted(modules - set(named)) == [], "name these modules in site/reference/layout.md"
    assert sorted(set(named) - modules) == [], "these modules are named in site/reference/layout.md but are gone"
    assert len(named) == len(set(named)), "a module is named twice"
