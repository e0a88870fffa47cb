"""Block YAML of the shape records are written in, read a line at a time: what ``read_marks`` tries first.

A record is a mapping of simple keys whose values are plain, quoted or folded text on their own lines, flow
lists of scalars on one line, and nested block mappings and lists. ``read`` turns such a file into the data and
the flat marks that libyaml's nodes give (``yaml_safe._plain``), at a fraction of their cost: the nodes are
Python objects, two per value, and making them is most of what reading a record costs. Anything else (an
anchor, a tag, a quoted key, a plain scalar over several lines, an escape, a more-indented line in folded
text, a duplicate key, a tab, a character YAML does not print, and every syntax error) returns ``None``, and
libyaml reads the file, with the diagnostics it has always given. Scalars are resolved and constructed by the
safe loader's own resolver and constructors, so ``true``, ``1.5`` and ``2024-01-01`` mean what they meant.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from bisect import bisect_left
from typing import Any

import yaml

#: A line: its indentation, a list item's dash, a simple key and the spaces after its colon, and the rest. Each part
#: is possessive (``*+``): what follows it never needs it shorter, so the matches are those of the plain quantifiers,
#: found without the tries that give characters back (8 % less time over the bench's records).
_ROW = re.compile(r"^( *+)(- ++)?(?:([A-Za-z_][A-Za-z0-9_.-]*+):( ++|$))?(.*+)$", re.M)
#: What YAML does not print, its own line breaks (NEL, LS, PS), a tab, a carriage return and a byte-order mark.
_OTHER_TEXT = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
_OTHER_ASCII = re.compile("[\x00-\x09\x0b-\x1f\x7f]")
#: First characters of a plain scalar YAML reads as something else (or refuses).
_INDICATORS = frozenset(",[]{}#&*!|>'\"%@`?:")
#: A plain scalar in a flow list or mapping may hold none of these.
_FLOW_PLAIN = re.compile(r"[^\[\]{}#:,'\"]*")
_FLOW_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*): +")
_BLOCK_HEAD = re.compile(r"([>|])(-?)(?: +#.*| *)")
STR = "tag:yaml.org,2002:str"
#: The scalars a record may hold (``yaml_safe`` adds mappings and lists).
SCALAR_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "timestamp"))
_RESOLVER = yaml.resolver.Resolver()
#: The resolver's implicit resolvers by the first character of the text they match (``None``: any character): a
#: plain scalar whose first character has none is text.
_FIRSTS = _RESOLVER.yaml_implicit_resolvers
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
#: The longest scalar text whose reading is kept (a file of junk cannot grow what is kept), and how many are.
KEPT_TEXT, _KEPT = 40, 20_000


class _Other(Exception):
    """Not of the shape this reader knows: libyaml reads the file."""


def read(source: str, max_depth: int) -> tuple[dict[str, Any], list[int]] | None:
    """The mapping ``source`` holds and its marks (the line and column of the mapping, then of each key and list
    item in document order), or ``None`` where libyaml must read it; nothing nests deeper than ``max_depth``."""
    if (_OTHER_ASCII if source.isascii() else _OTHER_TEXT).search(source) is not None:
        return None
    reader = _Reader(source, _ROW.findall(source), max_depth)
    if reader.indents[0] != 0 or not reader.rows[0][2] or reader.rows[0][1]:
        return None
    reader.marks = [reader.lines_at[0], 1]
    try:
        data = reader.mapping(0, 0)
    except _Other:
        return None
    return (data, reader.marks) if reader.indents[reader.at] == -1 else None


def _scalar(text: str) -> Any:
    """A plain scalar's value, as the safe loader resolves and makes it (``constructed``)."""
    if text[:1] not in _FIRSTS and None not in _FIRSTS:
        return text
    return _kept_value(text) if len(text) <= KEPT_TEXT else _value(text)


def _value(text: str) -> Any:
    tag = plain_tag(text)
    if tag == STR:
        return text
    if tag not in SCALAR_TAGS:
        raise _Other
    try:
        return constructed(tag, text)
    except Exception as e:  # a timestamp that is no date: libyaml's reading says so
        raise _Other from e


