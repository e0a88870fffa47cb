"""Reading record files: safe YAML that keeps the line and column of every field.

Every problem becomes a diagnostic; nothing here raises on bad input. A record that fails
validation is kept (``Loaded.record`` is None) so the graph can still show it, flagged.
"""

from __future__ import annotations

import datetime as dt
import difflib
import errno
import gc
import heapq
import multiprocessing as mp
import os
import pickle
import stat
import threading
import unicodedata
from collections.abc import Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from assay.cache import CACHE_FROM, ParseCache, Stamp, stamp
from assay.diagnostics import PER_FILE, Diagnostic
from assay.model import MODELS, SERIES, Claim, Decision, Record, Source, series
from assay.rules import Outline
from assay.rules import local as local_rules
from assay.rules import outline as outline_of

Loc = tuple[str | int, ...]
Pos = tuple[int, int]

SCHEMA_LINE = "# yaml-language-server: $schema="
MAX_DEPTH = 24
#: The largest file Assay reads from a knowledge base (records, verifiers, ledgers, figures).
MAX_BYTES = 8 * 2**20
_PLAIN_TAGS = {f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp")}
_STR = "tag:yaml.org,2002:str"


class _Refused(Exception):
    def __init__(self, code: str, message: str, mark: yaml.Mark | None, hint: str | None = None):
        super().__init__(message)
        self.code, self.message, self.mark, self.hint = code, message, mark, hint


class Unreadable(Exception):
    """A file in the knowledge base that Assay will not read, and why (a diagnostic's message)."""


def read_regular(root: Path, path: Path, limit: int = MAX_BYTES) -> bytes:
    """The bytes of ``path``, which must be a regular file whose resolved path lies inside ``root``.

    The one rule for every file Assay reads from a knowledge base: a symlink that leads outside
    (to a secret, a device) is refused, so is anything that is not a regular file (a FIFO would
    hang, a character device never end) and anything over ``limit`` bytes. Raises ``Unreadable``.
    """
    root = Path(root).resolve()
    try:
        resolved = Path(path).resolve(strict=True)
    except (OSError, RuntimeError) as e:  # missing, a symlink loop (RuntimeError before Python 3.13, ELOOP after)
        why = "a symlink loop" if isinstance(e, RuntimeError) or e.errno == errno.ELOOP else e.strerror
        raise Unreadable(f"cannot be read ({why})") from None
    if not resolved.is_relative_to(root):
        raise Unreadable("is a link to a file outside the knowledge base")
    return _read_open(str(resolved), 0, limit)


def read_in(folder: str, name: str, limit: int = MAX_BYTES) -> bytes:
    """``read_regular`` for a file named ``name`` in ``folder``, a resolved folder already known to lie
    inside the root: the file itself must not be a link (``O_NOFOLLOW``), so nothing is resolved."""
    return _read_open(os.path.join(folder, name), getattr(os, "O_NOFOLLOW", 0), limit)


def _read_open(path: str, flags: int, limit: int) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | flags)
    except OSError as e:
        why = "it is a link" if e.errno == errno.ELOOP else e.strerror
        raise Unreadable(f"cannot be read ({why})") from None
    try:
        info = os.fstat(fd)  # of what was opened, so a swap after resolve() is caught too
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable("is not a regular file" + (" (a directory)" if stat.S_ISDIR(info.st_mode) else ""))
        if info.st_size > limit:
            raise Unreadable(f"is {info.st_size / 2**20:.1f} MiB, more than the {limit / 2**20:g} MiB Assay reads")
        chunks, size = [], 0
        while size <= limit and (chunk := os.read(fd, 1 << 20)):
            chunks.append(chunk)
            size += len(chunk)
        data = b"".join(chunks)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise Unreadable(f"grew past the {limit / 2**20:g} MiB Assay reads")
    return data


# libyaml's composer when it is there (several times faster than the pure-Python one); both build the same nodes
_COMPOSER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SCALARS = yaml.constructor.SafeConstructor()


