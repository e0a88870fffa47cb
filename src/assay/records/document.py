"""A record file as read: its data with the position of every field (``assay.records.yaml_safe``), its record,
outline and diagnostics (``Loaded``).

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

    What every command needs of a file is kept beside the data: its path, id, diagnostics (those of the rules within
    the record included, ``assay.records.within``), the model of its valid record and its ``outline``. The parse
    cache keeps the data as the line reader or libyaml gave it, plain (``state``, of the type ``STATE``: nothing that
    runs when read), with the positions as the flat ``marks`` of its nodes (``read_marks``), made into the map of
    field paths only when a diagnostic or a page asks where a field is. A file taken from the cache validates its
    record from the data when the record is first looked at, and lets it go when its consumer is done (``release``,
    ``corpus.Lazy.using``): a command over 50,000 records validates only those it looks at. The frozen form this
    replaced (data, positions and record in one blob, thawed and frozen again) was no faster: bench_core at 10,000
    claims, CPU s over the floor, two runs each, frozen then this: warm check 0.29-0.39 and 0.32-0.35, status
    1.01-1.13 and 0.95-1.04, export json 1.41-1.44 and 1.26-1.43.
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
        "model",
        "outline",
        "_data",
        "_plain",
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
        record: Record | None = None,
    ):
        self.path, self.folder = path, folder
        self._data, self._positions, self._record = data, {}, record
        self._marks: bytes | None = None  # the positions, flat (``read_marks``), where the file was read
        self._plain: msgspec.Raw | None = None  # the data as the cache keeps it, where it was taken from the cache
        self._derived = False  # whether the record is its model's validation of the data (``validate``)
        self.diagnostics: list[Diagnostic] = []
        self.unlisted = 0  # problems found but not made into diagnostics (see _from_pydantic)
        self.rules: list[Diagnostic] = []  # the diagnostics of the rules within the record (assay.records.within.local)
        self._id: str | None = None
        self._named = False
        self.model: type[Record] | None = None  # the model of its valid record (Claim, Source, Decision), or None
        self.outline: Outline | None = None  # what its valid record names outside itself, and its title (``Outline``)
        self.stamp: Stamp | None = None  # what stat said of the file when it was read, where the cache may keep it
        self.marked: dict[int, int] = {}  # line -> column of each `# assay new:` mark (assay.records.placeholders.marks)

    def seal(self, outline: Outline | None, rules: Callable[[Loaded], list[Diagnostic]]) -> None:
        """Keep what every command needs of the file once it is read: its id, model, the ``outline`` of its record
        and the diagnostics of the ``rules`` within it (``assay.records.within.local``)."""
        self._named, self._id = self._naming()
        self.model = type(self._record) if self._record is not None else None
        self.outline = outline
        self.rules = rules(self)

    def read(self, data: Any, marks: bytes | dict[Loc, Pos]) -> None:
        """Keep the data of the file as read, with its positions: flat ``marks`` (``read_marks``) or made."""
        self._data, self._plain, self._record, self._derived = data, None, None, False
        if isinstance(marks, dict):
            self._positions, self._marks = marks, None
        else:
            self._positions, self._marks = None, marks

    def validate(self, model: type[Record]) -> None:
        """Validate the data as ``model`` and keep the record; raises pydantic's ``ValidationError``."""
        self._record = model.model_validate(self._data)
        self._derived = True

    def release(self) -> None:
        """Let go of what is made again when next looked at: a record validated from the data, the data the cache
        kept (decoded), the positions made from the marks."""
        if self._derived:
            self._record = None
        if self._plain is not None:
            self._data = None
        if self._marks is not None:
            self._positions = None

    def state(self) -> tuple:
        """What the parse cache keeps of the file (of the type ``STATE``), and what crosses to another process."""
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
            self._plain if self._plain is not None else msgspec.Raw(_PLAIN.encode(self._data)),
            self._marks if self._marks is not None else [(list(k), v) for k, v in (self._positions or {}).items()],
            self.marked,
        )

    @classmethod
    def from_state(cls, state: tuple) -> Loaded:
        """The file as ``state`` keeps it; its record is validated from the data when first looked at."""
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
            self.outline,
            stamp,
            self._plain,
            marks,
            marked,
        ) = state
        self._data = None
        self.marked = dict(marked)
        self.diagnostics, self.rules = list(diagnostics), list(rules)
        self.model = None if model is None else _MODELS[model]
        self.stamp = None if stamp is None else tuple(stamp)
        self._record, self._derived = None, self.model is not None
        if isinstance(marks, bytes):
            self._positions, self._marks = None, marks
        else:
            self._positions, self._marks = {tuple(k): tuple(v) for k, v in marks}, None

    @property
    def data(self) -> dict[str, Any] | None:
        if self._data is None and self._plain is not None:  # as the cache keeps it: decoded when looked at
            self._data = msgspec.msgpack.decode(self._plain)
        return self._data

    @property
    def positions(self) -> dict[Loc, Pos]:
        if self._positions is None:
            self._positions = positions_of(self.data, self._marks or b"")
        return self._positions

    @property
    def record(self) -> Record | None:
        if self._record is None and self._derived:
            self._record = self.model.model_validate(self.data)  # a valid record's data, taken from the cache
        return self._record

    @property
    def id(self) -> str:
        """The record's id as written, or the file stem when it has none of a known series' shape.

        The key of the file in the graph, the site's paths and the CLI: a malformed id (`' SOTA-364'`,
        `'SOTA-３６８'`, `'SOTA-1/../x'`) never becomes one; it is reported as bad-id where it is written.
        """
        return self._id if self._id is not None else self._naming()[1]

    @property
    def named(self) -> bool:
        """Whether the file goes by the id its record writes (else by its stem: the id is missing or malformed)."""
        return self._named if self._id is not None else self._naming()[0]

    def _naming(self) -> tuple[bool, str]:
        """``named`` and ``id`` from the data (``seal`` keeps them)."""
        value = (self.data or {}).get("id")
        named = isinstance(value, str) and series(value) is not None
        return named, value if named else Path(self.path).stem

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


_PLAIN = msgspec.msgpack.Encoder()
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
    msgspec.Raw,
    bytes | list[tuple[list[str | int], tuple[int, int]]],
    dict[int, int],
]
