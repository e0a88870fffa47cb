"""Parsed files kept between runs, so that a knowledge base of 50,000 records is not parsed again each time.

An entry is the parse of one file, kept under what ``stat`` says of it (device, inode, size, and the
modification and change times in nanoseconds): a file written since has another change time, which no
program can set back. A file changed within ``RACY_S`` of being stamped is not kept, since a second
write within the same clock tick could leave its times as they were (git's "racily clean" entries).
The cache is keyed by the engine too: another version of the loader or the model, of pydantic or of
PyYAML starts it afresh.

Every entry is data, never code: a typed, data-only format (MessagePack, ``msgspec``), each kind's value decoded
as the type its reader declares (``value``), so that nothing in the cache executes when read, by construction. A
file that is not such data of that type (a planted pickle, a truncated write, another version's layout) is ignored.
It lives in the user's cache folder, never one inside the knowledge base, the folder and the file checked as they are
opened (``assay.corpus.home`` says where and how), so another user cannot feed a run parses of files it never read. A
cache that cannot be read, or is not ours, is ignored, never an error; so is one that cannot be written. The prune
removes only files of the cache's own names.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import sys
import time
from collections.abc import Callable
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from assay.corpus import forking as bulk
from assay.corpus import home as cache_folder
from assay.corpus.forking import no_collection
from assay.fingerprints import Stamp

T = TypeVar("T")

#: Seconds within which a file changed before being stamped is parsed again next time.
RACY_S = 2.0
#: From this many entries on, a cache is written by a forked process while the command goes on (``bulk.behind``).
BEHIND_FROM = 2000


#: Days after which a cache file nobody used is removed.
UNUSED_DAYS = 30


#: The modules and packages of Assay a parse depends on (they import no other): a change to one starts the cache
#: afresh. A package stands for every module in it, at any depth.
PARSE_MODULES = (
    "records",
    "model",
    "bibliography",
    "experiment",
    "ids",
    "diagnostics",
    "codes",
    "reading",
    "statistics",
    "corpus",
    "files",
    "data_files",
    "fingerprints",
)


def engine_files(also: tuple[str, ...] = ()) -> list[Path]:
    """The files of Assay's code that ``PARSE_MODULES`` and ``also`` name (dotted: ``ledger.inputs``; a package
    stands for every module under it); ``("*",)``: every module of Assay, in every package."""
    here = Path(__file__).parent.parent
    if also == ("*",):
        return sorted(here.rglob("*.py"))
    files: set[Path] = set()
    for name in (*PARSE_MODULES, *also):
        path = here.joinpath(*name.split("."))
        files |= set(path.rglob("*.py")) if path.is_dir() else {path.with_suffix(".py")}
    return sorted(files)


def _engine(also: tuple[str, ...] = ()) -> str:
    """The code a parse depends on: Python, pydantic, PyYAML, and the files of Assay ``engine_files`` names."""
    h = hashlib.sha256(sys.version.encode())
    for package in ("pydantic", "pydantic-core", "PyYAML", "msgspec"):
        try:
            h.update(f"{package}={metadata.version(package)}".encode())
        except metadata.PackageNotFoundError:
            h.update(package.encode())
    here = Path(__file__).parent.parent
    for path in engine_files(also):
        h.update(path.relative_to(here).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def path_of(root: Path, kind: str) -> Path | None:
    """The file that keeps the parses of ``kind`` under the resolved ``root``; None where none may be kept (a cache
    folder inside the knowledge base could come with it: a commit, an archive)."""
    key = hashlib.sha256(f"{root}\0{kind}".encode()).hexdigest()[:24]
    kept_in = cache_folder.outside(root)
    return None if kept_in is None else kept_in / f"{key}.msgpack"


def kept(root: Path, kind: str) -> bool:
    """Whether a cache file of ``kind`` is there for the resolved ``root`` (whether it is of use, only reading it
    tells): a first run finds none."""
    path = path_of(root, kind)
    return path is not None and path.exists()


class ParseCache:
    """The parses of one kind of file (``kind``: records, say) under one knowledge base ``root``."""

    def __init__(
        self,
        root: Path,
        kind: str,
        also: tuple[str, ...] = (),
        value: Any = Any,
        dump: Callable[[Any], Any] | None = None,
        load: Callable[[Any], Any] | None = None,
    ):
        """``also``: the modules of Assay besides ``PARSE_MODULES`` that this kind's entries depend on; ``value``: the
        type of an entry's value as kept (plain data: builtins, tuples, dataclasses, named tuples); ``dump`` and
        ``load``: a value made that type and made again from it, where it is not one (``Loaded``)."""
        self.root, self.kind = Path(root).resolve(), kind
        self.path = path_of(self.root, kind)
        self.engine = _engine(also)
        self._value, self._dump, self._load = value, dump, load
        self._old: dict[str, tuple[Stamp, Any]] = self._read()
        self._new: dict[str, tuple[Stamp, Any]] = {}
        self._changed = False
        self._now = time.time_ns()

    @property
    def empty(self) -> bool:
        """Whether the cache kept no entry from the runs before: every file is to be read, none to be compared."""
        return not self._old

    def get(self, rel: str, current: Stamp | None) -> Any | None:
        """The parse kept for the file at ``rel`` (relative to the root) if it still has the stamp ``current``."""
        entry = self._old.get(rel)
        if entry is None or current is None or entry[0] != current:
            return None
        self._new[rel] = entry
        return entry[1]

    def memo(self, rel: str, current: Stamp | None, compute: Callable[[], T]) -> T:
        """The value kept for the file at ``rel`` while it has the stamp ``current``; else ``compute()``, kept
        under that stamp (an exception of ``compute`` keeps nothing and goes to the caller)."""
        kept = self.get(rel, current)
        if kept is None:
            kept = compute()
            self.put(rel, current, kept)
        return kept

    def put(self, rel: str, current: Stamp | None, value: Any) -> None:
        """Keep ``value`` as the parse of the file at ``rel`` while it has the stamp ``current``."""
        self._changed = True
        if self.settled(current):
            self._new[rel] = (current, value)

    def settled(self, current: Stamp | None) -> bool:
        """Whether a file with the stamp ``current`` was last changed long enough ago for the stamp to stand for its
        content (a second write within the clock tick of the first could leave its times as they were)."""
        return current is not None and self._now - max(current[3], current[4]) > RACY_S * 1e9

    def save(self) -> None:
        """Write the entries used or made in this run (files gone or changed drop out), if any changed."""
        if self.path is None or (not self._changed and len(self._new) == len(self._old)):
            return
        entries = self._new
        if len(entries) >= BEHIND_FROM:
            # encoding and writing a large cache need not hold the command up
            bulk.behind(partial(self._write, entries), str(self.path))
        else:
            self._write(entries)

    def _write(self, entries: dict[str, tuple[Stamp, Any]]) -> None:
        """The file: the head (engine, root, kind) and the entries, one MessagePack array."""
        dump = self._dump
        body = {rel: (current, dump(value)) for rel, (current, value) in entries.items()} if dump else entries
        data = _ENCODER.encode((self.engine, str(self.root), self.kind, msgspec.Raw(_ENCODER.encode(body))))
        cache_folder.write_private(self.path.parent, self.path.name, data, then=_prune)  # unwritten: it only costs time

    def _read(self) -> dict[str, tuple[Stamp, Any]]:
        """The entries of this cache's file, if this user wrote it for this engine, root and kind, decoded as data of
        this kind's type (``value``): anything else (a pickle, a truncated file) is ignored. The folder and the file are
        checked as opened (no time between the check and the use). A file this process is still writing is waited for."""
        bulk.settle(str(self.path))
        data = None if self.path is None else cache_folder.read_private(self.path.parent, self.path.name)
        if data is None:
            return {}
        try:
            *head, body = _HEAD.decode(data)
            if tuple(head) != (self.engine, str(self.root), self.kind):
                return {}
            with no_collection():  # a great many objects, no cycle
                entries = msgspec.msgpack.decode(body, type=dict[str, tuple[tuple[int, int, int, int, int], self._value]])
                load = self._load
                return {rel: (tuple(current), load(value)) for rel, (current, value) in entries.items()} if load else entries
        except (msgspec.DecodeError, msgspec.ValidationError, TypeError, ValueError):
            return {}  # truncated, corrupt, of another layout or not data at all: parsed afresh


_ENCODER = msgspec.msgpack.Encoder()
#: A cache file's head, its entries left undecoded until the head is known to be this cache's.
_HEAD = msgspec.msgpack.Decoder(tuple[str, str, str, msgspec.Raw])
_KEPT = re.compile(r"^[0-9a-f]{24}\.msgpack$")  # the only files the cache writes, and so the only ones it prunes


def _prune(dir_fd: int) -> None:
    """Remove the cache files nobody used for ``UNUSED_DAYS``: only files of the cache's own names, never a
    user's own files that share the folder."""
    cutoff = time.time() - UNUSED_DAYS * 86400
    for name in os.listdir(dir_fd):
        if not _KEPT.match(name):
            continue
        with contextlib.suppress(OSError):
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if stat.S_ISREG(st.st_mode) and st.st_mtime < cutoff:
                os.unlink(name, dir_fd=dir_fd)


class Uncached:
    """What a reader uses where nothing is kept (a small knowledge base): every value is computed afresh."""

    def memo(self, rel: str, current: Stamp | None, compute: Callable[[], T]) -> T:
        return compute()

    def save(self) -> None:
        pass


UNCACHED = Uncached()