#: The value of each short plain scalar text met lately (most repeat: ids, units, operators).
_kept_value = functools.lru_cache(maxsize=_KEPT)(_value)


def _inline_scalar(text: str) -> Any:
    """The value of the plain or quoted scalar that fills the rest of a line after a key or a list item's dash (never
    empty, a comment, a block scalar's head or a flow)."""
    if text[0] == '"' or text[0] == "'":
        value, end = _quoted(text, 0)
        _tail(text, end)
        return value
    return _plain(text)


#: The value of each short such text met lately.
_kept_inline = functools.lru_cache(maxsize=_KEPT)(_inline_scalar)
#: The first characters of what follows a key or a dash that is no such scalar: a comment, a block scalar's head, a
#: flow.
_NOT_INLINE = frozenset("#>|[{")


@functools.lru_cache(maxsize=_KEPT)
def _flat_list(text: str) -> tuple[tuple[Any, ...], tuple[int, ...]] | None:
    """The items of a short flow list of scalars that fills the rest of its line, with the columns they start at in
    it, kept for the texts met lately; ``None`` for a list that holds a list or a mapping."""
    starts: list[int] = []
    value, end = _flow(text, 0, 0, -1, 0, KEPT_TEXT, starts.append)
    _tail(text, end)
    if any(isinstance(item, (list, dict)) for item in value):
        return None
    return tuple(value), tuple(starts[1::2])


@functools.lru_cache(maxsize=_KEPT)
def plain_tag(text: str) -> str:
    """The tag the safe loader resolves a plain scalar's ``text`` to, kept for the texts met lately: the resolver is
    Python, and most scalars of a knowledge base repeat. Give it only texts up to ``KEPT_TEXT`` long to keep."""
    return _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))


def constructed(tag: str, text: str) -> Any:
    """The value the safe loader makes of a scalar of ``tag`` (one of ``SCALAR_TAGS``), a date as its ISO text (so
    a record's data is plain JSON); raises ``ValueError`` where the text is no such value."""
    value = _CONSTRUCTOR.yaml_constructors[tag](_CONSTRUCTOR, yaml.ScalarNode(tag, text))
    return value.isoformat() if isinstance(value, (dt.date, dt.datetime)) else value


def _quoted(text: str, at: int) -> tuple[str, int]:
    """The quoted scalar at ``text[at]`` if it closes on this line and holds no escape, and where it ends."""
    if text[at] == "'":
        parts, start = [], at + 1
        while True:
            end = text.find("'", start)
            if end < 0:
                raise _Other
            if text.startswith("''", end):
                parts.append(text[start : end + 1])
                start = end + 2
                continue
            parts.append(text[start:end])
            return "".join(parts), end + 1
    end = text.find('"', at + 1)
    if end < 0 or "\\" in text[at + 1 : end]:
        raise _Other
    return text[at + 1 : end], end + 1


def _tail(text: str, at: int) -> None:
    """Nothing but spaces and a comment after a value."""
    rest = text[at:]
    if rest.strip(" ") and not (rest[0] == " " and rest.lstrip(" ")[0] == "#"):
        raise _Other


def _plain(text: str) -> Any:
    """A plain scalar that fills the rest of its line in a block (up to a comment)."""
    first = text[0]
    if first == "-":
        if len(text) == 1 or text[1] in " -":
            raise _Other
    elif first in _INDICATORS:
        raise _Other
    cut = text.find(" #")
    if cut >= 0:
        text = text[:cut]
    text = text.rstrip(" ")
    if ": " in text or text.endswith(":"):
        raise _Other
    return _scalar(text)


