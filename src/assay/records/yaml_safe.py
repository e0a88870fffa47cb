"""Safe YAML that keeps the line and column of every value: what a record file is read with.

Only plain data: a mapping at the top, strings, numbers, booleans, nulls, dates, lists and mappings; an alias,
a tag, a duplicate key, a key that is not a string, nesting deeper than ``MAX_DEPTH`` or more than
``MAX_ITEMS`` values is refused with a diagnostic. The positions are kept flat (``read_marks``) and made into
a map from field path to position only where a diagnostic or a page asks (``positions_of``).
"""

from __future__ import annotations

import functools
from array import array
from typing import Any

import yaml

from assay.diagnostics import Diagnostic, Loc, Pos, bidi_controls
from assay.records import yaml_lines

SCHEMA_LINE = "# yaml-language-server: $schema="


MAX_DEPTH = 24


#: The most separators (commas, colons, line ends) a record may hold: each item of a flow list costs one, and the
#: parser builds a node per item before anything is checked. The largest record here has about 7,000; an 8 MiB
#: flow list of 4 million items would cost gigabytes.
MAX_ITEMS = 200_000


_PLAIN_TAGS = yaml_lines.SCALAR_TAGS | {"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"}
#: The tags each kind of node may have, and its name: ``!!map`` on a scalar would make a constructor's generator.
_FITS = {
    yaml.ScalarNode: (yaml_lines.SCALAR_TAGS, "scalar"),
    yaml.MappingNode: ({"tag:yaml.org,2002:map"}, "mapping"),
    yaml.SequenceNode: ({"tag:yaml.org,2002:seq"}, "list"),
}


_STR = yaml_lines.STR


class _Refused(Exception):
    def __init__(self, code: str, message: str, mark: yaml.Mark | None, hint: str | None = None):
        super().__init__(message)
        self.code, self.message, self.mark, self.hint = code, message, mark, hint


_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml where it is there: the same nodes, several times faster


def read_yaml(text: bytes, path: str) -> tuple[Any, dict[Loc, Pos], list[Diagnostic]]:
    """Parse one YAML document into plain data and a map from field paths to (line, column)."""
    data, marks, diags = read_marks(text, path)
    return data, marks if isinstance(marks, dict) else positions_of(data, marks), diags


def read_marks(text: bytes, path: str) -> tuple[Any, bytes | dict[Loc, Pos], list[Diagnostic]]:
    """``read_yaml``, the positions of a mapping left flat: the line and column of its root, then of each field
    (its key) and list item in document order, as unsigned ints (``positions_of`` makes the map of them).

    Making the map costs as much as the rest of turning nodes into data, and only a file with a diagnostic, or
    a page that links into it, reads it. The positions of a document that is not a mapping come made."""
    try:
        source = text.decode("utf-8")
    except UnicodeDecodeError as e:
        line = text[: e.start].count(b"\n") + 1
        col = e.start - (text.rfind(b"\n", 0, e.start) + 1) + 1
        return _refusal(path, line, col, "not-utf8", f"byte 0x{text[e.start]:02x} is not UTF-8", "save the file as UTF-8")
    items = source.count(",") + source.count(":") + source.count("\n")  # a bound on the nodes, counted in C
    if items > MAX_ITEMS:
        hint = "a record is a page of fields, not data: keep data in files the verifier reads"
        return _refusal(path, 1, 1, "yaml-too-large", f"holds {items:,} items, over the {MAX_ITEMS:,} a record may have", hint)
    bidi = bidi_controls(source, path)
    quick = yaml_lines.read(source, MAX_DEPTH)  # most records, without libyaml's nodes
    if quick is not None:
        return quick[0], array("I", quick[1]).tobytes(), bidi
    try:
        data, marks = libyaml_marks(source)
    except _Refused as e:
        line, col = (e.mark.line + 1, e.mark.column + 1) if e.mark else (1, 1)
        return _refusal(path, line, col, e.code, e.message, e.hint)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        if e.context == "expected a single document in the stream":  # the catalogue files this under not-mapping
            hint = "a record is one mapping; put each record in its own file"
            return _refusal(path, line, col, "yaml-not-mapping", "the file holds several documents", hint)
        message = " ".join(p for p in (e.context, e.problem) if p)
        code = "yaml-too-deep" if "nesting depth" in message else "yaml-syntax"  # libyaml's own depth limit
        return _refusal(path, line, col, code, message or "the YAML does not parse")
    except (yaml.YAMLError, RecursionError, ValueError) as e:  # reader errors (control characters), deep nesting
        code = "yaml-too-deep" if isinstance(e, RecursionError) else "yaml-syntax"
        return _refusal(path, 1, 1, code, str(e).splitlines()[0] if str(e) else "the YAML does not parse")
    flat = array("I", marks).tobytes()
    if not isinstance(data, dict):
        got = "an empty file" if data is None else f"a {type_name(data)}"
        return (
            None,
            positions_of(data, flat),
            [Diagnostic(path, 1, 1, "yaml-not-mapping", f"a record must be a mapping of fields (got {got})")],
        )
    return data, flat, bidi


def _refusal(
    path: str, line: int, col: int, code: str, message: str, hint: str | None = None
) -> tuple[None, dict, list[Diagnostic]]:
    """What ``read_marks`` gives for a file it refuses: no data, no positions, the one diagnostic."""
    return None, {}, [Diagnostic(path, line, col, code, message, hint)]