class Loaded:
    """One record file as read: its data, where each field sits, the validated record or None.

    What every command needs of a file is kept plain: its path, id, diagnostics (those of the rules within
    the record included, ``assay.rules``), the model of its valid record, its ``outline`` and a claim's input
    parts. The rest (the data, the positions, the record) is what a page or a diagnostic needs of one file;
    taken from the parse cache it stays one pickled string until first read, so a command over 50,000
    records thaws only the records it looks at.
    """

    __slots__ = ("path", "folder", "diagnostics", "unlisted", "rules", "stamp", "_id", "_named", "_model", "_outline",
                 "_record_parts", "_frozen", "_warm", "_data", "_positions", "_record")

    def __init__(self, path: str, folder: str, data: dict[str, Any] | None = None, positions: dict[Loc, Pos] | None = None,
                 record: Record | None = None, diagnostics: list[Diagnostic] | None = None, unlisted: int = 0,
                 record_parts: dict[str, list[tuple[str, str]]] | None = None):
        self.path, self.folder = path, folder
        self._data, self._positions, self._record = data, positions if positions is not None else {}, record
        #: a claim's input parts that its record holds, by check (``assay.inputs.claim_record_parts``): made when the
        #: parse is kept in the cache, so a large knowledge base hashes them once per change of the file
        self._record_parts = record_parts if record_parts is not None else {}
        self._frozen: bytes | None = None  # the data, positions and record pickled, where they were kept
        self._warm = False  # whether they are unpickled beside it
        self.diagnostics: list[Diagnostic] = diagnostics if diagnostics is not None else []
        self.unlisted = unlisted  # problems found but not made into diagnostics (see _from_pydantic)
        self.rules: list[Diagnostic] = []  # the diagnostics of the rules within the record (assay.rules.local)
        self._id: str | None = None
        self._named = False
        self._model: type[Record] | None = None
        self._outline: Outline | None = None
        self.stamp: Stamp | None = None  # what stat said of the file when it was read, where the cache may keep it

    def seal(self) -> None:
        """Derive what every command needs of the file once it is read: its id, model, outline and rule diagnostics."""
        value = (self._data or {}).get("id")
        self._named = isinstance(value, str) and series(value) is not None
        self._id = value if self._named else Path(self.path).stem
        self._model = type(self._record) if self._record is not None else None
        self._outline = outline_of(self._record)
        self.rules = local_rules(self)

    def __getstate__(self) -> tuple:
        frozen = self._frozen
        if frozen is None:  # made here, or changed since it was kept
            frozen = pickle.dumps((self._data, self._positions, self._record), pickle.HIGHEST_PROTOCOL)
        return (self.path, self.folder, self.diagnostics, self.unlisted, self.rules,
                self.id, self.named, self.model, self.outline, self._record_parts, self.stamp, frozen)

    def __setstate__(self, state: tuple) -> None:
        (self.path, self.folder, self.diagnostics, self.unlisted, self.rules,
         self._id, self._named, self._model, self._outline, self._record_parts, self.stamp, self._frozen) = state
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
        if self._id is None:  # not sealed: made by hand
            return type(self.record) if self.record is not None else None
        return self._model

    @property
    def outline(self) -> Outline | None:
        """What the valid record names outside itself, and its title (``assay.rules.Outline``); None when invalid."""
        if self._id is None:
            return outline_of(self.record)
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
        return None, {}, [Diagnostic(path, line, col, "not-utf8", f"byte 0x{text[e.start]:02x} is not UTF-8",
                                     "save the file as UTF-8")]
    positions: dict[Loc, Pos] = {}
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
            return None, {}, [Diagnostic(path, line, col, "yaml-not-mapping", "the file holds several documents",
                                         "a record is one mapping; put each record in its own file")]
        message = " ".join(p for p in (e.context, e.problem) if p)
        code = "yaml-too-deep" if "nesting depth" in message else "yaml-syntax"  # libyaml's own depth limit
        return None, {}, [Diagnostic(path, line, col, code, message or "the YAML does not parse")]
    except (yaml.YAMLError, RecursionError, ValueError) as e:  # reader errors (control characters), deep nesting
        code = "yaml-too-deep" if isinstance(e, RecursionError) else "yaml-syntax"
        return None, {}, [Diagnostic(path, 1, 1, code, str(e).splitlines()[0] if str(e) else "the YAML does not parse")]
    if not isinstance(data, dict):
        got = "an empty file" if data is None else f"a {_type_name(data)}"
        return None, positions, [Diagnostic(path, 1, 1, "yaml-not-mapping", f"a record must be a mapping of fields (got {got})")]
    return data, positions, []


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
        raise _Refused("yaml-alias", f"an alias repeats the value anchored on line {seen[id(node)]}",
                       None, "write the value out in full")
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
                    "yaml-duplicate-key", f"key '{key}' repeats the one on line {first[0]}", key_node.start_mark,
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


