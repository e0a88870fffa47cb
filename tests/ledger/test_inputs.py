"""assay.ledger.inputs: what a result depends on, each part in the repository, and why a result is stale."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.fingerprints import digest
from assay.ledger.inputs import InputParts, lock_pins, off_lock, stale_reasons
from assay.records.code import TOKENS, token_digest
from assay.records.knowledge_base import load


def parts(root: Path, claim: str = "SOTA-364", check: str = "bn-cross-sample", device: str = "cpu") -> dict[str, str]:
    kb = load(root)
    c = kb.claims[claim]
    return InputParts(root).parts(c, c.check(check), device)


def reasons_after(root: Path, change, **where: str) -> list[str]:
    before = parts(root, **where)
    change()
    return stale_reasons(before, parts(root, **where))


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new))


def test_the_parts_name_the_measurement_the_code_the_pins_and_the_device(kb_root):
    (kb_root / "requirements.lock").write_text("# a comment\ntorch==2.13.0+cpu\nnumpy==2.4.6  # why\nscipy==1.17.1\n")
    assert sorted(parts(kb_root)) == [
        "check:SOTA-364#bn-cross-sample",
        "code:verify/helpers.py",
        "code:verify/test_sota364.py",
        "device",
        "pin:numpy",
        "pin:scikit-learn",
        "pin:scipy",
        "pin:torch",
    ]
    assert parts(kb_root)["pin:torch"] == "2.13.0+cpu"
    assert parts(kb_root)["pin:scikit-learn"] == "unpinned"


def test_a_changed_measurement_definition_is_named(kb_root):
    path = kb_root / "claims" / "SOTA-364.yaml"
    change = lambda: edit(
        path,
        "    verifier: verify/test_sota364.py::test_bn_couples_samples\n",
        "    verifier: verify/test_sota364.py::test_bn_couples_samples\n    seeds: {count: 3}\n",
    )  # noqa: E731,E501
    assert reasons_after(kb_root, change) == ["the definition of check bn-cross-sample in SOTA-364 changed"]


def test_what_only_weighs_a_result_does_not_stale_it(kb_root):
    path = kb_root / "claims" / "SOTA-364.yaml"
    # the tier, the threshold, the seed reading and the words are the judgement: re-judged from the measurement
    for old, new in (
        ("tier: analytic", "tier: toy"),
        ("        value: 0.001\n", "        value: 0.002\n        seeds: mean\n"),
        ("find the positive key through batch statistics", "find the positive key through batch statistics alone"),
        ("measures: The cross sample jacobian the verifier records", "measures: How far one output moves"),
    ):
        assert reasons_after(kb_root, lambda: edit(path, old, new)) == [], old


def test_a_metric_unit_is_part_of_the_measurement(kb_root):
    path = kb_root / "claims" / "SOTA-364.yaml"
    unit = lambda: edit(path, '{name: cross_sample_jacobian, unit: "fraction"', '{name: cross_sample_jacobian, unit: "ratio"')  # noqa: E731,E501
    assert reasons_after(kb_root, unit) == ["the definition of check bn-cross-sample in SOTA-364 changed"]


def test_a_statement_of_a_claim_not_cut_into_assertions_is_no_input_of_the_measurement(kb_root):
    path = kb_root / "claims" / "SOTA-364.yaml"
    path.write_text(path.read_text().split("assertions:")[0])
    change = lambda: edit(path, "statement: >-\n  ", "statement: >-\n  Indeed, ")  # noqa: E731
    assert reasons_after(kb_root, change) == []


def test_rewording_a_sentence_no_assertion_of_the_check_quotes_does_not_stale_it(kb_root):
    path = kb_root / "claims" / "SOTA-364.yaml"
    change = lambda: edit(path, "statement: >-\n  Batch normalisation", "statement: >-\n  Batch normalization")  # noqa: E731
    assert reasons_after(kb_root, change) == []


def test_a_changed_note_or_citation_does_not_stale_the_result(kb_root):
    path = kb_root / "claims" / "SOTA-364.yaml"
    change = lambda: path.write_text(path.read_text().replace("locator:", "locator: p. 2,", 1))  # noqa: E731
    assert reasons_after(kb_root, change) == []


def test_a_changed_verifier_helper_is_named(kb_root):
    change = lambda: (kb_root / "verify" / "helpers.py").write_text("# changed\n")  # noqa: E731
    assert reasons_after(kb_root, change) == ["verify/helpers.py changed"]


def test_a_helper_reached_by_a_relative_import_is_an_input(kb_root):
    (kb_root / "verify" / "__init__.py").write_text("")
    (kb_root / "verify" / "rel.py").write_text("X = 1\n")
    edit(kb_root / "verify" / "test_sota364.py", "import pytest", "import pytest\nfrom .rel import X")
    assert "code:verify/rel.py" in parts(kb_root)
    change = lambda: (kb_root / "verify" / "rel.py").write_text("X = 2\n")  # noqa: E731
    assert reasons_after(kb_root, change) == ["verify/rel.py changed"]


def test_a_subpackage_and_its_init_are_inputs(kb_root):
    (kb_root / "verify" / "sub").mkdir()
    (kb_root / "verify" / "sub" / "__init__.py").write_text("from .deep import Y\n")
    (kb_root / "verify" / "sub" / "deep.py").write_text("Y = 1\n")
    edit(kb_root / "verify" / "test_sota364.py", "import pytest", "import pytest\nimport verify.sub")
    change = lambda: (kb_root / "verify" / "sub" / "deep.py").write_text("Y = 2\n")  # noqa: E731
    assert reasons_after(kb_root, change) == ["verify/sub/deep.py changed"]


def test_a_module_loaded_with_importlib_import_module_is_an_input(kb_root):
    (kb_root / "verify" / "dyn.py").write_text("Z = 1\n")
    edit(
        kb_root / "verify" / "test_sota364.py",
        "import pytest",
        "import importlib\nimport pytest\nDYN = importlib.import_module('verify.dyn')",
    )
    change = lambda: (kb_root / "verify" / "dyn.py").write_text("Z = 2\n")  # noqa: E731
    assert reasons_after(kb_root, change) == ["verify/dyn.py changed"]


def test_the_conftest_chain_is_an_input(kb_root):
    (kb_root / "conftest.py").write_text("")
    (kb_root / "verify" / "conftest.py").write_text("import pytest\n")
    change = lambda: (kb_root / "verify" / "conftest.py").write_text("import pytest\nSCALE = 2\n")  # noqa: E731
    assert "code:conftest.py" in parts(kb_root)
    assert reasons_after(kb_root, change) == ["verify/conftest.py changed"]


def test_a_declared_data_file_is_an_input(kb_root):
    (kb_root / "verify" / "table.csv").write_text("a,b\n1,2\n")
    edit(kb_root / "claims" / "SOTA-364.yaml", "    tier: analytic", "    reads: [verify/table.csv]\n    tier: analytic")
    change = lambda: (kb_root / "verify" / "table.csv").write_text("a,b\n1,3\n")  # noqa: E731
    assert reasons_after(kb_root, change) == ["the data file verify/table.csv changed"]


def test_a_file_of_an_installed_package_that_a_check_reads_is_an_input(kb_root, installed_package):
    reads = "    reads: [package:assay_probe_pkg/data/table.csv]\n    tier: analytic"
    edit(kb_root / "claims" / "SOTA-364.yaml", "    tier: analytic", reads)
    change = lambda: (installed_package / "data" / "table.csv").write_text("a,b\n1,3\n")  # noqa: E731
    assert reasons_after(kb_root, change) == ["the data file package:assay_probe_pkg/data/table.csv changed"]


def test_a_package_file_that_cannot_be_read_is_a_part_that_says_why(kb_root):
    reads = "    reads: [package:assay_no_such_pkg/table.csv]\n    tier: analytic"
    edit(kb_root / "claims" / "SOTA-364.yaml", "    tier: analytic", reads)
    assert parts(kb_root)["data:package:assay_no_such_pkg/table.csv"] == (
        "unreadable: names the package assay_no_such_pkg, and no package of that name is installed"
    )


def test_a_changed_pin_in_the_lock_file_is_named_with_both_versions(kb_root):
    (kb_root / "requirements.lock").write_text("torch==2.13.0+cpu\n")
    change = lambda: (kb_root / "requirements.lock").write_text("torch==2.14.1\n")  # noqa: E731
    assert reasons_after(kb_root, change) == ["the lock's pin of torch changed from 2.13.0+cpu to 2.14.1"]


def test_a_pin_of_a_package_no_verifier_uses_is_not_an_input(kb_root):
    (kb_root / "requirements.lock").write_text("torch==2.13.0+cpu\nplaywright==1.0\n")
    change = lambda: (kb_root / "requirements.lock").write_text("torch==2.13.0+cpu\nplaywright==2.0\n")  # noqa: E731
    assert reasons_after(kb_root, change) == []


def test_the_device_is_an_input(kb_root):
    before = parts(kb_root, check="shuffle-bn", device="cpu")
    now = parts(kb_root, check="shuffle-bn", device="cuda")
    assert stale_reasons(before, now) == ["the device changed from cpu to cuda"]


def test_installed_packages_are_not_inputs(kb_root, monkeypatch: pytest.MonkeyPatch):
    before = parts(kb_root)
    monkeypatch.setattr("importlib.metadata.version", lambda name: "99.0")
    assert stale_reasons(before, parts(kb_root)) == []


def test_a_verifier_symlinked_outside_the_root_is_hashed_as_unreadable_not_read(kb_root, tmp_path):
    secret = tmp_path / "secret.py"
    secret.write_text("TOKEN = 'x'\n")
    target = kb_root / "verify" / "helpers.py"
    target.unlink()
    target.symlink_to(secret)
    assert parts(kb_root)["code:verify/helpers.py"] == "unreadable: is a link to a file outside the knowledge base"


def test_off_lock_compares_public_versions_and_names_both(tmp_path):
    pins = {"torch": "2.13.0+cpu", "numpy": "2.4.6"}
    assert off_lock({"torch": "2.13.0+cu128", "numpy": "2.4.6"}, pins) == []
    assert off_lock({"torch": "2.11.0+cu128", "numpy": "2.4.6"}, pins) == ["torch 2.11.0+cu128 (lock: 2.13.0+cpu)"]


def test_lock_pins_read_name_equals_version_lines_and_normalise_names(tmp_path):
    (tmp_path / "requirements.lock").write_text("# header\nScikit_Learn==1.9.1\ntorch == 2.13.0+cpu ; python_version>'3'\n-e .\n")
    assert lock_pins(tmp_path) == {"scikit-learn": "1.9.1", "torch": "2.13.0+cpu"}


VERIFIER, HELPER = "verify/test_sota364.py", "verify/helpers.py"


@pytest.mark.parametrize("module", [VERIFIER, HELPER])
def test_a_docstring_edit_of_a_verifier_or_a_module_it_imports_does_not_stale_its_result(kb_root, module):
    path = kb_root / module
    change = lambda: path.write_text(path.read_text().replace('"""', '"""Reworded: ', 1))  # noqa: E731
    assert reasons_after(kb_root, change) == []


@pytest.mark.parametrize("module", [VERIFIER, HELPER])
def test_a_comment_edit_of_a_verifier_or_a_module_it_imports_does_not_stale_its_result(kb_root, module):
    path = kb_root / module
    change = lambda: path.write_text("# a comment added above\n\n" + path.read_text() + "\n# and one below\n")  # noqa: E731
    assert reasons_after(kb_root, change) == []


def test_a_code_edit_of_a_verifier_stales_its_result_as_before(kb_root):
    change = lambda: edit(kb_root / VERIFIER, "0.1 + SEED", "0.2 + SEED")  # noqa: E731
    assert reasons_after(kb_root, change) == ["verify/test_sota364.py changed"]


def test_an_edit_of_a_string_that_is_no_docstring_stales_the_result(kb_root):
    change = lambda: edit(kb_root / VERIFIER, '"cross_sample_jacobian", 0.1', '"cross_sample_jacobian_v2", 0.1')  # noqa: E731
    assert reasons_after(kb_root, change) == ["verify/test_sota364.py changed"]


def test_a_docstring_turned_into_an_assignment_stales_the_result(kb_root):
    change = lambda: edit(kb_root / HELPER, '"""A local module', 'NOTE = """A local module')  # noqa: E731
    assert reasons_after(kb_root, change) == ["verify/helpers.py changed"]


def test_a_module_with_a_syntax_error_is_its_bytes_and_any_edit_of_it_stales_the_result(kb_root):
    path = kb_root / HELPER
    path.write_text('"""A helper."""\nSEED = (\n')
    assert parts(kb_root)["code:verify/helpers.py"] == InputParts(kb_root).file_digest(path)
    change = lambda: path.write_text('"""A helper, reworded."""\nSEED = (\n')  # noqa: E731
    assert reasons_after(kb_root, change) == ["verify/helpers.py changed"]


def recorded_from_bytes(root: Path) -> dict[str, str]:
    """The parts as the engine recorded them before the token digest: each module's part the digest of its bytes."""
    inputs = InputParts(root)
    return {k: inputs.file_digest(root / k[5:]) if k.startswith("code:") else v for k, v in parts(root).items()}


