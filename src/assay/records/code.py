"""The ``code:`` input of a Python module: a digest of what Python runs, not of its words.

Words belong to the judgement, code to the measurement: a corrected docstring or comment in a verifier must not make
its results stale. So a module's part is the digest of its syntax tree (``ast``) without docstrings (the first
statement of a module, class, function or async function when it is a bare string): comments, blank lines, the
spacing within a line, parentheses that change nothing and the way a literal is written (``0x10``, ``16``) are not in
it. Any other change counts: a string that is no docstring, an f-string, a number, a name, a block. The value names its
scheme (``TREE``), so it is never taken for the digest of a file's bytes (``made_from_bytes``) or of its tokens
(``TOKENS``), which results recorded before it hold: ``InputParts.upgrade`` restates those.

The tree is written out as JSON of each node's kind and the fields it sets (an empty list or None is left out, and an
f-string's text pieces are joined), so that Pythons 3.11 to 3.13 give the same digest: Python 3.12 added empty fields
(``type_params``) and splits an f-string's text where 3.11 does not, and a string's ``repr`` follows the Unicode
tables of the Python that makes it. Checked on 24,577 modules (Python 3.11's standard library and installed packages,
this project's environment and repository, the 10,000-claim benchmark): the three give the same digest of each but
the three that not all three read (written for 3.12, or not in UTF-8). The tree comes from the parse that reads a verifier's tests
(``records.verifiers``), so it costs no second parse; tokenizing a module cost more than parsing it (``tokenize`` is
pure Python before 3.12: 2.6 CPU s for the 4.4 MB of the 10,000-claim benchmark's verifiers, against 1.5 s for
``ast.parse`` and 0.7 s for this digest of the trees).

A verifier that reads its own ``__doc__`` at run time is fooled: its docstring is no input of its result.
"""

from __future__ import annotations

import ast
import bisect
import functools
import io
import json
import re
import tokenize
from collections.abc import Iterator

from assay.fingerprints import digest

#: The scheme of a part made from a module's syntax tree (``code_digest``): what a result records today. A part
#: without a scheme is the digest of the file's bytes: a result recorded before either scheme, or a module that does
#: not parse.
TREE = "py2:"

#: The scheme of a part made from a module's tokens (``token_digest``): a result recorded before ``TREE``.
TOKENS = "py1:"

#: A part made from a file's bytes (``InputParts.file_digest``): 16 lowercase hex digits, no scheme.
_BYTES = re.compile(r"[0-9a-f]{16}")

#: Tokens that say nothing Python runs: comments, and the line breaks of blank, comment-only and continued lines.
_WORDS = frozenset({tokenize.COMMENT, tokenize.NL})

#: Tokens whose text is layout: their kind alone is what runs (an indent's width is not, the block it opens is).
_LAYOUT = frozenset({tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE, tokenize.ENDMARKER})

#: Where a string is tokenized in parts (Python 3.12+: f-strings; 3.14+: t-strings): joined into one ``STRING`` as
#: Python 3.11 tokenizes it, so that every supported Python gives the same digest.
_OPENS = {getattr(tokenize, n) for n in ("FSTRING_START", "TSTRING_START") if hasattr(tokenize, n)}
_CLOSES = {getattr(tokenize, n) for n in ("FSTRING_END", "TSTRING_END") if hasattr(tokenize, n)}

#: The kinds of token after which a statement starts its own line.
_LINE_STARTS = ("NEWLINE", "INDENT", "DEDENT")

_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)

Position = tuple[int, int]  # (line, column in characters), as ``tokenize`` gives them


def made_from_bytes(value: str) -> bool:
    """Whether a recorded ``code:`` part is the digest of a file's bytes (no scheme) rather than of its code."""
    return _BYTES.fullmatch(value) is not None


def code_digest(text: str) -> str | None:
    """``TREE`` and the digest of what Python runs of the module ``text`` (``tree_digest``); None where it does not
    parse: its part is then the digest of its bytes, and pytest reports the error where it collects it."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return tree_digest(tree)


def tree_digest(tree: ast.Module) -> str | None:
    """``TREE`` and the digest of a module's syntax tree without its docstrings (``_form``); None where the tree is
    nested deeper than Python writes out (a chain of thousands of operators) or holds an integer of more digits than
    Python prints: such a module's part is the digest of its bytes."""
    try:
        return TREE + digest(json.dumps(_form(tree)).encode())
    except (RecursionError, ValueError):
        return None


def _form(node: object) -> object:
    """``node`` as plain data: a node as its kind followed by each field it sets and that field's value (its context,
    load or store, left out: where it stands says it), a list as a list, a constant as itself where JSON holds it.
    The commonest nodes (a name, a plain constant, an attribute) are written directly: a fourth of the time."""
    kind = type(node)
    if kind is ast.Name:
        return ["Name", "id", node.id]  # type: ignore[attr-defined]
    if kind is ast.Attribute:
        return ["Attribute", "value", _form(node.value), "attr", node.attr]  # type: ignore[attr-defined]
    if kind is ast.Constant and node.kind is None and type(node.value) in _PLAIN:  # type: ignore[attr-defined]
        return ["Constant", "value", node.value]  # type: ignore[attr-defined]
    if kind is list:
        return [_form(item) for item in node]  # type: ignore[attr-defined]
    if isinstance(node, ast.AST):
        out: list[object] = [kind.__name__]
        for name in _fields(kind):
            value = getattr(node, name, None)
            if name == "values" and kind is ast.JoinedStr:
                value = _pieces(value)  # before the test for empty: text that is only empty pieces sets nothing
            if value is None or value == []:
                continue
            if name == "body" and isinstance(node, _DOCUMENTED) and _docstring(value) is not None:
                value = value[1:]
            out += [name, _form(value)]
        return out
    if node is None or isinstance(node, (str, int, float)):
        return node
    return [kind.__name__, node.hex() if isinstance(node, bytes) else repr(node)]  # bytes, complex, ...