# --- validation against the model ---------------------------------------------------------------


def load_file(path: Path, root: Path) -> Loaded:
    """Read and validate one record file; all problems are in ``Loaded.diagnostics`` and ``Loaded.rules``."""
    loaded = _parse_file(path, root)
    loaded.seal()
    return loaded


def _parse_file(path: Path, root: Path) -> Loaded:
    rel = path.relative_to(root).as_posix()
    folder = path.parent.name
    loaded = Loaded(rel, folder)
    try:
        raw = read_regular(root, path)
    except Unreadable as e:
        loaded.diagnostics.append(Diagnostic(rel, 1, 1, "unreadable-file", f"{rel} {e}",
                                             "records are regular files inside the knowledge base"))
        return loaded
    data, positions, diags = read_yaml(raw, rel)
    loaded.data, loaded.positions = data, positions
    loaded.diagnostics.extend(diags)
    if data is None:
        return loaded
    if SCHEMA_LINE not in raw.decode("utf-8", "replace").split("\n", 1)[0]:
        loaded.diagnostics.append(
            Diagnostic(rel, 1, 1, "schema-line", "the first line does not point editors at the schema",
                       f"add '{SCHEMA_LINE}../schema/{folder[:-1]}.schema.json' as the first line")
        )
    prefix = series(data["id"]) if isinstance(data.get("id"), str) else None
    if prefix and SERIES[prefix].folder != folder:
        return loaded  # validated against the wrong model it would only cascade; assay.checks reports wrong-folder
    model = MODELS[folder]
    try:
        loaded.record = model.model_validate(data)
    except ValidationError as e:
        loaded.diagnostics.extend(_from_pydantic(loaded, model, e))
    return loaded


def _from_pydantic(loaded: Loaded, model: type[BaseModel], error: ValidationError) -> list[Diagnostic]:
    """Diagnostics for the first ``PER_FILE + 1`` errors in file order; the rest are only counted.

    Making a diagnostic costs a "did you mean" search, so a record of 400,000 junk keys would take a
    minute and a gigabyte; finding where each error sits is cheap. ``assay.checks`` lists ``PER_FILE``
    and counts the rest, ``Loaded.unlisted`` included, in one too-many-problems diagnostic.
    """
    located = [(loaded.where(loc), loc, err) for err in error.errors(include_url=False)
               for loc in [_data_loc(loaded.data, err["loc"])]]
    first = heapq.nsmallest(PER_FILE + 1, range(len(located)), key=lambda i: located[i][0])
    loaded.unlisted = len(located) - len(first)
    return [_one_error(loaded, model, located[i][1], located[i][2]) for i in sorted(first)]


def _data_loc(data: Any, loc: tuple[Any, ...]) -> Loc:
    """The part of a pydantic location that exists in the data (drops union branch names)."""
    out: list[str | int] = []
    cur = data
    for part in loc:
        if isinstance(cur, dict) and isinstance(part, str) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and isinstance(part, int) and 0 <= part < len(cur):
            cur = cur[part]
        elif isinstance(cur, dict) and isinstance(part, str) and not out[-1:] == [part]:
            out.append(part)  # a missing or unknown key: keep its name for the message
            break
        else:
            continue
        out.append(part)
    return tuple(out)


def _field_name(loc: Loc) -> str:
    parts = []
    for p in loc:
        parts.append(f"[{p}]" if isinstance(p, int) else (f".{p}" if parts else p))
    return "".join(parts) or "the record"