def test_a_result_recorded_from_the_bytes_of_its_modules_is_fresh_while_they_keep_those_bytes(kb_root):
    recorded = recorded_from_bytes(kb_root)
    assert recorded["code:verify/helpers.py"] != parts(kb_root)["code:verify/helpers.py"]
    assert InputParts(kb_root).stale(recorded, parts(kb_root)) == []


def test_a_result_recorded_from_bytes_no_history_holds_is_stale_after_any_edit_of_them_even_a_docstring(kb_root):
    recorded = recorded_from_bytes(kb_root)
    # no git here: what it ran cannot be known (tests/ledger/test_upgrade_from_history.py: where git holds the bytes)
    edit(kb_root / HELPER, '"""A local module', '"""Reworded: a local module')
    assert InputParts(kb_root).stale(recorded, parts(kb_root)) == ["verify/helpers.py changed"]


def recorded_from_tokens(root: Path) -> dict[str, str]:
    """The parts as the engine recorded them before the tree digest: each module's part the digest of its tokens."""
    return {k: token_digest((root / k[5:]).read_text()) if k.startswith("code:") else v for k, v in parts(root).items()}


def test_a_result_recorded_from_the_tokens_of_its_modules_is_fresh_while_they_run_those_tokens(kb_root):
    recorded = recorded_from_tokens(kb_root)
    assert recorded["code:verify/helpers.py"].startswith(TOKENS)
    (kb_root / VERIFIER).write_text((kb_root / VERIFIER).read_text().replace('"""', '"""Reworded: ', 1))
    (kb_root / HELPER).write_text("# a comment added\n" + (kb_root / HELPER).read_text())
    assert InputParts(kb_root).stale(recorded, parts(kb_root)) == []


