"""Inline math as it is compared: the symbols of a formula, whichever way it was written down.

A formula reaches a quote or a copy of a source in one of three forms: TeX between delimiters (`$f_k$`, `\\(f_k\\)`,
`\\[f_k\\]`, `$$f_k$$`), the TeX an HTML page keeps beside its rendering (KaTeX's and LaTeXML's
`<annotation encoding="application/x-tex">`, a `<math alttext=...>`, MathJax 2's `<script type="math/tex">`), or
MathML's symbols (MathJax 3's assistive `<math>`). ``plain`` makes each the same text: the formula's symbols in
order, with no spaces, no braces, no `_` or `^`, its TeX commands dropped except letters and a few operators, which
are their Unicode characters (`\\alpha` is α, `\\leq` ≤, `\\log` log). So `$\\mathcal{O}(n^2)$`, `O(n^{2})` and
MathML's `<mi>O</mi><mo>(</mo><msup><mi>n</mi><mn>2</mn></msup><mo>)</mo>` are all `O(n2)`. ``unwrap`` replaces each
delimited formula of a text by its ``plain`` form; ``assay.records.passages.normalise`` applies it to both sides of a
comparison, and the readers of copies (``assay.copies``) give a formula of a page in its ``plain`` form.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

_GREEK = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega"
).split()


def _letter(name: str) -> str:
    case = "CAPITAL" if name[0].isupper() else "SMALL"
    spelled = name.upper().replace("LAMBDA", "LAMDA")
    return unicodedata.lookup(f"GREEK {case} LETTER {spelled}")


#: What a TeX command is, where it is a symbol; every other command is dropped, and what its braces hold stays.
SYMBOLS = (
    {g: _letter(g) for g in _GREEK}
    | {g.capitalize(): _letter(g.capitalize()) for g in _GREEK}
    | {"varepsilon": "ε", "vartheta": "ϑ", "varphi": "φ", "varrho": "ϱ", "varsigma": "ς", "ell": "ℓ", "infty": "∞"}
    | {"leq": "≤", "le": "≤", "geq": "≥", "ge": "≥", "neq": "≠", "ne": "≠", "approx": "≈", "sim": "∼", "propto": "∝"}
    | {"times": "×", "cdot": "⋅", "pm": "±", "mp": "∓", "in": "∈", "notin": "∉", "subset": "⊂", "subseteq": "⊆"}
    | {"to": "→", "rightarrow": "→", "leftarrow": "←", "mapsto": "↦", "sum": "∑", "prod": "∏", "int": "∫"}
    | {"partial": "∂", "nabla": "∇", "ldots": "...", "cdots": "⋯", "dots": "...", "mid": "∣", "|": "‖"}
    | {"{": "{", "}": "}", "%": "%", "$": "$", "_": "_", "&": "&", "#": "#"}
    | dict.fromkeys("log exp max min sup inf lim sin cos tan det arg dim ker Pr".split(), None)  # themselves
)
_COMMAND = re.compile(r"\\([a-zA-Z]+|[{}%$_&#|])")
#: TeX's spacing commands and line breaks (`\,` `\;` `\!` `\ ` `\\`), dropped before any other command is read.
_SPACING = re.compile(r"\\[,;:! \\]")
#: What a formula's symbols are written with that is not a symbol: spaces, grouping, scripts, and MathML's invisible
#: operators (function application, invisible times, separator and plus, U+2061-U+2064).
_MARKS = re.compile(r"[\s{}_^~\u2061-\u2064]+")


def _symbol(m: re.Match[str]) -> str:
    name = m.group(1)
    return (SYMBOLS[name] or name) if name in SYMBOLS else ""  # a command that is no symbol is dropped


def plain(formula: str) -> str:
    """The symbols of ``formula`` (TeX, or the text of MathML's elements), as they are compared."""
    return _MARKS.sub("", _COMMAND.sub(_symbol, _SPACING.sub("", formula)))


#: Where a delimited formula may begin: `$$`, `$`, `\\(` or `\\[`, none of them escaped by a backslash before it.
_OPEN = re.compile(r"(?<!\\)(?:\$\$|\$(?=\S)|\\\(|\\\[)")
#: Where a `$` formula ends (pandoc's rule): after a character that is no space, before no digit, and not as half of
#: `$$`, so that prices (`$5 and $6`) are not read as a formula.
_DOLLAR_CLOSE = re.compile(r"(?<![\s\\$])\$(?![\d$])")
_CLOSE = {"$$": "$$", "\\(": "\\)", "\\[": "\\]"}


def unwrap(text: str) -> str:
    """``text`` with each delimited formula replaced by its ``plain`` form; a delimiter never closed stays as it is."""
    if "$" not in text and "\\" not in text:
        return text
    return "".join(plain(piece) if formula else piece for piece, formula in pieces(text))


def pieces(text: str) -> Iterator[tuple[str, bool]]:
    """``text`` cut into prose and formulas, in order: (its text, whether it is a formula), a formula's text without
    its delimiters.

    Linear in the text: an opening delimiter that finds no closing one after it is not looked for again (nothing
    after a later one could close it either)."""
    at, unclosed = 0, set()
    for m in _OPEN.finditer(text):
        opener = m.group()
        if m.start() < at or opener in unclosed:
            continue
        end = _closing(text, opener, m.end())
        if end is None:
            unclosed.add(opener)
            continue
        yield text[at : m.start()], False
        yield text[m.end() : end[0]], True
        at = end[1]
    yield text[at:], False


def _closing(text: str, opener: str, start: int) -> tuple[int, int] | None:
    """Where the formula opened by ``opener`` before ``start`` ends: its closing delimiter's span, or None."""
    if opener == "$":
        m = _DOLLAR_CLOSE.search(text, start)
        return m.span() if m else None
    at = text.find(_CLOSE[opener], start)
    return None if at < 0 else (at, at + len(_CLOSE[opener]))