#: The types of constant JSON writes as they are (a constant None sets no field: ``_form`` leaves it out).
_PLAIN = frozenset({str, int, float, bool})


@functools.cache
def _fields(kind: type) -> tuple[str, ...]:
    return tuple(name for name in kind._fields if name != "ctx")  # type: ignore[attr-defined]


def _docstring(body: list[ast.stmt]) -> ast.Constant | None:
    """The docstring that opens ``body``, if any."""
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first.value
    return None


def _pieces(values: list[ast.expr]) -> list[ast.expr]:
    """An f-string's parts with its adjacent text joined and empty text left out, as Python 3.11 parses it."""
    out: list[ast.expr] = []
    for value in values:
        text = isinstance(value, ast.Constant) and isinstance(value.value, str)
        if text and out and isinstance(out[-1], ast.Constant) and isinstance(out[-1].value, str):
            out[-1] = ast.Constant(out[-1].value + value.value)
        elif not text or value.value:
            out.append(value)
    return out


def token_digest(text: str) -> str | None:
    """``TOKENS`` and the digest of the tokens of the module ``text`` that Python runs (``runs``), as results recorded
    before ``TREE`` hold it; None where it does not parse or tokenize."""
    try:
        kept = runs(text)
    except (SyntaxError, tokenize.TokenError, ValueError, RecursionError, MemoryError):
        return None
    return TOKENS + digest(json.dumps(kept, ensure_ascii=False).encode())


def runs(text: str) -> list[tuple[str, str]]:
    """The tokens of ``text`` that Python runs, each as ``(kind, text)``: comments, blank-line breaks and docstrings
    left out, layout tokens by their kind alone. Raises ``SyntaxError`` (or ``tokenize.TokenError``) where Python
    would not compile it."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # Python reads every line ending as one
    # a docstring's tokens are known by where they start: Python 3.12.0-1 gives the end of a multi-line string with
    # other than ASCII on its last line in bytes, not characters
    docstrings = sorted(_docstrings(ast.parse(text), text))
    firsts = [start for start, _ in docstrings]
    lines = text.split("\n")
    out: list[tuple[str, str]] = []
    opened: list[Position] = []  # the starts of the split strings being read (they nest)
    # What ends a docstring's statement goes with it, so a docstring added or removed is words too: a ';', or the line
    # break of a docstring on its own line (after ``def f(): "doc"`` the break ends the block: it stays)
    ends: tuple[str, ...] = ()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type in _OPENS:
            opened.append(tok.start)
        elif tok.type in _CLOSES:
            start = opened.pop()
            if not opened:
                out.append(("STRING", _between(lines, start, tok.end)))
        elif opened or tok.type in _WORDS:
            continue
        elif tok.type == tokenize.STRING and _within(docstrings, firsts, tok.start):
            ends = ends or ((";", "NEWLINE") if not out or out[-1][0] in _LINE_STARTS else (";",))
        elif ends and (tok.string == ";" or tokenize.tok_name[tok.type] in ends):
            ends = ()
        else:
            ends = ()
            out.append((tokenize.tok_name[tok.type], "" if tok.type in _LAYOUT else tok.string))
    return out


def _within(spans: list[tuple[Position, Position]], firsts: list[Position], at: Position) -> bool:
    """Whether ``at`` lies in one of the sorted, disjoint ``spans`` (``firsts``: their starts): one bisection, not a
    scan of every docstring for every token (a module of 200 tests, each with its docstring, took 0.18 CPU s so)."""
    i = bisect.bisect_right(firsts, at) - 1
    return i >= 0 and at < spans[i][1]


def _docstrings(tree: ast.AST, text: str) -> list[tuple[Position, Position]]:
    """The span of each docstring in ``tree``, in ``tokenize``'s positions (``ast`` counts columns in UTF-8 bytes)."""
    lines = text.split("\n")
    spans = []
    for node in _statements(tree):
        value = _docstring(node.body) if isinstance(node, _DOCUMENTED) else None
        if value is not None:
            start = (value.lineno, _column(lines, value.lineno, value.col_offset))
            end = (value.end_lineno or value.lineno, _column(lines, value.end_lineno or value.lineno, value.end_col_offset or 0))
            spans.append((start, end))
    return spans


def _statements(tree: ast.AST) -> Iterator[ast.AST]:
    """``tree`` and every statement in it: a module, class or function is a statement, never inside an expression, so
    the expressions (most of a module's nodes) are not walked (``ast.walk`` took a third of ``runs``)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for field in _BLOCKS:
            for child in getattr(node, field, None) or ():
                if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                    todo.append(child)


#: The fields of a node that hold statements (a handler's and a match case's body among them).
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _column(lines: list[str], line: int, offset: int) -> int:
    """The character column of the UTF-8 byte ``offset`` in ``line`` (1-based)."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return offset if text.isascii() else len(text.encode()[:offset].decode(errors="replace"))


def _between(lines: list[str], start: Position, end: Position) -> str:
    """The source text from ``start`` to ``end``."""
    (r0, c0), (r1, c1) = start, end
    if r0 == r1:
        return lines[r0 - 1][c0:c1]
    return "\n".join([lines[r0 - 1][c0:], *lines[r0 : r1 - 1], lines[r1 - 1][:c1]])