def _flow(text: str, at: int, line: int, column: int, depth: int, max_depth: int, mark: Any) -> tuple[Any, int]:
    """The flow list or mapping of scalars (and of such lists and mappings) at ``text[at]``, closed on its line,
    and where it ends; ``mark`` is given the line and column of each item."""
    if depth >= max_depth:
        raise _Other
    mapping = text[at] == "{"
    out: Any = {} if mapping else []
    close, n = "}" if mapping else "]", len(text)
    at += 1
    while True:
        while at < n and text[at] == " ":
            at += 1
        if at == n:
            raise _Other
        if text[at] == close:  # at the start, or after a comma: ``[a, ]`` is one item
            return out, at + 1
        start = at
        if mapping:
            key_match = _FLOW_KEY.match(text, at)
            if key_match is None:
                raise _Other
            key = key_match.group(1)
            if key in out or not isinstance(_scalar(key), str):
                raise _Other
            at = key_match.end()
        if at == n:  # a key with nothing after it on the line (``{a:``): libyaml's to say why
            raise _Other
        mark(line)
        mark(column + start + 1)
        first = text[at]
        if first in "[{":
            value, at = _flow(text, at, line, column, depth + 1, max_depth, mark)
        elif first in "'\"":
            value, at = _quoted(text, at)
        else:
            end = _FLOW_PLAIN.match(text, at).end()
            plain = text[at:end].rstrip(" ")
            if not plain or plain[0] in _INDICATORS or plain[0] == "-":
                raise _Other
            value, at = _scalar(plain), end
        if mapping:
            out[key] = value
        else:
            out.append(value)
        while at < n and text[at] == " ":
            at += 1
        if at < n and text[at] == ",":
            at += 1
        elif at < n and text[at] == close:
            return out, at + 1
        else:
            raise _Other


