"""Parsed files kept between runs, so that a knowledge base of 50,000 records is not parsed again each time.

An entry is the parse of one file, kept under what ``stat`` says of it (device, inode, size, and the
modification and change times in nanoseconds): a file written since has another change time, which no
program can set back. A file changed within ``RACY_S`` of being stamped is not kept, since a second
write within the same clock tick could leave its times as they were (git's "racily clean" entries).
The cache is keyed by the engine too: another version of the loader or the model, of pydantic or of
PyYAML starts it afresh.

A first run writes its entries as the processes that read the files pickled them (``put_all``), beside an index of
paths and stamps; a later run that changes one writes them afresh. The entries are pickles, and unpickling runs
code, so a file is unpickled only when it is certainly this user's: it lives in the user's cache folder (``assay.cache_folder``:
``$ASSAY_CACHE_DIR``, else ``$XDG_CACHE_HOME/assay``, else ``~/.cache/assay``), never one inside the knowledge
base (a cache there could arrive with a commit or an archive, and is not used); the folder and the file are checked
as they are opened (a real folder and a regular file of this user that nobody else can write, so swapping either
between check and use does not help); and the file must carry the MAC, under a secret kept in that folder, that
only this user's runs make. A cache that cannot be read, or is not ours, is ignored, never an error; so is one that
cannot be written. The prune removes only files of the cache's own names.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import pickle
import re
import secrets
import stat
import struct
import sys
import time
from collections.abc import Callable
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

from assay import bulk, cache_folder
from assay.bulk import no_collection
from assay.fingerprints import Stamp

T = TypeVar("T")

#: Seconds within which a file changed before being stamped is parsed again next time.
RACY_S = 2.0
#: From this many entries on, a cache is written by a forked process while the command goes on (``bulk.behind``).
BEHIND_FROM = 2000


#: From this many files of a kind on, their parses are kept between runs; below, parsing takes well under a second.
CACHE_FROM = 1000


#: Days after which a cache file nobody used is removed.
UNUSED_DAYS = 30


#: The modules and packages of Assay a parse depends on (they import no other): a change to one starts the cache
#: afresh. A package stands for every module in it, at any depth.
PARSE_MODULES = (
    "records",
    "model",
    "experiment",
    "ids",
    "diagnostics",
    "codes",
    "reading",
    "statistics",
    "cache",
    "cache_folder",
    "files",
    "fingerprints",
    "bulk",
)


def engine_files(also: tuple[str, ...] = ()) -> list[Path]:
    """The files of Assay's code that ``PARSE_MODULES`` and ``also`` name (dotted: ``ledger.inputs``; a package
    stands for every module under it); ``("*",)``: every module of Assay, in every package."""
    here = Path(__file__).parent
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
    for package in ("pydantic", "pydantic-core", "PyYAML"):
        try:
            h.update(f"{package}={metadata.version(package)}".encode())
        except metadata.PackageNotFoundError:
            h.update(package.encode())
    here = Path(__file__).parent
    for path in engine_files(also):
        h.update(path.relative_to(here).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def path_of(root: Path, kind: str) -> Path | None:
    """The file that keeps the parses of ``kind`` under the resolved ``root``; None where none may be kept (a cache
    folder inside the knowledge base could come with it: a commit, an archive)."""
    key = hashlib.sha256(f"{root}\0{kind}".encode()).hexdigest()[:24]
    kept_in = cache_folder.outside(root)
    return None if kept_in is None else kept_in / f"{key}.pickle"


def kept(root: Path, kind: str) -> bool:
    """Whether a cache file of ``kind`` is there for the resolved ``root`` (whether it is of use, only reading it
    tells): a first run finds none."""
    path = path_of(root, kind)
    return path is not None and path.exists()


class ParseCache:
    """The parses of one kind of file (``kind``: records, say) under one knowledge base ``root``."""

    def __init__(self, root: Path, kind: str, also: tuple[str, ...] = ()):
        """``also``: the modules of Assay besides ``PARSE_MODULES`` that this kind's entries depend on."""
        self.root, self.kind = Path(root).resolve(), kind
        self.path = path_of(self.root, kind)
        self.engine = _engine(also)
        self._old: dict[str, tuple[Stamp, Any]] = self._read()
        self._new: dict[str, tuple[Stamp, Any]] = {}
        self._runs: tuple[list[tuple[str, Stamp | None]], list[memoryview], int | None, bool] | None = None  # put_all
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
        if self._runs is not None:  # kept as pickled so far: now as entries, with this one
            self._new, self._runs = {**_from_runs(*self._runs), **self._new}, None
        if self.settled(current):
            self._new[rel] = (current, value)

    def put_all(
        self,
        entries: list[tuple[str, Stamp | None, Any]],
        pickles: list[memoryview] | None = None,
        take: int | None = None,
        nested: bool = False,
    ) -> None:
        """``put`` of each ``(rel, stamp, value)``. Where ``pickles`` has them as forked processes pickled them
        (``bulk.Mapped``) and this cache kept nothing before (a first run), those pickles are written as they are,
        not made again (pickling 55,000 records' parses again cost 1.9 CPU s). ``pickles``: the runs whose items,
        in order, are the entries' values; ``take``: the element of an item that is the value (None: the whole
        item); ``nested``: each item of a run is a list of such items (a folder's files), flattened first."""
        if pickles is None or self._old or self._new or self._runs is not None:
            for rel, current, value in entries:
                self.put(rel, current, value)
            return
        self._changed = True
        self._runs = ([(rel, current if self.settled(current) else None) for rel, current, _ in entries], pickles, take, nested)

    def settled(self, current: Stamp | None) -> bool:
        """Whether a file with the stamp ``current`` was last changed long enough ago for the stamp to stand for its
        content (a second write within the clock tick of the first could leave its times as they were)."""
        return current is not None and self._now - max(current[3], current[4]) > RACY_S * 1e9

    def save(self) -> None:
        """Write the entries used or made in this run (files gone or changed drop out), if any changed."""
        if self.path is None or (not self._changed and len(self._new) == len(self._old)):
            return
        data: dict[str, Any] = {"engine": self.engine, "root": str(self.root), "kind": self.kind, "entries": self._new}
        runs: list[memoryview] = []
        if self._runs is not None:
            index, runs, take, nested = self._runs
            data.update(entries=None, index=index, take=take, nested=nested, sizes=[len(run) for run in runs])
        if len(self._new) + len(data.get("index", ())) >= BEHIND_FROM:
            # pickling and writing a large cache need not hold the command up
            bulk.behind(partial(self._write, data, runs), str(self.path))
        else:
            self._write(data, runs)

    def _write(self, data: dict[str, Any], runs: list[memoryview]) -> None:
        """The file: its MAC, then the body (the length of the head, the head's pickle, then each run's pickle)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            dir_fd = cache_folder.open_private(self.path.parent)
            if dir_fd is None:
                return
            try:
                head = pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
                parts = [struct.pack("<Q", len(head)), head, *runs]
                mac = hmac.new(_key(dir_fd), digestmod=hashlib.sha256)
                for part in parts:
                    mac.update(part)
                cache_folder.write_in(dir_fd, self.path.name, mac.digest(), *parts)
                _prune(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError:
            pass  # a cache that cannot be written only costs time

    def _read(self) -> dict[str, tuple[Stamp, Any]]:
        """The entries of this cache's file, if this user wrote it: the folder and the file are checked as opened
        (no time between the check and the use), and the file's MAC under the folder's key must hold before a
        byte is unpickled, so a planted file is never loaded. A file this process is still writing is waited for."""
        bulk.settle(str(self.path))
        try:
            if self.path is None:
                return {}
            dir_fd = cache_folder.open_private(self.path.parent)
            if dir_fd is None:
                return {}
            try:
                sealed = cache_folder.read_in(dir_fd, self.path.name)
                key = _key(dir_fd, create=False)
            finally:
                os.close(dir_fd)
            body = _unseal(key, sealed) if key is not None and sealed is not None else None
            if body is None:
                return {}
            with no_collection():  # a great many objects, no cycle
                return _entries(body, (self.engine, str(self.root), self.kind))
        except Exception:  # noqa: BLE001 - missing, truncated, corrupt or foreign: parse afresh
            return {}


def _entries(body: memoryview, ours: tuple[str, str, str]) -> dict[str, tuple[Stamp, Any]]:
    """The entries of a sealed body (``ParseCache._write``) made by this engine for this root and kind, else none."""
    (size,) = struct.unpack_from("<Q", body)
    data = pickle.loads(body[8 : 8 + size])
    if (data["engine"], data["root"], data["kind"]) != ours:
        return {}
    if data["entries"] is not None:
        return data["entries"] if isinstance(data["entries"], dict) else {}
    runs, at = [], 8 + size
    for n in data["sizes"]:
        runs.append(body[at : at + n])
        at += n
    return _from_runs(data["index"], runs, data["take"], data["nested"])


def _from_runs(
    index: list[tuple[str, Stamp | None]], runs: list[memoryview], take: int | None, nested: bool
) -> dict[str, tuple[Stamp, Any]]:
    """The entries ``put_all`` kept as runs: the runs unpickled, their items flattened, each file's value taken; a
    file whose stamp did not stand for its content when it was read is left out."""
    values: list[Any] = []
    for run in runs:  # one run's items at a time: the rest of each item (its path, its stamp again) is let go at once
        items = pickle.loads(run)
        if nested:
            items = [item for group in items for item in group]
        values += items if take is None else [item[take] for item in items]
    return {rel: (current, value) for (rel, current), value in zip(index, values, strict=True) if current is not None}


#: The secret of a cache folder: a file's MAC is made with it, so only this user's runs make files that load.
KEY_FILE = "key"
_MAC = 32
_KEPT = re.compile(r"^[0-9a-f]{24}\.pickle$")  # the only files the cache writes, and so the only ones it prunes


def _key(dir_fd: int, create: bool = True) -> bytes | None:
    """The folder's secret, made on first use (readable by this user alone)."""
    key = cache_folder.read_in(dir_fd, KEY_FILE)
    if key is not None and len(key) == 32:
        return key
    if not create:
        return None
    key = secrets.token_bytes(32)
    cache_folder.write_in(dir_fd, KEY_FILE, key)
    return key


def _unseal(key: bytes, sealed: bytes) -> memoryview | None:
    """The body of a sealed file (its MAC, then the pickle) when the MAC is the folder's; a view, not a copy."""
    view = memoryview(sealed)
    mac, body = view[:_MAC], view[_MAC:]
    return body if hmac.compare_digest(mac, hmac.new(key, body, hashlib.sha256).digest()) else None


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