def libyaml_marks(source: str) -> tuple[Any, list[int]]:
    """The data of ``source`` and its marks (``read_marks``) as libyaml's nodes give them: the reading of every
    file ``yaml_lines`` leaves, and what its reading is held to. Raises on what a record may not hold."""
    if "&" in source:  # an anchor alone is refused too; the nodes keep no anchor, so its token is looked for
        _refuse_anchors(source)
    node = yaml.compose(source, Loader=_BASE)
    if node is None:
        return None, []
    marks = [node.start_mark.line + 1, node.start_mark.column + 1]
    return _plain(node, marks, 0, {}), marks


def _refuse_anchors(source: str) -> None:
    """Raise ``_Refused`` (yaml-alias) at the first anchor (``&t``) of ``source``: records spell every value out, and an
    anchor is there for an alias to repeat. libyaml's scanner finds it as a token, never in a quoted ``R&D``."""
    for token in yaml.scan(source, Loader=_BASE):
        if isinstance(token, yaml.AnchorToken):
            raise _Refused(
                "yaml-alias",
                f"an anchor (&{token.value}) names a value for an alias to repeat",
                token.start_mark,
                "remove the anchor; records spell every value out",
            )


def positions_of(data: Any, marks: bytes) -> dict[Loc, Pos]:
    """The map from field paths to (line, column) that the flat ``marks`` of ``data`` stand for (``read_marks``):
    the data's mappings and lists are its nodes', in the same order, so walking them meets the marks in turn."""
    flat = array("I")
    flat.frombytes(marks)
    if len(flat) < 2:
        return {}
    positions: dict[Loc, Pos] = {(): _shared((flat[0], flat[1]))}
    at = 2

    def walk(loc: Loc, value: Any) -> None:  # depth first, children in order: the order _plain records them in
        nonlocal at
        for key, child in value.items() if type(value) is dict else enumerate(value):
            here = _shared(loc + (key,))
            positions[here] = _shared((flat[at], flat[at + 1]))
            at += 2
            if type(child) is dict or type(child) is list:
                walk(here, child)

    if type(data) is dict or type(data) is list:
        walk((), data)
    return positions


# Field paths and positions repeat across records (every claim has ('checks', 0, 'id')): one tuple each
# saves a third of a loaded record's memory. Bounded, so a file of junk keys cannot grow them without end.
@functools.lru_cache(maxsize=200_000)
def _shared(t: tuple[Any, ...]) -> tuple[Any, ...]:
    return t


def _plain(node: yaml.Node, marks: list[int], depth: int, seen: dict[int, int]) -> Any:
    """Turn a composed node into dicts, lists and scalars, refusing tags and aliases, and appending to ``marks``
    the line and column of each of its fields (its key: a field's diagnostics point at its key, which is where
    the reader looks) and list items, each before those within it (``read_marks``).

    The composer does not expand an alias: it hands back the anchored node again. Meeting a node twice is
    how an alias shows, and refusing it there is what keeps an anchor bomb from expanding.
    """
    if id(node) in seen:
        raise _Refused(
            "yaml-alias", f"an alias repeats the value anchored on line {seen[id(node)]}", None, "write the value out in full"
        )
    mark = node.start_mark
    seen[id(node)] = mark.line + 1
    if depth > MAX_DEPTH:
        raise _Refused("yaml-too-deep", f"nesting deeper than {MAX_DEPTH} levels", mark)
    tag = node.tag
    if tag not in _PLAIN_TAGS:
        raise _Refused("yaml-tag", f"tag '{tag}' is not allowed", mark, "remove the tag; records are plain data")
    fits, kind = _FITS[type(node)]
    if tag not in fits:
        raise _Refused("yaml-tag", f"tag '{tag}' does not fit a {kind}", mark, "remove the tag; records are plain data")
    if type(node) is yaml.ScalarNode and tag == _STR:
        return node.value  # what the str constructor returns, without its three calls (most scalars are text)
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        lines: dict[str, int] = {}  # the line of each key, for a duplicate's message
        for key_node, value_node in node.value:
            at = key_node.start_mark
            if type(key_node) is yaml.ScalarNode and key_node.tag == _STR and id(key_node) not in seen and depth < MAX_DEPTH:
                seen[id(key_node)] = at.line + 1  # the usual key, as the call below would read it
                key = key_node.value
            else:
                key = _plain(key_node, [], depth + 1, seen)
            if not isinstance(key, str):
                raise _Refused("yaml-syntax", f"key {key!r} is not a string", at, "field names are plain words")
            if key in lines:
                why = f"key '{key}' repeats the one on line {lines[key]}"
                raise _Refused("yaml-duplicate-key", why, at, "keep one of the two")
            lines[key] = at.line + 1
            marks += (at.line + 1, at.column + 1)
            try:
                out[key] = _plain(value_node, marks, depth + 1, seen)
            except _Refused as e:
                e.mark = e.mark or at  # an alias has no mark of its own: point at its key
                raise
        return out
    if isinstance(node, yaml.SequenceNode):
        items = []
        for item in node.value:
            marks += (item.start_mark.line + 1, item.start_mark.column + 1)
            try:
                items.append(_plain(item, marks, depth + 1, seen))
            except _Refused as e:
                e.mark = e.mark or node.start_mark
                raise
        return items
    return yaml_lines.constructed(tag, node.value)


def type_name(value: Any) -> str:
    return {dict: "mapping", list: "list", str: "string", bool: "bool", int: "int", float: "float"}.get(
        type(value), type(value).__name__ if value is not None else "null"
    )
