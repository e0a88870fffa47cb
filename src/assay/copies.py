"""A local copy of a source's text, read as plain text: a text file, an HTML page, a LaTeX source or a PDF.

What a copy's words are is read here; how they are compared with a passage is ``assay.records.passages``. HTML
loses its markup (scripts and styles with it) and keeps a line break where a block ends; LaTeX loses its comments,
commands and braces and keeps what they hold, with its quote marks and dashes typeset (``` `` ''``` as “ ”, `--` as
–). A LaTeX citation (`\\cite{...}`) is typeset by BibTeX, not here, so a passage holding one is found only in
a text or HTML copy. A PDF's text is extracted by ``pypdf``, page after page in its reading order: a layout with
columns, footnotes or figures inside a sentence can split a passage where the HTML or LaTeX source would not.
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
    """The copy at ``path``; a usage problem when it cannot be read, is not UTF-8, or is a PDF with no text."""
    fmt = _SUFFIXES.get(path.suffix.lower(), "text")
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except OSError as e:
        raise UsageProblem(f"{path}: cannot be read ({e.strerror or e})") from None
    if len(raw) > MAX_BYTES:
        raise UsageProblem(f"{path}: larger than {MAX_BYTES // 2**20} MiB; no source's text is")
    if fmt == "pdf" or raw.startswith(b"%PDF-"):
        return SourceCopy(path.name, hashlib.sha256(raw).hexdigest(), "pdf", pdf_text(path, raw))
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


def pdf_text(path: Path, raw: bytes) -> str:
    """The text of a PDF, its pages one after another; a usage problem when it has none to give."""
    import io

    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        text = "\n".join(page.extract_text() or "" for page in PdfReader(io.BytesIO(raw)).pages)
    except (PdfReadError, ValueError, KeyError, OSError) as e:
        raise UsageProblem(f"{path}: cannot be read as a PDF ({e}); pass its HTML or LaTeX source instead") from None
    if not text.strip():
        raise UsageProblem(f"{path}: the PDF holds no text (a scan?); pass its HTML or LaTeX source instead")
    return text


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
