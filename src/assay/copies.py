"""A local copy of a source's text, read as plain text: a text file, an HTML page or a LaTeX source.

What a copy's words are is read here; how they are compared with a passage is ``assay.records.passages``. HTML
loses its markup (scripts and styles with it) and keeps a line break where a block ends; LaTeX loses its comments,
commands and braces and keeps what they hold, with its quote marks and dashes typeset (``` `` ''``` as “ ”, `--` as
–). A LaTeX citation (`\\cite{...}`) is typeset by BibTeX, not here, so a passage holding one is found only in
a text or HTML copy. PDF is not read: no PDF text library is among Assay's dependencies; save the PDF's text
(with `pdftotext`, say) and pass that.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from assay.diagnostics import UsageProblem

#: The largest copy read, in bytes: a book's text is a few MiB.
MAX_BYTES = 64 * 1024 * 1024

_SUFFIXES = {".html": "html", ".htm": "html", ".xhtml": "html", ".tex": "latex", ".pdf": "pdf"}


@dataclass(frozen=True)
class SourceCopy:
    """A copy as read: its file's name, its SHA-256, how it was read, and its text."""

    name: str
    sha256: str
    format: str  # text, html or latex
    text: str


def read(path: Path) -> SourceCopy:
    """The copy at ``path``; a usage problem when it cannot be read, is a PDF, or is not UTF-8."""
    fmt = _SUFFIXES.get(path.suffix.lower(), "text")
    if fmt == "pdf":
        raise UsageProblem(
            f"{path}: PDF copies are not read yet (no PDF text library is installed); save its text, with "
            "pdftotext say, and pass that, or pass the arXiv HTML or LaTeX source"
        )
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except OSError as e:
        raise UsageProblem(f"{path}: cannot be read ({e.strerror or e})") from None
    if len(raw) > MAX_BYTES:
        raise UsageProblem(f"{path}: larger than {MAX_BYTES // 2**20} MiB; no source's text is")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UsageProblem(f"{path}: not UTF-8 text; save the copy as UTF-8") from None
    if fmt == "text" and re.match(r"\s*<(?:!doctype html|html)", text, re.I):
        fmt = "html"
    words = html_text(text) if fmt == "html" else latex_text(text) if fmt == "latex" else text
    return SourceCopy(path.name, hashlib.sha256(raw).hexdigest(), fmt, words)


_BLOCKS = {"p", "div", "br", "li", "ul", "ol", "tr", "td", "th", "table", "pre", "blockquote", "section", "article",
           "figure", "figcaption", "caption", "header", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "dt", "dd"}  # fmt: skip
_HIDDEN = {"script", "style", "noscript", "template", "head"}


class _Words(HTMLParser):
    """The text of an HTML page: what its elements hold, a line break where a block begins or ends."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.hidden += tag in _HIDDEN
        if tag in _BLOCKS:
            self.out.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN and self.hidden:
            self.hidden -= 1
        if tag in _BLOCKS:
            self.out.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.out.append(data)


def html_text(page: str) -> str:
    """The words of an HTML page."""
    parser = _Words()
    parser.feed(page)
    parser.close()
    return "".join(parser.out)


_LATEX = [
    (re.compile(r"(?<!\\)%[^\n]*"), ""),  # a comment, to the end of its line
    (re.compile(r"[ \t]*~?\\(?:cite[a-z]*|ref|eqref|label|url)\*?(?:\[[^\]]*\])*\{[^}]*\}"), ""),  # typeset by others
    (re.compile(r"``"), "“"),
    (re.compile(r"''"), "”"),
    (re.compile(r"`"), "‘"),
    (re.compile(r"---"), "—"),
    (re.compile(r"--"), "–"),
    (re.compile(r"\\\\|~"), " "),
    (re.compile(r"\\([%&_#$])"), r"\1"),
    (re.compile(r"\\[a-zA-Z]+\*?(?:\[[^\]]*\])?"), ""),  # a command; what its braces hold stays
    (re.compile(r"[{}]"), ""),
]


def latex_text(source: str) -> str:
    """The words of a LaTeX source, roughly as typeset (see the module's docstring)."""
    for pattern, replacement in _LATEX:
        source = pattern.sub(replacement, source)
    return source
