"""The words of a LaTeX source, roughly as typeset, read in time linear in its length.

Comments go; a command goes and what its braces hold stays; quote marks and dashes are typeset (``` `` ''``` as
“ ”, `--` as –). What others typeset (`\\cite`, `\\ref`, `\\label`, `\\url`) goes with its argument, and so do the
names of files (`\\input`, `\\include`, `\\includegraphics`): nothing is read from another file. An inline formula
(`$…$`, `\\(…\\)`, `\\[…\\]`, `$$…$$`) is its symbols, as ``assay.records.formulas`` says.

Every pattern either begins where no earlier match could have begun (a run of spaces is tried from its first space
only) or stops at the next backslash or brace, so no pattern scans the same text twice: a copy of 100,000 spaces,
or of 100,000 unclosed `\\cite[`, reads as fast as prose.
"""

from __future__ import annotations

import re

from assay.records.formulas import pieces, plain

_COMMENT = re.compile(r"(?<!\\)%[^\n]*")  # to the end of its line
_TYPESET = [
    # typeset by others, or a file's name: the spaces before it go with it (tried from the first of them only)
    (
        re.compile(
            r"(?<![ \t~])[ \t]*~?\\(?:cite[a-zA-Z]*|ref|eqref|autoref|cref|Cref|label|url|input|include|includegraphics)"
            r"\*?(?:\[[^\]\\]*\])*\{[^{}\\]*\}"
        ),
        "",
    ),
    (re.compile(r"``"), "“"),
    (re.compile(r"''"), "”"),
    (re.compile(r"`"), "‘"),
    (re.compile(r"---"), "—"),
    (re.compile(r"--"), "–"),
    (re.compile(r"\\\\|~"), " "),
    (re.compile(r"\\([%&_#$])"), r"\1"),
    (re.compile(r"\\[a-zA-Z]+\*?(?:\[[^\]\\]*\])?"), ""),  # a command; what its braces hold stays
    (re.compile(r"[{}]"), ""),
]


def latex_text(source: str) -> str:
    """The words of a LaTeX source (see the module's docstring)."""
    return "".join(plain(piece) if formula else _prose(piece) for piece, formula in pieces(_COMMENT.sub("", source)))


def _prose(text: str) -> str:
    for pattern, replacement in _TYPESET:
        text = pattern.sub(replacement, text)
    return text
