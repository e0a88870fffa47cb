"""Attacks through verify/: two tests for one check, a symlink that publishes a file from outside the
repository, a FIFO that hangs whoever reads it, and markers that are not strings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay import audit
from assay.records.knowledge_base import load
from assay.records.verifiers import scan
from assay.site import generate

SECRET = "MY_CI_TOKEN=secret"


def test_two_tests_marked_for_one_check_are_a_duplicate_verifier_naming_both(diagnose):
    assert diagnose("duplicate-verifier") == (
        "verify/test_again.py:6:1: error[duplicate-verifier]: 'verify/test_again.py::test_shuffle_bn_again' and "
        "'verify/test_sota364.py::test_shuffle_bn' are both marked claim('SOTA-364', 'shuffle-bn')\n"
        "  hint: a check has one verifier: tie each test to its own check, or remove one"
    )


@pytest.fixture
def leak(kb_root: Path, tmp_path: Path) -> Path:
    """The valid knowledge base with verify/test_sota364.py a symlink to a secret outside it."""
    outside = tmp_path / "outside" / "ci.env"
    outside.parent.mkdir()
    outside.write_text(f"{SECRET}\n" + (kb_root / "verify" / "test_sota364.py").read_text())
    module = kb_root / "verify" / "test_sota364.py"
    module.unlink()
    module.symlink_to(outside)
    return kb_root


def test_a_verifier_that_links_outside_the_knowledge_base_is_an_unreadable_file_and_indexes_no_test(leak):
    assert [d.render() for d in audit.run(load(leak))] == [
        "verify/test_sota364.py:1:1: error[unreadable-file]: verify/test_sota364.py is a link to a file outside the "
        "knowledge base\n  hint: verifiers are regular files inside the knowledge base"
    ]
    assert [nodeid for nodeid in scan(leak) if nodeid.startswith("verify/test_sota364.py")] == []


def test_a_verifier_that_links_outside_the_knowledge_base_is_in_no_output_of_the_site(leak):
    outputs = generate(leak)
    leaked = [o.path for o in outputs if SECRET.encode() in (o.content if isinstance(o.content, bytes) else o.content.encode())]
    assert leaked == []
    page = next(o for o in outputs if o.path == "code/verify/test_sota364.py.md")
    assert "is a link to a file outside the knowledge base; it is not shown" in str(page.content)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_named_like_a_verifier_does_not_hang_assay_check(kb_root):
    os.mkfifo(kb_root / "verify" / "test_fifo.py")
    done = subprocess.run(
        [sys.executable, "-m", "assay.cli", "--root", str(kb_root), "check"], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout) == (
        1,
        (
            "verify/test_fifo.py:1:1: error[unreadable-file]: verify/test_fifo.py is not a regular file\n"
            "  hint: verifiers are regular files inside the knowledge base\n"
        ),
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_as_a_checks_verifier_module_does_not_hang_the_site(kb_root):
    module = kb_root / "verify" / "test_sota364.py"
    module.unlink()
    os.mkfifo(module)
    page = next(o for o in generate(kb_root) if o.path == "code/verify/test_sota364.py.md")
    assert "is not a regular file; it is not shown" in str(page.content)


def test_a_claim_marker_with_a_number_for_an_id_is_untied_not_a_crash(kb_root):
    (kb_root / "verify" / "test_numbers.py").write_text(
        "import pytest\n\n\n@pytest.mark.claim(364, 1)\ndef test_numbers():\n    pass\n"
    )
    assert [d.render() for d in audit.run(load(kb_root))] == [
        "verify/test_numbers.py:5:1: error[untied-verifier]: 'verify/test_numbers.py::test_numbers' has no claim marker\n"
        "  hint: add @pytest.mark.claim('SOTA-NNN', 'check-id')"
    ]


@pytest.mark.parametrize("source", [b"\xff\xfe not utf-8", b"x = 1\x00\n", b"(" * 300 + b")" * 300, b"-" * 200_000 + b"1"])
def test_a_verifier_module_that_python_cannot_parse_is_skipped_not_a_crash(kb_root, source):
    (kb_root / "verify" / "test_garbage.py").write_bytes(source)
    assert "verify/test_garbage.py" not in {n.split("::")[0] for n in scan(kb_root)}
    assert [d.code for d in audit.run(load(kb_root))] == []


def _prepend(path: Path, text: str) -> None:
    path.write_text(text + path.read_text(encoding="utf-8"), encoding="utf-8")


def test_a_latin1_coding_cookie_on_the_second_line_of_a_verifier_is_not_utf8(kb_root):
    _prepend(kb_root / "verify" / "test_sota364.py", "#!/usr/bin/env python\n# vim: set fileencoding=latin-1 :\n")
    assert [d.render() for d in audit.run(load(kb_root))] == [
        "verify/test_sota364.py:1:1: error[not-utf8]: verify/test_sota364.py declares the coding 'iso-8859-1' on line 2, "
        "in which Python runs other text than Assay reads; Python modules of a knowledge base are UTF-8\n"
        "  hint: delete the coding line; save the module as UTF-8"
    ]


def test_a_utf7_coding_cookie_in_a_module_a_verifier_imports_is_not_utf8(kb_root):
    _prepend(kb_root / "verify" / "helpers.py", "# -*- coding: utf-7 -*-\n")
    assert [d.render() for d in audit.run(load(kb_root))] == [
        "verify/helpers.py:1:1: error[not-utf8]: verify/helpers.py declares the coding 'utf-7' on line 1, in which Python "
        "runs other text than Assay reads; Python modules of a knowledge base are UTF-8\n"
        "  hint: delete the coding line; save the module as UTF-8"
    ]


def test_a_bidi_isolate_in_a_comment_of_a_module_a_verifier_imports_is_a_bidi_control(kb_root):
    _prepend(kb_root / "verify" / "helpers.py", "# seed \u2067 reversed\n")
    assert [d.render() for d in audit.run(load(kb_root))] == [
        "verify/helpers.py:1:8: error[bidi-control]: U+2067, a bidirectional control, can make the text show in another "
        "order than it reads\n  hint: delete it; write the text in the order it is read"
    ]


def test_the_site_shows_no_code_of_a_verifier_whose_coding_cookie_python_reads_otherwise(kb_root):
    _prepend(kb_root / "verify" / "test_sota364.py", "# -*- coding: utf-7 -*-\n")
    page = next(o for o in generate(kb_root) if o.path == "code/verify/test_sota364.py.md")
    assert "declares the coding &#39;utf-7&#39; on line 1" in str(page.content)
    assert "def test_shuffle_bn" not in str(page.content)


def test_a_parametrized_verifier_is_an_error_saying_a_check_has_one_test(diagnose):
    assert diagnose("parametrized-verifier") == (
        "verify/test_theory085.py:8:1: error[parametrized-verifier]: 'verify/test_theory085.py::"
        "test_infonce_never_exceeds_log_n' is parametrized, so pytest would run it several times for the one check "
        "THEORY-085/log-n-cap\n  hint: a check has one test: give the values to the verifier as its seeds (seeds: in the "
        "record), or make each its own check with its own test"
    )


def test_a_verifier_parametrized_through_its_modules_pytestmark_is_a_parametrized_verifier(kb_root):
    module = kb_root / "verify" / "test_theory085.py"
    module.write_text(
        module.read_text(encoding="utf-8")
        .replace("pytestmark = pytest.mark.claim(", 'pytestmark = [pytest.mark.parametrize("n", [8, 16]), pytest.mark.claim(', 1)
        .replace('"log-n-cap")', '"log-n-cap")]', 1),
        encoding="utf-8",
    )
    diagnostics = [d.render() for d in audit.run(load(kb_root))]
    assert diagnostics == [
        "verify/test_theory085.py:7:1: error[parametrized-verifier]: 'verify/test_theory085.py::"
        "test_infonce_never_exceeds_log_n' is parametrized, so pytest would run it several times for the one check "
        "THEORY-085/log-n-cap\n  hint: a check has one test: give the values to the verifier as its seeds (seeds: in the "
        "record), or make each its own check with its own test"
    ]


def test_a_verify_folder_linked_outside_is_one_unreadable_file_and_not_a_missing_verifier_per_check(kb_root, tmp_path):
    (kb_root / "verify").rename(tmp_path / "elsewhere")
    (kb_root / "verify").symlink_to(tmp_path / "elsewhere")
    assert [d.render() for d in audit.run(load(kb_root))] == [
        "verify/:1:1: error[unreadable-file]: verify/ is a link to a folder outside the knowledge base; nothing in it is "
        "read\n  hint: make verify/ a folder of the knowledge base: move its files in and remove the link"
    ]
