"""A local copy of a source's text, read as plain text: a text file, a Markdown file, an HTML page, a LaTeX source or
a PDF.

What a copy's words are is read here; how they are compared with a passage is ``assay.records.passages``. HTML
loses its markup (scripts and styles with it) and keeps a line break where a block ends (``assay.copies.webpage``);
LaTeX loses its comments, commands and braces and keeps what they hold, with its quote marks and dashes typeset
(``assay.copies.latex``); Markdown (`.md`) loses the markup that opens its lines, headings, bullets and block quotes
(``assay.copies.markdown``), and its inline markup is compared away on both sides (``assay.records.passages``). A
formula, in HTML or LaTeX, is its symbols (``assay.records.formulas``). A LaTeX citation (`\\cite{...}`) is typeset
by BibTeX, not here, so a passage holding one is found only in a text, Markdown or HTML copy.
Every reader takes time linear in the copy, which is at most ``MAX_BYTES``; a copy that cannot be read is a usage
problem that names the file, never a crash.

A PDF's text is extracted by ``pypdf``, page after page in its reading order: a layout with columns, footnotes or
figures inside a sentence can split a passage where the HTML or LaTeX source would not. ``pypdf`` parses a file
that may be malformed; whatever it raises is that usage problem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from assay.copies.latex import latex_text
from assay.copies.markdown import markdown_text
from assay.copies.webpage import html_text
from assay.diagnostics import UsageProblem
from assay.fingerprints import sha256

__all__ = ["MAX_BYTES", "SourceCopy", "html_text", "latex_text", "markdown_text", "pdf_text", "read"]

#: The largest copy read, in bytes: a book's text is a few MiB.
MAX_BYTES = 64 * 1024 * 1024

_SUFFIXES = {
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".tex": "latex",
    ".md": "markdown",
    ".markdown": "markdown",
    ".pdf": "pdf",
}
#: How the text of each format is read (a text file is its text).
_READERS = {"html": html_text, "latex": latex_text, "markdown": markdown_text}


@dataclass(frozen=True)
class SourceCopy:
    """A copy as read: its file's name, its SHA-256, how it was read, and its text."""

    name: str
    sha256: str
    format: str  # text, markdown, html, latex or pdf
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
        return SourceCopy(path.name, sha256(raw), "pdf", pdf_text(path, raw))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UsageProblem(f"{path}: not UTF-8 text; save the copy as UTF-8") from None
    if fmt == "text" and re.match(r"\s*<(?:!doctype html|html)", text, re.I):
        fmt = "html"
    words = _READERS[fmt](text) if fmt in _READERS else text
    return SourceCopy(path.name, sha256(raw), fmt, words)


def pdf_text(path: Path, raw: bytes) -> str:
    """The text of a PDF, its pages one after another; a usage problem when it has none to give."""
    import io

    from pypdf import PdfReader

    try:
        text = "\n".join(page.extract_text() or "" for page in PdfReader(io.BytesIO(raw)).pages)
    except Exception as e:  # noqa: BLE001 - a parser of untrusted bytes: any fault of the file is the file's
        why = next(iter(str(e).splitlines()), "")[:200] or type(e).__name__
        raise UsageProblem(f"{path}: cannot be read as a PDF ({why}); pass its HTML or LaTeX source instead") from None
    if not text.strip():
        raise UsageProblem(f"{path}: the PDF holds no text (a scan?); pass its HTML or LaTeX source instead")
    return text
