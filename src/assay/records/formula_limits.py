"""What a formula in record text may ask of KaTeX: nothing that draws, links or grows past the text around it.

Record text reaches every page, and KaTeX renders its formulas: ``$...$`` (``INLINE``, as the site finds them) and
``\\( \\)``, ``\\[ \\]`` (KaTeX's own delimiters). A formula may not use a ``REFUSED`` command (a rule is a box of
any size and colour, a link or an image leaves the page, a smash or a lap paints outside the formula's place, a macro
definition can hide any of them), nor a size over ``MAX_EM`` em, which a title could use to paint over its own
verdict. The site bounds formulas as well: KaTeX's ``maxSize`` (``site/assets/assay.js``) and CSS that keeps a
formula inside its own box.
"""

from __future__ import annotations

import re

from assay.diagnostics import shortened

#: ``$f_k$``: TeX between single dollars, as Pandoc reads it (no space inside either dollar, none glued to a word).
INLINE = re.compile(r"(?<![\w$\\])\$([^\s$](?:[^$\n]*[^\s$])?)\$(?![\w$])")
#: KaTeX's delimiters, as the site's script gives them; an unclosed one reads to the end of the text.
_DELIMITED = re.compile(r"\\\((.*?)(?:\\\)|$)|\\\[(.*?)(?:\\\]|$)", re.DOTALL)

#: The largest size a formula may give (KaTeX's ``maxSize``, in em: 10em is a few lines of text).
MAX_EM = 10.0
#: The commands a formula may not use, and why.
REFUSED = {
    "rule": "draws a box of any size and colour",
    "href": "links out of the page",
    "url": "links out of the page",
    "includegraphics": "loads an image",
    **dict.fromkeys(("htmlStyle", "htmlClass", "htmlId", "htmlData"), "writes HTML attributes"),
    **dict.fromkeys(
        ("smash", "llap", "rlap", "clap", "mathllap", "mathrlap", "mathclap"), "paints outside the formula's own place"
    ),
    **dict.fromkeys(
        ("def", "gdef", "edef", "xdef", "let", "futurelet", "newcommand", "renewcommand", "providecommand", "global"),
        "defines a macro, which can hide a refused command or size",
    ),
}
#: How a record's formula keeps within its place on the page.
BOUNDED_HINT = f"write the formula without it, with sizes up to {MAX_EM:g}em: record text holds no boxes, links or macros"
_COMMAND = re.compile(r"\\(" + "|".join(sorted(REFUSED, key=len, reverse=True)) + r")(?![A-Za-z])")
#: TeX's units in points (KaTeX's ``units.js``); em and its kin are relative to the font.
_PT = {"pt": 1, "mm": 7227 / 2540, "cm": 7227 / 254, "in": 72.27, "bp": 803 / 800, "pc": 12, "dd": 1238 / 1157}
_PT |= {"cc": 14856 / 1157, "nd": 685 / 642, "nc": 1370 / 107, "sp": 1 / 65536, "px": 803 / 800}
_EM = {"em": 1.0, "ex": 0.431, "mu": 1 / 18} | {unit: pt / 10 for unit, pt in _PT.items()}  # KaTeX: 10pt to the em
#: A group of plain words (``\\text{1000 in all}``): no command in it reads a size, so its numbers are none.
_PLAIN_TEXT = re.compile(r"\\(?:text[a-z]*|mbox|mathrm|operatorname)\s*\{[^{}\\]*\}")
_SIZE = re.compile(r"(\d+(?:[.,]\d*)?|[.,]\d+)\s*(" + "|".join(_EM) + r")(?![A-Za-z])")


def formulas(text: str) -> list[str]:
    """The formulas of record text that KaTeX would render, in order of where they begin."""
    found = [(m.start(), m.group(1)) for m in INLINE.finditer(text) if "\\" in m.group(1)]  # others are plain text
    found += [(m.start(), m.group(1) if m.group(1) is not None else m.group(2)) for m in _DELIMITED.finditer(text)]
    return [tex for _, tex in sorted(found)]


def unbounded(text: str) -> list[str]:
    """What each formula of ``text`` asks that a page must not give, one line per formula: the refused commands it
    uses, and its largest size over ``MAX_EM``."""
    out = []
    for tex in formulas(text):
        asks = [f"uses \\{name}, which {REFUSED[name]}" for name in dict.fromkeys(_COMMAND.findall(tex))]
        sizes = [(_em(m), m.group(0)) for m in _SIZE.finditer(_PLAIN_TEXT.sub("", tex))]
        em, written = max(sizes, default=(0.0, ""))
        if em > MAX_EM:
            asks.append(f"gives the size {written} (about {em:.0f}em, over {MAX_EM:g}em)")
        if asks:
            out.append(f"the formula '{shortened(tex)}' " + "; it ".join(asks))
    return out


def _em(size: re.Match) -> float:
    return float(size.group(1).replace(",", ".")) * _EM[size.group(2)]
