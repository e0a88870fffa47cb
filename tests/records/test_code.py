"""assay.records.code: a module's code input is what Python runs of it, not its words.

Each rule of words and code holds for both schemes: the syntax tree's (``code_digest``, what results record today)
and the tokens' (``token_digest``, what results recorded before it hold, restated by ``InputParts.upgrade``)."""

from __future__ import annotations

import ast

import pytest

from assay.records.code import TOKENS, TREE, code_digest, made_from_bytes, runs, token_digest, tree_digest

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


@pytest.fixture(params=[code_digest, token_digest], ids=["tree", "tokens"])
def scheme(request):
    return request.param


@pytest.fixture
def same(scheme):
    return lambda edited: scheme(edited) == scheme(MODULE)


@pytest.mark.parametrize(
    "old, new",
    [
        ('"""A verifier: the module\'s docstring."""', '"""A verifier, corrected: its docstring."""'),
        ('"""A class\'s docstring."""', "'single-quoted, and longer'"),
        ('"""A method\'s docstring."""', '"""A method\'s docstring,\n        now on two lines."""'),
        ('"""An async function\'s docstring."""', '"""Rewritten."""'),
    ],
)
def test_a_docstring_edit_of_a_module_class_function_or_async_function_leaves_the_digest(same, old, new):
    assert same(MODULE.replace(old, new))


def test_a_docstring_added_or_removed_leaves_the_digest(scheme, same):
    assert same(MODULE.replace('        """A method\'s docstring."""\n', ""))
    assert scheme('def f(x):\n    """Added."""\n    return x\n') == scheme("def f(x):\n    return x\n")


def test_comments_blank_lines_and_spacing_within_a_line_leave_the_digest(same):
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
def test_a_change_to_what_python_runs_changes_the_digest(same, old, new):
    assert not same(MODULE.replace(old, new))


def test_a_docstring_turned_into_an_assignment_changes_the_digest(same):
    assert not same(MODULE.replace('        """A method\'s docstring."""', '        note = """A method\'s docstring."""'))


def test_a_bare_string_that_is_not_the_first_statement_is_code(same):
    assert not same(MODULE.replace("    scale = 2.0\n", '    scale = 2.0\n    "a string after the first statement"\n'))


def test_an_indentation_that_changes_a_block_changes_the_digest_and_one_that_only_widens_it_does_not(scheme):
    nested = "def f(x):\n    if x:\n        x = 1\n    return x\n"
    assert scheme(nested) != scheme("def f(x):\n    if x:\n        x = 1\n        return x\n")
    assert scheme(nested) == scheme("def f(x):\n  if x:\n      x = 1\n  return x\n")


def test_a_docstring_on_the_line_of_its_def_keeps_the_line_break_that_ends_the_block(scheme):
    # without it, `def f(): "doc"` and a module-level `x = 1` after it would read as `def f(): x = 1`
    assert scheme('def f(): "doc"\nx = 1\n') != scheme("def f(): x = 1\n")
    assert scheme('def f(): "doc"; return 1\n') == scheme("def f(): return 1\n")


def test_an_f_string_is_one_string_token_as_python_3_11_reads_it_on_every_python():
    assert ("STRING", 'f"a{b!r:>{w}}c"') in runs('x = f"a{b!r:>{w}}c"\n')


def test_line_endings_are_layout(scheme):
    assert scheme("x = 1\r\ny = '''a\r\nb'''\r\n") == scheme("x = 1\ny = '''a\nb'''\n")


def test_a_module_that_does_not_parse_has_no_digest(scheme):
    assert scheme("def f(:\n    return 1\n") is None
    assert scheme("if x:\n  y = 1\n    z = 2\n") is None


@pytest.mark.parametrize(("function", "name"), [(code_digest, TREE), (token_digest, TOKENS)], ids=["tree", "tokens"])
def test_the_digest_names_its_scheme_and_is_never_taken_for_a_digest_of_bytes(function, name):
    digest = function(MODULE)
    assert digest is not None and digest.startswith(name) and len(digest) == len(name) + 16
    assert not made_from_bytes(digest)
    assert made_from_bytes("0123456789abcdef")
    assert not made_from_bytes("unreadable: is a link to a file outside the knowledge base")


@pytest.mark.parametrize(
    "old, new",
    [
        ("math.sqrt(x) * self.scale", "(math.sqrt(x)) * (self.scale)"),  # parentheses that change nothing
        ("scale = 2.0", "scale = 2.00"),  # a number written otherwise
        ('"kept"', "'kept'"),  # a string quoted otherwise
        ('"kept" + f"{x:>4}"', '"kept" + f"{x:>4}" ""'),  # an f-string's text in pieces
    ],
)
def test_what_is_written_otherwise_but_runs_the_same_leaves_the_tree_digest(old, new):
    assert code_digest(MODULE.replace(old, new)) == code_digest(MODULE)


@pytest.mark.parametrize(
    "text",
    ['x = f"a{b!r:>{w}}c"\n', 'x = f"{a}" f"{b}" "c"\n', 'x = f"{x=}"\n', 'x = f"{x:{w}.{p}f}"\n', "x = '\\u0378'\n"],
)
def test_the_tree_digest_is_the_same_on_every_python_it_supports(text):
    """Pinned: a Python that parses these otherwise than 3.11-3.13 do (Python 3.12 splits an f-string's text and
    format spec otherwise; ``repr`` of an unassigned code point follows the Unicode tables) fails here, not in the
    ledger, where every result would go stale."""
    pinned = {
        'x = f"a{b!r:>{w}}c"\n': "py2:c1c6ce2ebdfa50ba",
        'x = f"{a}" f"{b}" "c"\n': "py2:c434f50294ecf8ff",
        'x = f"{x=}"\n': "py2:b544d7c1b61fdf45",
        'x = f"{x:{w}.{p}f}"\n': "py2:dfa31e1da40de9ea",
        "x = '\\u0378'\n": "py2:b58eaf29273036b1",
    }
    assert code_digest(text) == pinned[text]


def test_a_tree_nested_deeper_than_python_writes_out_has_no_digest():
    assert code_digest("x = " + " + ".join(["a"] * 5000) + "\n") is None


def test_an_f_string_a_python_splits_into_empty_text_pieces_has_the_digest_of_one_it_does_not_split():
    # as Python 3.12 adds an empty piece where 3.11 adds none: the tree each might give of x = f""
    def module(values: list[ast.expr]) -> ast.Module:
        return ast.Module([ast.Assign([ast.Name("x", ast.Store())], ast.JoinedStr(values))], [])

    assert tree_digest(module([ast.Constant(""), ast.Constant("")])) == tree_digest(module([])) == code_digest('x = f""\n')
    assert tree_digest(module([ast.Constant("a"), ast.Constant("b")])) == code_digest('x = f"ab"\n')