class _Reader:
    """The lines of one document that hold more than a comment, each cut by ``_ROW`` into its indentation, a list
    item's dash, a key and the rest (``rows``), with its indentation's width (``indents``) and its line number
    (``lines_at``), and the one being read (``at``); past the last one, an end whose indentation is -1."""

    def __init__(self, source: str, rows: list[tuple[str, str, str, str, str]], max_depth: int):
        self.lines_at = [i for i, row in enumerate(rows, 1) if row[1] or row[2] or row[4][:1] not in ("", "#")]
        self.rows = [rows[i - 1] for i in self.lines_at]
        self.indents = [len(row[0]) for row in self.rows]
        self.indents.append(-1)
        self.lines_at.append(len(rows) + 1)
        self.source, self.at, self.max_depth = source, 0, max_depth
        self.lines: list[str] | None = None  # the lines as written, for literal and folded text
        self.marks: list[int] = []

    def node(self, indent: int, depth: int) -> Any:
        if self.rows[self.at][1]:
            return self.sequence(indent, depth, indentless=False)
        return self.mapping(indent, depth)

    def mapping(self, indent: int, depth: int) -> dict[str, Any]:
        if depth >= self.max_depth:
            raise _Other
        out: dict[str, Any] = {}
        rows, indents, lines_at, at = self.rows, self.indents, self.lines_at, self.at
        mark = self.marks.append
        while indents[at] == indent:
            _, dash, key, space, rest = rows[at]
            if not key or dash or key in out:
                raise _Other  # a line that is no key, or a duplicate
            if not isinstance(_scalar(key), str):
                raise _Other  # a key YAML reads as a bool or null: libyaml's reading refuses it
            mark(lines_at[at])
            mark(indent + 1)
            if 0 < len(rest) <= KEPT_TEXT and rest[0] not in _NOT_INLINE:  # most values: a short scalar met before
                out[key] = _kept_inline(rest)
                at += 1
            elif not rest or rest[0] == "#":
                at += 1
                below = indents[at]
                if below > indent:
                    self.at = at
                    out[key] = self.node(below, depth + 1)
                    at = self.at
                elif below == indent and rows[at][1]:
                    self.at = at
                    out[key] = self.sequence(indent, depth + 1, indentless=True)
                    at = self.at
                else:
                    out[key] = None
            elif rest[0] in ">|":
                self.at = at
                out[key] = self.block_scalar(rest, indent)
                at = self.at
            else:
                out[key] = self.inline(rest, lines_at[at], indent + len(key) + 1 + len(space), depth + 1)
                at += 1
        self.at = at
        if indents[at] > indent:
            raise _Other  # a line between two levels, or a plain scalar going on
        return out

    def sequence(self, indent: int, depth: int, indentless: bool) -> list[Any]:
        if depth >= self.max_depth:
            raise _Other
        items: list[Any] = []
        rows, indents, lines_at, at = self.rows, self.indents, self.lines_at, self.at
        mark = self.marks.append
        while indents[at] == indent:
            _, dash, key, space, rest = rows[at]
            if not dash:
                break
            column = indent + len(dash)
            mark(lines_at[at])
            mark(column + 1)
            if key:  # the item's first key, read as a line of its own
                rows[at], indents[at], self.at = ("", "", key, space, rest), column, at
                items.append(self.mapping(column, depth + 1))
                at = self.at
                continue
            if 0 < len(rest) <= KEPT_TEXT and rest[0] not in _NOT_INLINE:
                items.append(_kept_inline(rest))
                at += 1
            elif not rest or rest[0] == "#" or rest[0] == "-" and rest[1:2] in ("", " "):
                raise _Other
            elif rest[0] in ">|":
                self.at = at
                items.append(self.block_scalar(rest, indent))
                at = self.at
            else:
                items.append(self.inline(rest, lines_at[at], column, depth + 1))
                at += 1
        self.at = at
        if indents[at] > indent or (indents[at] == indent and not indentless):
            raise _Other
        return items

    def inline(self, text: str, line: int, column: int, depth: int) -> Any:
        """The value that starts at ``text`` (``column`` of ``line``) and ends on it; a short scalar's or flat flow
        list's is kept (``_kept_inline``, ``_flat_list``)."""
        first = text[0]
        if first != "[" and first != "{":
            return _kept_inline(text) if len(text) <= KEPT_TEXT else _inline_scalar(text)
        if depth >= self.max_depth:
            raise _Other
        known = _flat_list(text) if first == "[" and len(text) <= KEPT_TEXT else None
        if known is None:
            value, end = _flow(text, 0, line, column, depth, self.max_depth, self.marks.append)
            _tail(text, end)
            return value
        mark = self.marks.append
        for start in known[1]:
            mark(line)
            mark(column + start + 1)
        return list(known[0])

    def block_scalar(self, head: str, indent: int) -> str:
        """Literal or folded text, stripped (``|-``, ``>-``) or clipped (``|``, ``>``), on the lines below the
        key, none of them more indented than the first (folding keeps those lines' breaks)."""
        shape = _BLOCK_HEAD.fullmatch(head)
        if shape is None:
            raise _Other
        if self.lines is None:
            self.lines = self.source.split("\n")
        lines, at = self.lines, self.lines_at[self.at]  # the index of the line below
        start = at
        if at >= len(lines) or not lines[at].strip(" "):
            raise _Other  # blank first lines, or none
        first = lines[at]
        own = len(first) - len(first.lstrip(" "))
        if own <= indent:
            raise _Other
        body: list[str] = []
        last, pad, folded, n = at, " " * own, shape.group(1) == ">", len(lines)
        while at < n:
            line = lines[at]
            if line.startswith(pad):
                rest = line[own:]
                if rest[:1] == " " and (folded or not rest.strip(" ")):
                    raise _Other  # more indented in folded text, or a blank line longer than the first
                body.append(rest)
                if rest:
                    last = at
            elif line.strip(" "):
                break
            else:
                body.append("")
            at += 1
        del body[last + 1 - start :]  # the blank lines after the text: chomping's
        if not folded:
            text = "\n".join(body)
        elif "" not in body:
            text = " ".join(body)
        else:
            text = body[0]
            for before, line in zip(body, body[1:], strict=False):
                text += "\n" if not line else line if not before else " " + line
        if not shape.group(2):
            if last + 1 >= len(lines):
                raise _Other  # clipped text at the end of a file without a last line break
            text += "\n"
        self.at = bisect_left(self.lines_at, at + 1)  # the first line below the text that holds more than a comment
        return text
