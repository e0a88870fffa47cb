"""Reading record files: safe YAML that keeps the line and column of every field.

Every problem becomes a diagnostic; nothing here raises on bad input. A record that fails
validation is kept (``Loaded.record`` is None) so the graph can still show it, flagged.
"""

from __future__ import annotations

import datetime as dt
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from assay.diagnostics import Diagnostic, Loc, Pos, bidi_controls
from assay.fingerprints import Stamp
from assay.model import Record, series
from assay.records.outline import Outline

SCHEMA_LINE = "# yaml-language-server: $schema="


MAX_DEPTH = 24


#: The most separators (commas, colons, line ends) a record may hold: each item of a flow list costs one, and the
#: parser builds a node per item before anything is checked. The largest record here has about 7,000; an 8 MiB
#: flow list of 4 million items would cost gigabytes.
MAX_ITEMS = 200_000


_PLAIN_TAGS = {f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp")}


_STR = "tag:yaml.org,2002:str"


class _Refused(Exception):
    def __init__(self, code: str, message: str, mark: yaml.Mark | None, hint: str | None = None):
        super().__init__(message)
        self.code, self.message, self.mark, self.hint = code, message, mark, hint


# libyaml's composer when it is there (several times faster than the pure-Python one); both build the same nodes
_COMPOSER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


_SCALARS = yaml.constructor.SafeConstructor()


class Loaded:
    """One record file as read: its data, where each field sits, the validated record or None.

    What every command needs of a file is kept plain: its path, id, diagnostics (those of the rules within
    the record included, ``assay.records.within``), the model of its valid record, its ``outline`` and a claim's input
    parts. The rest (the data, the positions, the record) is what a page or a diagnostic needs of one file;
    taken from the parse cache it stays one pickled string until first read, so a command over 50,000
    records thaws only the records it looks at.
    """

    __slots__ = (
        "path",
        "folder",
        "diagnostics",
        "unlisted",
        "rules",
        "stamp",
        "_id",
        "_named",
        "_model",
        "_outline",
        "_record_parts",
        "_frozen",
        "_warm",
        "_data",
        "_positions",
        "_record",
    )

    def __init__(
        self,
        path: str,
        folder: str,
        data: dict[str, Any] | None = None,
        positions: dict[Loc, Pos] | None = None,
        record: Record | None = None,
        diagnostics: list[Diagnostic] | None = None,
        unlisted: int = 0,
        record_parts: dict[str, list[tuple[str, str]]] | None = None,
    ):
        self.path, self.folder = path, folder
        self._data, self._positions, self._record = data, positions if positions is not None else {}, record
        #: a claim's input parts that its record holds, by check (``assay.records.parts.claim_record_parts``): made when the
        #: parse is kept in the cache, so a large knowledge base hashes them once per change of the file
        self._record_parts = record_parts if record_parts is not None else {}
        self._frozen: bytes | None = None  # the data, positions and record pickled, where they were kept
        self._warm = False  # whether they are unpickled beside it
        self.diagnostics: list[Diagnostic] = diagnostics if diagnostics is not None else []
        self.unlisted = unlisted  # problems found but not made into diagnostics (see _from_pydantic)
        self.rules: list[Diagnostic] = []  # the diagnostics of the rules within the record (assay.records.within.local)
        self._id: str | None = None
        self._named = False
        self._model: type[Record] | None = None
        self._outline: Outline | None = None
        self.stamp: Stamp | None = None  # what stat said of the file when it was read, where the cache may keep it

    def seal(self, outline: Outline | None, rules: Callable[[Loaded], list[Diagnostic]]) -> None:
        """Keep what every command needs of the file once it is read: its id, model, the ``outline`` of its record
        and the diagnostics of the ``rules`` within it (``assay.records.within.local``)."""
        value = (self._data or {}).get("id")
        self._named = isinstance(value, str) and series(value) is not None
        self._id = value if self._named else Path(self.path).stem
        self._model = type(self._record) if self._record is not None else None
        self._outline = outline
        self.rules = rules(self)

    def __getstate__(self) -> tuple:
        frozen = self._frozen
        if frozen is None:  # made here, or changed since it was kept
            frozen = pickle.dumps((self._data, self._positions, self._record), pickle.HIGHEST_PROTOCOL)
        return (
            self.path,
            self.folder,
            self.diagnostics,
            self.unlisted,
            self.rules,
            self.id,
            self.named,
            self.model,
            self.outline,
            self._record_parts,
            self.stamp,
            frozen,
        )

    def __setstate__(self, state: tuple) -> None:
        (
            self.path,
            self.folder,
            self.diagnostics,
            self.unlisted,
            self.rules,
            self._id,
            self._named,
            self._model,
            self._outline,
            self._record_parts,
            self.stamp,
            self._frozen,
        ) = state
        self._warm = False

    def _thaw(self) -> None:
        if self._frozen is not None and not self._warm:
            self._data, self._positions, self._record = pickle.loads(self._frozen)
            self._warm = True

    def freeze(self) -> None:
        """Keep the data, positions and record only pickled from now on, until next read: a command that walks
        every record of a large knowledge base holds one at a time."""
        if self._frozen is None:
            self._frozen = pickle.dumps((self._data, self._positions, self._record), pickle.HIGHEST_PROTOCOL)
        self._data, self._positions, self._record, self._warm = None, {}, None, False

    @property
    def data(self) -> dict[str, Any] | None:
        self._thaw()
        return self._data

    @data.setter
    def data(self, value: dict[str, Any] | None) -> None:
        self._thaw()
        self._data, self._frozen = value, None

    @property
    def positions(self) -> dict[Loc, Pos]:
        self._thaw()
        return self._positions

    @positions.setter
    def positions(self, value: dict[Loc, Pos]) -> None:
        self._thaw()
        self._positions, self._frozen = value, None

    @property
    def record(self) -> Record | None:
        self._thaw()
        return self._record

    @record.setter
    def record(self, value: Record | None) -> None:
        self._thaw()
        self._record, self._frozen = value, None

    @property
    def record_parts(self) -> dict[str, list[tuple[str, str]]]:
        return self._record_parts

    @record_parts.setter
    def record_parts(self, value: dict[str, list[tuple[str, str]]]) -> None:
        self._record_parts = value

    @property
    def model(self) -> type[Record] | None:
        """The model of the file's valid record (Claim, Source, Decision), or None when it did not validate."""
        return self._model

    @property
    def outline(self) -> Outline | None:
        """What the valid record names outside itself, and its title (``assay.records.outline.Outline``); None when invalid."""
        return self._outline

    @property
    def id(self) -> str:
        """The record's id as written, or the file stem when it has none of a known series' shape.

        The key of the file in the graph, the site's paths and the CLI: a malformed id (`' SOTA-364'`,
        `'SOTA-３６８'`, `'SOTA-1/../x'`) never becomes one; it is reported as bad-id where it is written.
        """
        if self._id is not None:
            return self._id
        value = (self.data or {}).get("id")
        return value if isinstance(value, str) and series(value) else Path(self.path).stem

    @property
    def named(self) -> bool:
        """Whether the file goes by the id its record writes (else by its stem: the id is missing or malformed)."""
        if self._id is not None:
            return self._named
        value = (self.data or {}).get("id")
        return isinstance(value, str) and series(value) is not None

    def where(self, loc: Loc) -> Pos:
        """Line and column of the deepest known prefix of ``loc``."""
        positions = self.positions
        for n in range(len(loc), -1, -1):
            if loc[:n] in positions:
                return positions[loc[:n]]
        return (1, 1)

    def diag(self, loc: Loc, code: str, message: str, hint: str | None = None) -> Diagnostic:
        line, col = self.where(loc)
        return Diagnostic(self.path, line, col, code, message, hint)


def read_yaml(text: bytes, path: str) -> tuple[Any, dict[Loc, Pos], list[Diagnostic]]:
    """Parse one YAML document into plain data and a map from field paths to (line, column)."""
    try:
        source = text.decode("utf-8")
    except UnicodeDecodeError as e:
        line = text[: e.start].count(b"\n") + 1
        col = e.start - (text.rfind(b"\n", 0, e.start) + 1) + 1
        return (
            None,
            {},
            [Diagnostic(path, line, col, "not-utf8", f"byte 0x{text[e.start]:02x} is not UTF-8", "save the file as UTF-8")],
        )
    positions: dict[Loc, Pos] = {}
    items = source.count(",") + source.count(":") + source.count("\n")  # a bound on the nodes, counted in C
    if items > MAX_ITEMS:
        return (
            None,
            {},
            [
                Diagnostic(
                    path,
                    1,
                    1,
                    "yaml-too-large",
                    f"holds {items:,} items, over the {MAX_ITEMS:,} a record may have",
                    "a record is a page of fields, not data: keep data in files the verifier reads",
                )
            ],
        )
    bidi = bidi_controls(source, path)
    try:
        node = yaml.compose(source, Loader=_COMPOSER)
        data = _plain(node, (), positions, 0, {}) if node is not None else None
    except _Refused as e:
        line, col = (e.mark.line + 1, e.mark.column + 1) if e.mark else (1, 1)
        return None, {}, [Diagnostic(path, line, col, e.code, e.message, e.hint)]
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        if e.context == "expected a single document in the stream":  # the catalogue files this under not-mapping
            return (
                None,
                {},
                [
                    Diagnostic(
                        path,
                        line,
                        col,
                        "yaml-not-mapping",
                        "the file holds several documents",
                        "a record is one mapping; put each record in its own file",
                    )
                ],
            )
        message = " ".join(p for p in (e.context, e.problem) if p)
        code = "yaml-too-deep" if "nesting depth" in message else "yaml-syntax"  # libyaml's own depth limit
        return None, {}, [Diagnostic(path, line, col, code, message or "the YAML does not parse")]
    except (yaml.YAMLError, RecursionError, ValueError) as e:  # reader errors (control characters), deep nesting
        code = "yaml-too-deep" if isinstance(e, RecursionError) else "yaml-syntax"
        return None, {}, [Diagnostic(path, 1, 1, code, str(e).splitlines()[0] if str(e) else "the YAML does not parse")]
    if not isinstance(data, dict):
        got = "an empty file" if data is None else f"a {_type_name(data)}"
        return None, positions, [Diagnostic(path, 1, 1, "yaml-not-mapping", f"a record must be a mapping of fields (got {got})")]
    return data, positions, bidi


# Field paths and positions repeat across records (every claim has ('checks', 0, 'id')): one tuple each
# saves a third of a loaded record's memory. Bounded, so a file of junk keys cannot grow them without end.
_SHARED: dict[tuple[Any, ...], tuple[Any, ...]] = {}


_SHARED_MAX = 200_000


def _shared(t: tuple[Any, ...]) -> tuple[Any, ...]:
    found = _SHARED.get(t)
    if found is None:
        if len(_SHARED) >= _SHARED_MAX:
            return t
        found = _SHARED[t] = t
    return found


def _plain(node: yaml.Node, loc: Loc, positions: dict[Loc, Pos], depth: int, seen: dict[int, int]) -> Any:
    """Turn a composed node into dicts, lists and scalars, recording positions and refusing tags and aliases.

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
    if node.tag not in _PLAIN_TAGS:
        raise _Refused("yaml-tag", f"tag '{node.tag}' is not allowed", mark, "remove the tag; records are plain data")
    positions[_shared(loc)] = _shared((mark.line + 1, mark.column + 1))
    if node.tag == _STR and type(node) is yaml.ScalarNode:
        return node.value  # what the str constructor returns, without its three calls (most scalars are text)
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if type(key_node) is yaml.ScalarNode and key_node.tag == _STR and id(key_node) not in seen and depth < MAX_DEPTH:
                seen[id(key_node)] = key_node.start_mark.line + 1  # the usual key, as the call below would read it
                key = key_node.value
            else:
                key = _plain(key_node, loc + ("<key>",), {}, depth + 1, seen)
            if not isinstance(key, str):
                raise _Refused("yaml-syntax", f"key {key!r} is not a string", key_node.start_mark, "field names are plain words")
            if key in out:
                first = positions[loc + (key,)]
                raise _Refused(
                    "yaml-duplicate-key",
                    f"key '{key}' repeats the one on line {first[0]}",
                    key_node.start_mark,
                    "keep one of the two",
                )
            try:
                out[key] = _plain(value_node, loc + (key,), positions, depth + 1, seen)
            except _Refused as e:
                e.mark = e.mark or key_node.start_mark  # an alias has no mark of its own: point at its key
                raise
            # a field's diagnostics point at its key, which is where the reader looks
            positions[_shared(loc + (key,))] = _shared((key_node.start_mark.line + 1, key_node.start_mark.column + 1))
        return out
    if isinstance(node, yaml.SequenceNode):
        items = []
        for i, item in enumerate(node.value):
            try:
                items.append(_plain(item, loc + (i,), positions, depth + 1, seen))
            except _Refused as e:
                e.mark = e.mark or node.start_mark
                raise
        return items
    value = _SCALARS.yaml_constructors[node.tag](_SCALARS, node)
    return value.isoformat() if isinstance(value, (dt.date, dt.datetime)) else value


def _type_name(value: Any) -> str:
    return {dict: "mapping", list: "list", str: "string", bool: "bool", int: "int", float: "float"}.get(
        type(value), type(value).__name__ if value is not None else "null"
    )
