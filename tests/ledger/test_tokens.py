"""assay.ledger.tokens: a module's code input is what Python runs of it, not its words."""

from __future__ import annotations

import pytest

from assay.ledger.tokens import TOKENS, code_digest, made_from_bytes, runs

MODULE = '''\
"""A verifier: the module's docstring."""

import math  # a comment


class Probe:
    """A class's docstring."""

    scale = 2.0

    def measure(self, x):
        """A method's docstring."""
        return math.sqrt(x) * self.scale


async def later(x):
    """An async function's docstring."""
    return "kept" + f"{x:>4}"
'''


def same(edited: str) -> bool:
    return code_digest(edited) == code_digest(MODULE)


@pytest.mark.parametrize(
    "old, new",
    [
        ('"""A verifier: the module\'s docstring."""', '"""A verifier, corrected: its docstring."""'),
        ('"""A class\'s docstring."""', "'single-quoted, and longer'"),
        ('"""A method\'s docstring."""', '"""A method\'s docstring,\n        now on two lines."""'),
        ('"""An async function\'s docstring."""', '"""Rewritten."""'),
    ],
)
def test_a_docstring_edit_of_a_module_class_function_or_async_function_leaves_the_digest(old, new):
    assert same(MODULE.replace(old, new))


def test_a_docstring_added_or_removed_leaves_the_digest():
    assert same(MODULE.replace('        """A method\'s docstring."""\n', ""))
    assert code_digest('def f(x):\n    """Added."""\n    return x\n') == code_digest("def f(x):\n    return x\n")


def test_comments_blank_lines_and_spacing_within_a_line_leave_the_digest():
    edited = MODULE.replace("# a comment", "# another comment\n# and one more\n\n").replace(
        "math.sqrt(x) * self", "math.sqrt( x )*self"
    )
    assert same(edited)


@pytest.mark.parametrize(
    "old, new",
    [
        ('"kept"', '"changed"'),  # a string that is no docstring
        ('f"{x:>4}"', 'f"{x:>5}"'),  # an f-string
        ("scale = 2.0", "scale = 2.5"),  # a number
        ("math.sqrt(x)", "math.exp(x)"),  # a name
    ],
)
def test_a_change_to_what_python_runs_changes_the_digest(old, new):
    assert not same(MODULE.replace(old, new))


def test_a_docstring_turned_into_an_assignment_changes_the_digest():
    assert not same(MODULE.replace('        """A method\'s docstring."""', '        note = """A method\'s docstring."""'))


def test_a_bare_string_that_is_not_the_first_statement_is_code():
    assert not same(MODULE.replace("    scale = 2.0\n", '    scale = 2.0\n    "a string after the first statement"\n'))


def test_an_indentation_that_changes_a_block_changes_the_digest_and_one_that_only_widens_it_does_not():
    nested = "def f(x):\n    if x:\n        x = 1\n    return x\n"
    assert code_digest(nested) != code_digest("def f(x):\n    if x:\n        x = 1\n        return x\n")
    assert code_digest(nested) == code_digest("def f(x):\n  if x:\n      x = 1\n  return x\n")


def test_a_docstring_on_the_line_of_its_def_keeps_the_line_break_that_ends_the_block():
    # without it, `def f(): "doc"` and a module-level `x = 1` after it would read as `def f(): x = 1`
    assert code_digest('def f(): "doc"\nx = 1\n') != code_digest("def f(): x = 1\n")
    assert code_digest('def f(): "doc"; return 1\n') == code_digest("def f(): return 1\n")


def test_an_f_string_is_one_string_token_as_python_3_11_reads_it_on_every_python():
    assert ("STRING", 'f"a{b!r:>{w}}c"') in runs('x = f"a{b!r:>{w}}c"\n')


def test_line_endings_are_layout():
    assert code_digest("x = 1\r\ny = '''a\r\nb'''\r\n") == code_digest("x = 1\ny = '''a\nb'''\n")


def test_a_module_that_does_not_parse_has_no_token_digest():
    assert code_digest("def f(:\n    return 1\n") is None
    assert code_digest("if x:\n  y = 1\n    z = 2\n") is None


def test_the_digest_names_its_scheme_and_is_never_taken_for_a_digest_of_bytes():
    digest = code_digest(MODULE)
    assert digest is not None and digest.startswith(TOKENS) and len(digest) == len(TOKENS) + 16
    assert not made_from_bytes(digest)
    assert made_from_bytes("0123456789abcdef")
    assert not made_from_bytes("unreadable: is a link to a file outside the knowledge base")
