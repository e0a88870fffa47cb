"""A record file as read: its data with the position of every field (``assay.records.yaml_safe``), its record,
outline and diagnostics, kept frozen as bytes of plain data between looks (``Loaded``).

Every problem becomes a diagnostic; nothing here raises on bad input. A record that fails
validation is kept (``Loaded.record`` is None) so the graph can still show it, flagged.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from assay.diagnostics import Diagnostic, Loc, Pos
from assay.fingerprints import Stamp
from assay.model import MODELS, Record, series
from assay.records.outline import Outline
from assay.records.yaml_safe import positions_of


class Loaded:
    """One record file as read: its data, where each field sits, the validated record or None.

    What every command needs of a file is kept plain: its path, id, diagnostics (those of the rules within
    the record included, ``assay.records.within``), the model of its valid record and its ``outline``. The rest
    (the data, the positions, the record) is what a page or a diagnostic needs of one file; taken from the parse
    cache it stays one string of plain data (MessagePack) until first read, so a command over 50,000 records thaws
    only the records it looks at.

    Where the file was read here, the positions are kept as the flat ``marks`` of its nodes (``read_marks``) and
    made into the map of field paths only when a diagnostic or a page asks where a field is; a record validated
    from the data is kept as its model's name, and validated again when it is thawed. ``state`` is what the parse
    cache keeps of it (``STATE`` its type): plain data, nothing that runs when read.
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
        "_frozen",
        "_warm",
        "_data",
        "_positions",
        "_marks",
        "_record",
        "_derived",
        "marked",
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
    ):
        self.path, self.folder = path, folder
        self._data, self._positions, self._record = data, positions if positions is not None else {}, record
        self._marks: bytes | None = None  # the positions, flat (``read_marks``), where ``_positions`` is not made yet
        self._derived = False  # whether the record is its model's validation of the data (``validate``)
        self._frozen: bytes | None = None  # the data, positions and record as plain data, where they were kept
        self._warm = False  # whether they are decoded beside it
        self.diagnostics: list[Diagnostic] = diagnostics if diagnostics is not None else []
        self.unlisted = unlisted  # problems found but not made into diagnostics (see _from_pydantic)
        self.rules: list[Diagnostic] = []  # the diagnostics of the rules within the record (assay.records.within.local)
        self._id: str | None = None
        self._named = False
        self._model: type[Record] | None = None
        self._outline: Outline | None = None
        self.stamp: Stamp | None = None  # what stat said of the file when it was read, where the cache may keep it
        self.marked: dict[int, int] = {}  # line -> column of each `# assay new:` mark (assay.records.placeholders.marks)

    def seal(self, outline: Outline | None, rules: Callable[[Loaded], list[Diagnostic]]) -> None:
        """Keep what every command needs of the file once it is read: its id, model, the ``outline`` of its record
        and the diagnostics of the ``rules`` within it (``assay.records.within.local``)."""
        value = (self._data or {}).get("id")
        self._named = isinstance(value, str) and series(value) is not None
        self._id = value if self._named else Path(self.path).stem
        self._model = type(self._record) if self._record is not None else None
        self._outline = outline
        self.rules = rules(self)

    def read(self, data: Any, marks: bytes | dict[Loc, Pos]) -> None:
        """Keep the data of the file as read, with its positions: flat ``marks`` (``read_marks``) or made."""
        self._thaw()
        self._data, self._record, self._derived, self._frozen = data, None, False, None
        if isinstance(marks, dict):
            self._positions, self._marks = marks, None
        else:
            self._positions, self._marks = None, marks

    def validate(self, model: type[Record]) -> None:
        """Validate the data as ``model`` and keep the record; raises pydantic's ``ValidationError``."""
        self.record = model.model_validate(self._data)
        self._derived = True

    def _frozen_bytes(self) -> bytes:
        """The data, positions and record as plain data: the positions as marks where they were not made, a record
        validated from the data as its model's name (``_thaw`` validates it again), any other as its model's name and
        its fields."""
        positions = self._marks if self._positions is None else [(list(k), v) for k, v in self._positions.items()]
        record = self._record
        if record is None:
            kept: Any = None
        elif self._derived:
            kept = type(record).__name__
        else:
            kept = [type(record).__name__, record.model_dump(mode="json", by_alias=True)]
        return _FROZEN.encode((self._data, positions, kept))

    def state(self) -> tuple:
        """What the parse cache keeps of the file (of the type ``STATE``), and what crosses to another process."""
        frozen = self._frozen
        if frozen is None:  # made here, or changed since it was kept
            frozen = self._frozen_bytes()
        model = self.model
        return (
            self.path,
            self.folder,
            self.diagnostics,
            self.unlisted,
            self.rules,
            self.id,
            self.named,
            None if model is None else model.__name__,
            self.outline,
            self.stamp,
            frozen,
            self.marked,
        )

    @classmethod
    def from_state(cls, state: tuple) -> Loaded:
        """The file as ``state`` keeps it, its data, positions and record frozen until first read."""
        loaded = cls.__new__(cls)
        loaded.__setstate__(state)
        return loaded

    def __getstate__(self) -> tuple:
        return self.state()

    def __setstate__(self, state: tuple) -> None:
        (
            self.path,
            self.folder,
            diagnostics,
            self.unlisted,
            rules,
            self._id,
            self._named,
            model,
            self._outline,
            stamp,
            self._frozen,
            marked,
        ) = state
        self.marked = dict(marked)
        self.diagnostics, self.rules = list(diagnostics), list(rules)
        self._model = None if model is None else _MODELS[model]
        self.stamp = None if stamp is None else tuple(stamp)
        self._warm = False

    def _thaw(self) -> None:
        if self._frozen is not None and not self._warm:
            data, positions, kept = msgspec.msgpack.decode(self._frozen)
            self._data, self._derived = data, isinstance(kept, str)
            if isinstance(positions, bytes):
                self._positions, self._marks = None, positions
            else:
                self._positions, self._marks = {tuple(k): tuple(v) for k, v in positions}, None
            if kept is None:
                self._record = None
            elif self._derived:
                self._record = _MODELS[kept].model_validate(data)
            else:
                self._record = _MODELS[kept[0]].model_validate(kept[1])
            self._warm = True

    def freeze(self) -> None:
        """Keep the data, positions and record only as plain data from now on, until next read: a command that walks
        every record of a large knowledge base holds one at a time."""
        if self._frozen is None:
            self._frozen = self._frozen_bytes()
        self._data, self._positions, self._marks, self._record, self._warm = None, {}, None, None, False

    @property
    def data(self) -> dict[str, Any] | None:
        self._thaw()
        return self._data

    @data.setter
    def data(self, value: dict[str, Any] | None) -> None:
        self._thaw()
        self.positions  # noqa: B018 - made from the marks while they still describe the data
        self._data, self._derived, self._frozen = value, False, None

    @property
    def positions(self) -> dict[Loc, Pos]:
        self._thaw()
        if self._positions is None:
            self._positions = positions_of(self._data, self._marks or b"")
            self._marks = None
        return self._positions

    @positions.setter
    def positions(self, value: dict[Loc, Pos]) -> None:
        self._thaw()
        self._positions, self._marks, self._frozen = value, None, None

    @property
    def record(self) -> Record | None:
        self._thaw()
        return self._record

    @record.setter
    def record(self, value: Record | None) -> None:
        self._thaw()
        self._record, self._derived, self._frozen = value, False, None

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


_FROZEN = msgspec.msgpack.Encoder()
_MODELS: dict[str, type[Record]] = {model.__name__: model for model in MODELS.values()}

#: The type of ``Loaded.state``: what the parse cache keeps of a record file.
STATE = tuple[
    str,
    str,
    list[Diagnostic],
    int,
    list[Diagnostic],
    str,
    bool,
    str | None,
    Outline | None,
    tuple[int, int, int, int, int] | None,
    bytes,
    dict[int, int],
]
