"""The words of an HTML page, read in one pass, in time linear in its length, whatever the page holds.

What the elements hold is kept, with a line break where a block begins or ends; scripts, styles and the head go;
comments, declarations and processing instructions go, an unterminated one to the end of the page (as browsers
read it). A tag is `<name ...>` with no `<` or `>` inside; anything else that starts with `<` is text. Character
references are resolved (`&amp;` is &).

Rendered math is read as its formula (``assay.records.formulas``): a `<math>` element as the TeX it keeps (its
`alttext`, or an `<annotation encoding="application/x-tex">`: LaTeXML, KaTeX), else as the text of its MathML
symbols (MathJax 3's assistive MathML); MathJax 2's `<script type="math/tex">` as its TeX; what only draws a
formula (KaTeX's `katex-html`, MathJax's `<mjx-math>` and its previews) is not read.

Not ``html.parser``: on `<![` without a name it raises AssertionError, and a page of unclosed attribute quotes
(`<a "` repeated) takes it minutes.
"""

from __future__ import annotations

import functools
import html
import re
from collections import Counter

from assay.records.formulas import plain

_BLOCKS = {"p", "div", "br", "li", "ul", "ol", "tr", "td", "th", "table", "pre", "blockquote", "section", "article",
           "figure", "figcaption", "caption", "header", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "dt", "dd"}  # fmt: skip
#: Elements whose content is raw text up to their end tag, never read as words.
_RAW = {"script", "style", "noscript", "template", "textarea", "title", "xmp", "iframe", "noembed", "noframes"}
#: Elements whose content is not read (what they hold is markup, read but not kept).
_HIDDEN = {"head", "mjx-math", "svg"}
#: Classes of `<span>` and `<div>` elements that only draw a formula the page also gives as TeX or MathML (KaTeX,
#: MathJax 2; MathJax 3's `<mjx-container class="MathJax">` holds the MathML that is read).
_DRAWN = {"katex-html", "MathJax_Preview", "MathJax", "MathJax_CHTML", "MathJax_SVG", "MathJax_Display",
          "MJX_Assistive_MathML"}  # fmt: skip
_TEX = "application/x-tex"

#: One token: a comment, a declaration or processing instruction, a tag, or text up to the next `<`.
_TOKEN = re.compile(r"<!--|<![^>]*>?|<\?[^>]*>?|<(/?)([a-zA-Z][-a-zA-Z0-9:._]*)([^<>]*)>|<|[^<]+")
_ATTRIBUTE = re.compile(r"""([^\s/=]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'=]+))?""")


def html_text(page: str) -> str:
    """The words of an HTML page (see the module's docstring)."""
    return _Reader().read(page)


class _Reader:
    """The words read so far, and where the reading is: inside what hidden element, inside which formula."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.hidden: list[str] = []  # the hidden elements open, innermost last
        self.open: Counter[str] = Counter()  # how many of each name ``hidden`` holds
        self.formula: list[str] | None = None  # the text of the MathML symbols of the <math> being read
        self.tex: str | None = None  # the TeX the <math> being read keeps
        self.annotation: list[str] | None = None  # the text of its TeX annotation, while it is read

    def read(self, page: str) -> str:
        at = 0
        while at < len(page):
            m = _TOKEN.match(page, at)
            assert m is not None  # `<` alone and `[^<]+` match wherever the others do not
            token, at = m.group(), m.end()
            if token == "<!--":
                end = page.find("-->", at)
                at = len(page) if end < 0 else end + 3
            elif token.startswith(("<!", "<?")):
                at = at if token.endswith(">") else len(page)
            elif m.group(2):
                at = self.tag(page, at, m.group(1) == "/", m.group(2).lower(), m.group(3))
            else:
                self.text(html.unescape(token))
        self.end_formula()
        return "".join(self.out)

    def tag(self, page: str, at: int, closing: bool, name: str, rest: str) -> int:
        """Read one tag; where reading goes on (after the raw text of a script or style)."""
        if closing:
            self.close(name)
            return at
        attrs = {k.lower(): html.unescape(v.strip("\"'")) for k, v in _ATTRIBUTE.findall(rest)}
        if name == "body" and self.open["head"]:
            self.close("head")  # `</head>` may be left out
        if name in _RAW:
            end = _end_tag(name).search(page, at)
            stop = len(page) if end is None else end.start()
            if name == "script" and attrs.get("type", "").startswith("math/tex") and not self.hidden:
                self.out.append(plain(page[at:stop]))
            return len(page) if end is None else end.end()
        drawn = name in ("span", "div") and _DRAWN & set(attrs.get("class", "").split())
        if self.hidden or name in _HIDDEN or drawn:
            if not rest.rstrip().endswith("/"):
                self.hide(name)
        elif name == "math":
            self.end_formula()
            self.formula, self.tex = [], attrs.get("alttext")
        elif name in ("annotation", "annotation-xml") and self.formula is not None:
            self.annotation = [] if attrs.get("encoding") == _TEX else None
            self.hide(name)  # an annotation is never a symbol of the formula
        elif name in _BLOCKS:
            self.out.append("\n")
        return at

    def hide(self, name: str) -> None:
        self.hidden.append(name)
        self.open[name] += 1

    def close(self, name: str) -> None:
        if self.hidden:
            if self.open[name]:  # close it, and every element left open inside it
                while (inner := self.hidden.pop()) != name:
                    self.open[inner] -= 1
                self.open[name] -= 1
                if name == "annotation" and self.annotation is not None:
                    self.tex = self.tex or "".join(self.annotation)
                    self.annotation = None
        elif name == "math":
            self.end_formula()
        elif name in _BLOCKS:
            self.out.append("\n")

    def text(self, words: str) -> None:
        if self.annotation is not None and self.hidden == ["annotation"]:
            self.annotation.append(words)
        elif self.hidden:
            return
        elif self.formula is not None:
            self.formula.append(words)
        else:
            self.out.append(words)

    def end_formula(self) -> None:
        """Give the <math> being read as its formula: its TeX where it keeps one, else its symbols."""
        if self.formula is not None:
            self.out.append(plain(self.tex if self.tex is not None else "".join(self.formula)))
        self.formula = self.tex = self.annotation = None


@functools.cache
def _end_tag(name: str) -> re.Pattern[str]:
    return re.compile(rf"</{name}\s*>", re.I)