def test_a_result_recorded_from_tokens_is_stale_after_a_code_edit_with_todays_reason(kb_root):
    recorded = recorded_from_tokens(kb_root)
    edit(kb_root / VERIFIER, "0.1 + SEED", "0.2 + SEED")
    assert InputParts(kb_root).stale(recorded, parts(kb_root)) == ["verify/test_sota364.py changed"]


def test_a_result_recorded_from_tokens_is_stale_after_an_edit_its_tokens_see_though_the_tree_does_not(kb_root):
    # today's digest leaves the parentheses out, but the tokens before them are gone: what the result ran is not known
    recorded = recorded_from_tokens(kb_root)
    before = parts(kb_root)
    edit(kb_root / VERIFIER, "0.1 + SEED", "(0.1 + SEED)")
    assert parts(kb_root) == before
    assert InputParts(kb_root).stale(recorded, parts(kb_root)) == ["verify/test_sota364.py changed"]


def test_a_part_recorded_from_bytes_is_upgraded_only_from_a_file_inside_the_knowledge_base(kb_root, tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text("X = 1\n")
    (kb_root.parent / "beside.py").write_text("X = 1\n")
    recorded = {f"code:{outside}": digest(b"X = 1\n"), "code:../beside.py": digest(b"X = 1\n")}  # their bytes' digests
    assert InputParts(kb_root).upgrade(recorded) is recorded  # neither is read: they stay as recorded, and differ


@pytest.mark.parametrize("head", ["", "# -*- coding: latin-1 -*-\n", "\ufeff"], ids=["utf-8", "latin-1", "bom"])
def test_a_verifier_modules_imports_and_code_read_with_its_kept_reading_are_those_it_gives_read_alone(
    kb_root, tmp_path, monkeypatch, head
):
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    (kb_root / "verify" / "helper_x.py").write_text("X = 1\n")
    module = kb_root / "verify" / "test_imports_x.py"
    module.write_bytes(f"{head}from verify import helper_x\n\n\ndef test_x():\n    pass\n".encode())
    kept, alone = InputParts(kb_root, cache=True), InputParts(kb_root)
    assert kept.closure(module) == alone.closure(module) and "helper_x.py" in {path.name for path in alone.closure(module)}
    assert kept.code_parts("verify/test_imports_x.py") == alone.code_parts("verify/test_imports_x.py")
