"""The ``code:`` input of a Python module: a digest of what Python runs, not of its words.

Words belong to the judgement, code to the measurement: a corrected docstring or comment in a verifier must not make
its results stale. So a module's part is the digest of its token stream (``tokenize``) without comments, without the
line breaks of blank and continued lines, without docstrings (the first statement of a module, class, function or
async function when it is a bare string, found with ``ast``), and without the spacing within a line. Any
other change counts: a string that is no docstring, an f-string, a number, a name, an indentation that changes a
block (the token stream keeps ``INDENT``/``DEDENT``, not their width). The value names its scheme (``TOKENS``), so
it is never taken for the digest of a file's bytes, which results recorded before it hold (``made_from_bytes``).

A verifier that reads its own ``__doc__`` at run time is fooled: its docstring is no input of its result.
"""

from __future__ import annotations

import ast
import bisect
import io
import json
import re
import tokenize
from collections.abc import Iterator

from assay.fingerprints import digest

#: The scheme of a part made from a module's tokens (``code_digest``). A part without a scheme is the digest of the
#: file's bytes: a result recorded before this scheme, or a module that does not parse.
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
    """Whether a recorded ``code:`` part is the digest of a file's bytes (no scheme) rather than of its tokens."""
    return _BYTES.fullmatch(value) is not None


def code_digest(text: str) -> str | None:
    """``TOKENS`` and the digest of what Python runs of the module ``text`` (``runs``); None where it does not parse
    or tokenize: its part is then the digest of its bytes, and pytest reports the error where it collects it."""
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
        body = node.body if isinstance(node, _DOCUMENTED) else []
        first = body[0] if body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            value = first.value
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
