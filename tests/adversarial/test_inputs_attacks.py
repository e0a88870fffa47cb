"""Attacks on freshness through what a check reads: an input too large to read, a folder, a missing file."""

from __future__ import annotations

from assay.ledger.inputs import InputParts
from assay.records.knowledge_base import load
from assay.status import run_reason
from tests.conftest import write_result

KEY = ("THEORY-085", "log-n-cap", "cpu")


def _reading(root, name: str) -> None:
    path = root / "claims" / "THEORY-085.yaml"
    path.write_text(path.read_text().replace("    devices: [cpu]\n", f"    devices: [cpu]\n    reads: [{name}]\n", 1))


def test_a_data_file_over_the_read_limit_is_hashed_in_full_so_rewriting_it_makes_the_result_stale(kb_root):
    (kb_root / "data").mkdir()
    big = kb_root / "data" / "scores.bin"
    big.write_bytes(b"a" * (9 * 2**20))  # 9 MiB: more than Assay reads as a record, still an input in full
    _reading(kb_root, "data/scores.bin")
    write_result(kb_root, *KEY, "passed", excess=0.0)
    kb = load(kb_root)
    claim = kb.claims["THEORY-085"]
    from assay.ledger.store import read_ledger

    ledger = read_ledger(kb_root)
    inputs = InputParts(kb_root)
    assert run_reason(ledger, KEY, inputs.parts(claim, claim.check("log-n-cap"), "cpu"), inputs) == "fresh"
    big.write_bytes(b"b" * (9 * 2**20))  # the same size: only the content differs
    inputs = InputParts(kb_root)
    assert run_reason(ledger, KEY, inputs.parts(claim, claim.check("log-n-cap"), "cpu"), inputs) == "stale"


def test_a_folder_named_under_reads_is_an_error_of_assay_check(diagnose, make_kb):
    root = make_kb()
    (root / "data").mkdir()
    _reading(root, "data")
    from assay import audit

    found = [d.render() for d in audit.run(load(root))]
    assert found == [
        "claims/THEORY-085.yaml:16:13: error[unreadable-input]: check 'log-n-cap' of THEORY-085 reads 'data', which "
        "is not a regular file inside the knowledge base\n"
        "  hint: list under reads: the data files the verifier opens, relative to the root"
    ]


def test_a_missing_file_named_under_reads_is_an_error_of_assay_check(diagnose):
    assert diagnose("unreadable-input") == (
        "claims/THEORY-085.yaml:16:13: error[unreadable-input]: check 'log-n-cap' of THEORY-085 reads "
        "'data/scores.npz', which does not exist\n"
        "  hint: list under reads: the data files the verifier opens, relative to the root"
    )


def test_a_helper_imported_by_its_path_is_an_input_so_editing_it_makes_the_result_stale(kb_root):
    # importlib.util.spec_from_file_location loads a file no import statement names: it is an input all the same
    helper = kb_root / "verify" / "by_path_helper.py"
    helper.write_text("SCALE = 1.0\n")
    module = kb_root / "verify" / "test_theory085.py"
    module.write_text(
        "import importlib.util\nfrom pathlib import Path\n"
        "_spec = importlib.util.spec_from_file_location('h', Path(__file__).with_name('by_path_helper.py'))\n"
        + module.read_text()
    )
    write_result(kb_root, *KEY, "passed", excess=0.0)
    kb = load(kb_root)
    claim = kb.claims["THEORY-085"]
    parts = InputParts(kb_root).parts(claim, claim.check("log-n-cap"), "cpu")
    assert "code:verify/by_path_helper.py" in parts
    from assay.ledger.store import read_ledger

    helper.write_text("SCALE = 2.0\n")
    inputs = InputParts(kb_root)
    assert run_reason(read_ledger(kb_root), KEY, inputs.parts(claim, claim.check("log-n-cap"), "cpu"), inputs) == "stale"


PACKAGE_HINT = (
    "  hint: name a file the installed package holds, package:NAME/PATH (NAME as it is imported, PATH inside its "
    "folder), and install the package at the version requirements.lock pins"
)


def _check_of(root) -> list[str]:
    from assay import audit

    return [d.render() for d in audit.run(load(root))]


def test_a_package_that_is_not_installed_under_reads_is_an_error_of_assay_check_naming_the_line(make_kb):
    root = make_kb()
    _reading(root, "package:assay_no_such_pkg/data/table.csv")
    assert _check_of(root) == [
        "claims/THEORY-085.yaml:16:13: error[unreadable-input]: check 'log-n-cap' of THEORY-085 reads "
        "'package:assay_no_such_pkg/data/table.csv', which names the package assay_no_such_pkg, and no package of "
        "that name is installed\n" + PACKAGE_HINT
    ]


def test_a_file_an_installed_package_does_not_hold_is_an_error_of_assay_check(make_kb, installed_package):
    root = make_kb()
    _reading(root, "package:assay_probe_pkg/data/tabel.csv")
    assert _check_of(root) == [
        "claims/THEORY-085.yaml:16:13: error[unreadable-input]: check 'log-n-cap' of THEORY-085 reads "
        "'package:assay_probe_pkg/data/tabel.csv', which is not a file of the installed package assay_probe_pkg\n" + PACKAGE_HINT
    ]


def test_a_package_file_that_links_out_of_the_package_is_an_error_and_its_part_is_unreadable(make_kb, installed_package):
    root = make_kb()
    (root / "secret.txt").write_text("a file of the knowledge base, not of the package")
    (installed_package / "data" / "table.csv").unlink()
    (installed_package / "data" / "table.csv").symlink_to(root / "secret.txt")
    _reading(root, "package:assay_probe_pkg/data/table.csv")
    assert _check_of(root) == [
        "claims/THEORY-085.yaml:16:13: error[unreadable-input]: check 'log-n-cap' of THEORY-085 reads "
        "'package:assay_probe_pkg/data/table.csv', which is not a regular file inside the package assay_probe_pkg\n"
        + PACKAGE_HINT
    ]
    claim = load(root).claims["THEORY-085"]
    parts = InputParts(root).parts(claim, claim.check("log-n-cap"), "cpu")
    assert parts["data:package:assay_probe_pkg/data/table.csv"] == (
        "unreadable: is a link to a file outside the package assay_probe_pkg"
    )


def test_a_folder_under_reads_is_an_unreadable_part_not_a_crash_of_the_inputs(kb_root):
    (kb_root / "data").mkdir()
    _reading(kb_root, "data")
    claim = load(kb_root).claims["THEORY-085"]
    parts = InputParts(kb_root).parts(claim, claim.check("log-n-cap"), "cpu")
    assert parts["data:data"] == "unreadable: is not a regular file (a directory)"


def test_a_package_file_that_is_found_is_no_diagnostic(make_kb, installed_package):
    root = make_kb()
    _reading(root, "package:assay_probe_pkg/data/table.csv")
    assert _check_of(root) == []
