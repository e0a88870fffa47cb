"""The words of a Markdown copy: its line markup gone, read one line at a time (linear in its length).

What begins a line in Markdown and does not show on the rendered page goes: a heading's `#`s (and the `#`s that may
close it), a block quote's `>`s, a list item's bullet (`-`, `*`, `+`), a fence of backquotes or tildes, and a line
that only draws a rule or underlines a heading (`---`, `===`, `***`). A numbered item's number stays: a page shows
it. Inline markup (emphasis, code, links, entities, escapes) is compared away on both sides of every comparison,
copy and quote alike, by ``assay.records.passages.normalise``; a passage holds no line starts, so this part of the
rule is the copy's alone.
"""

from __future__ import annotations

import re

#: What opens a line and is markup: block quotes' `>`s, then a heading's `#`s or a list item's bullet.
_OPENING = re.compile(r"^[ \t]*(?:>[ \t]?)*[ \t]*(?:#{1,6}(?=[ \t]|$)|[-*+](?=[ \t]))?")
#: A heading's closing `#`s: after a space, at the end of the line.
_CLOSING = re.compile(r"[ \t]+#+[ \t]*$")
#: A line that only draws a rule, underlines a heading or fences code.
_DRAWN = re.compile(r"^[ \t]*(?:(?:[-*_][ \t]*){3,}|=+[ \t]*|-+[ \t]*|(?:`{3,}|~{3,}).*)$")


def markdown_text(text: str) -> str:
    """The words of a Markdown copy (see the module's docstring), its line breaks kept."""
    return "\n".join(_line(line) for line in text.split("\n"))


def _line(line: str) -> str:
    if _DRAWN.match(line):
        return ""
    opening = _OPENING.match(line)
    rest = line[opening.end() :] if opening else line
    if opening and "#" in opening.group():
        rest = _CLOSING.sub("", rest)
    return rest