def _one_error(loaded: Loaded, model: type[BaseModel], loc: Loc, err: dict[str, Any]) -> Diagnostic:
    kind, name = err["type"], _field_name(loc)
    last = loc[-1] if loc else None
    got = err.get("input")
    if kind == "missing":
        code = "missing-locator" if last == "locator" else "missing-field"
        hint = "give the section, figure, table, page or equation, e.g. '§3.3' or 'Table 2'" if last == "locator" else None
        return loaded.diag(loc[:-1], code, f"'{name}' is required", hint)
    if kind == "extra_forbidden":
        allowed = _allowed_fields(model, loc[:-1], loaded.data)
        close = difflib.get_close_matches(str(last), allowed, n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"allowed fields: {', '.join(sorted(allowed))}"
        return loaded.diag(loc, "unknown-field", f"'{name}' is not a field of this record", hint)
    if kind == "string_too_short" or (kind == "string_type" and got is None):
        code = {"quote": "empty-quote", "locator": "missing-locator"}.get(str(last), "wrong-type")
        return loaded.diag(loc, code, f"'{name}' must not be empty")
    if kind == "string_pattern_mismatch":
        pattern = err.get("ctx", {}).get("pattern", "")
        if last == "id" and len(loc) == 1:
            return loaded.diag(loc, "bad-id", f"id {got!r} does not have the form of its series{_id_flaw(got)}",
                               "ids look like LIT-590, SOTA-364, THEORY-085, ADR-011")
        return loaded.diag(loc, "wrong-type", f"'{name}' must match {pattern} (got {got!r})")
    if kind == "literal_error":
        expected = err.get("ctx", {}).get("expected", "")
        return loaded.diag(loc, "bad-value", f"'{name}' must be one of {expected} (got {got!r})")
    if kind in ("value_error", "assertion_error"):
        return loaded.diag(loc, "bad-value", f"{name}: {err['msg'].removeprefix('Value error, ')}")
    return loaded.diag(loc, "wrong-type", f"'{name}' {err['msg'].lower()} (got {got!r} that is a {_type_name(got)})")


def _id_flaw(value: Any) -> str:
    """What makes an id that looks right wrong: a character that is not ASCII, or space around it."""
    if not isinstance(value, str):
        return ""
    odd = next((c for c in value if not c.isascii()), None)
    if odd is not None:
        return f": ids are ASCII, and {odd!r} (U+{ord(odd):04X} {unicodedata.name(odd, 'unnamed')}) is not"
    if value != value.strip():
        return ": it has space or a line break around it"
    return ""


def _allowed_fields(model: type[BaseModel], loc: Loc, data: Any) -> list[str]:
    """Field names of the (sub)model at ``loc``."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        info = current.model_fields.get(part) if hasattr(current, "model_fields") else None
        if info is None:
            return []
        current = _inner_model(info.annotation)
    return list(current.model_fields) if hasattr(current, "model_fields") else []


def _inner_model(annotation: Any) -> Any:
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _inner_model(arg)
        if found is not None:
            return found
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _type_name(value: Any) -> str:
    return {dict: "mapping", list: "list", str: "string", bool: "bool", int: "int", float: "float"}.get(
        type(value), type(value).__name__ if value is not None else "null"
    )


# --- the whole knowledge base -------------------------------------------------------------------


class Records(Mapping[str, Any]):
    """Valid records of one kind by id, read from their files when looked at (``Loaded.record`` thaws one)."""

    __slots__ = ("files",)

    def __init__(self, files: dict[str, Loaded]):
        self.files = files

    def __getitem__(self, rid: str) -> Any:
        return self.files[rid].record

    def __contains__(self, rid: object) -> bool:
        return rid in self.files

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)


@dataclass
class KnowledgeBase:
    """Every record file under a root, loaded; diagnostics of reading and of each record.

    The indices are built once, when the knowledge base is made: ``files`` is not to change after. They
    hold files, not records: a record is thawed from the parse cache only when it is looked at.
    """

    root: Path
    files: list[Loaded]
    #: The first file of each id (a duplicate is reported by ``assay.checks``).
    by_id: dict[str, Loaded] = field(init=False, repr=False)
    #: The files of the valid records of each kind by id; the first of a duplicated id wins, as in ``by_id``.
    claim_files: dict[str, Loaded] = field(init=False, repr=False)
    source_files: dict[str, Loaded] = field(init=False, repr=False)
    decision_files: dict[str, Loaded] = field(init=False, repr=False)
    #: Their records, by id: ``Claim``, ``Source`` and ``Decision`` objects.
    claims: Records = field(init=False, repr=False)
    sources: Records = field(init=False, repr=False)
    decisions: Records = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.by_id, self.claim_files, self.source_files, self.decision_files = {}, {}, {}, {}
        valid: dict[Any, dict[str, Loaded]] = {Claim: self.claim_files, Source: self.source_files,
                                               Decision: self.decision_files}
        for f in self.files:
            self.by_id.setdefault(f.id, f)
            index = valid.get(f.model)
            if index is not None:
                index.setdefault(f.id, f)
        self.claims, self.sources, self.decisions = Records(self.claim_files), Records(self.source_files), Records(
            self.decision_files)


def load(root: Path, cache: bool | None = None) -> KnowledgeBase:
    """Load every ``*.yaml`` record under ``root``'s claims/, sources/ and decisions/.

    ``cache``: reuse the parse of every file unchanged since the last run (``assay.cache``); by default
    when there are ``CACHE_FROM`` files or more. The files it lacks are parsed by as many processes as the
    machine has cores when there are ``PARALLEL_FROM`` of them or more (``parse_all``).
    """
    root = Path(root).resolve()
    paths = [(folder, name) for folder in MODELS for name in _yaml_names(root / folder)]
    # a file's stamp stands for its content only where no link lies between the root and the file
    direct = {folder for folder in MODELS if (root / folder).resolve() == root / folder}
    collecting = gc.isenabled()
    gc.disable()  # loading makes millions of objects and no cycles: collections would only rescan them
    try:
        store = ParseCache(root, "records") if (len(paths) >= CACHE_FROM if cache is None else cache) else None
        if store is None:
            return KnowledgeBase(root, [load_file(root / folder / name, root) for folder, name in paths])
        kept: list[Loaded | None] = []
        missing: list[tuple[int, str, Stamp | None]] = []  # (index, rel, stamp) of the files to parse
        for folder, name in paths:
            rel = f"{folder}/{name}"
            current = stamp(f"{root}/{rel}") if folder in direct else None  # stamped before it is read
            kept.append(store.get(rel, current))
            if kept[-1] is None:
                missing.append((len(kept) - 1, rel, current))
        for (i, rel, current), loaded in zip(missing, parse_all(root, [rel for _, rel, _ in missing])):
            loaded.stamp = current
            store.put(rel, current, loaded)
            kept[i] = loaded
        store.save()
        files = [f for f in kept if f is not None]  # every one: the missing were parsed
    finally:
        if collecting:
            gc.enable()
    return KnowledgeBase(root, files)


#: From this many files to parse on, ``parse_all`` shares them among processes.
PARALLEL_FROM = 2000


def parse_all(root: Path, rels: list[str]) -> list[Loaded]:
    """``parse_for_cache`` of each root-relative path, in order.

    A knowledge base cloned afresh has every file to parse (50,000 take a minute and a half on one core),
    so from ``PARALLEL_FROM`` files on they are shared among forked processes, one per core (at most 8),
    where the system forks and this process runs no other thread (a fork beside a thread can copy a lock
    that thread holds). Each parse comes back as the cache keeps it: plain fields and one pickled string.
    """
    cores = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 8)
    if len(rels) < PARALLEL_FROM or cores < 2 or threading.active_count() > 1 or "fork" not in mp.get_all_start_methods():
        return [parse_for_cache(root, rel) for rel in rels]
    size = -(-len(rels) // (cores * 4))
    chunks = [(root, rels[i:i + size]) for i in range(0, len(rels), size)]
    with ProcessPoolExecutor(cores, mp_context=mp.get_context("fork")) as pool:
        return [loaded for chunk in pool.map(_parse_chunk, chunks) for loaded in chunk]


def _parse_chunk(job: tuple[Path, list[str]]) -> list[Loaded]:
    root, rels = job
    return [parse_for_cache(root, rel) for rel in rels]


def parse_for_cache(root: Path, rel: str) -> Loaded:
    """One record file as the cache keeps it: parsed, its claim's input parts hashed, its heavy parts pickled."""
    from assay.inputs import claim_record_parts  # inputs reads files through this module

    loaded = load_file(root / rel, root)
    if isinstance(loaded.record, Claim):
        loaded.record_parts = claim_record_parts(loaded.record)
    loaded.freeze()  # as if it came from the cache: 50,000 records parsed at once would not fit otherwise
    return loaded


def _yaml_names(folder: Path) -> list[str]:
    """Names ending in .yaml in ``folder``, sorted (what ``sorted(folder.glob('*.yaml'))`` gives, faster)."""
    try:
        return sorted(n for n in os.listdir(folder) if n.endswith(".yaml"))
    except OSError:  # missing, or not a folder
        return []
