"""Parsed files kept between runs, so that a knowledge base of 50,000 records is not parsed again each time.

An entry is the parse of one file, kept under what ``stat`` says of it (device, inode, size, and the
modification and change times in nanoseconds): a file written since has another change time, which no
program can set back. A file changed within ``RACY_S`` of being stamped is not kept, since a second
write within the same clock tick could leave its times as they were (git's "racily clean" entries).
The cache is keyed by the engine too: another version of the loader or the model, of pydantic or of
PyYAML starts it afresh.

The entries are pickles, and unpickling runs code, so they live outside the knowledge base, in the
user's cache folder (``$ASSAY_CACHE_DIR``, else ``$XDG_CACHE_HOME/assay``, else ``~/.cache/assay``), in a
folder only the user can write: a knowledge base from elsewhere (a pull request, an archive) cannot
carry a cache of its own. A cache that cannot be read, or is not ours, is ignored, never an error;
so is one that cannot be written.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import stat
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

from assay.fingerprints import Stamp

T = TypeVar("T")

#: Seconds within which a file changed before being stamped is parsed again next time.
RACY_S = 2.0


#: From this many files of a kind on, their parses are kept between runs; below, parsing takes well under a second.
CACHE_FROM = 1000


#: Days after which a cache file nobody used is removed.
UNUSED_DAYS = 30


#: The modules and packages of Assay a parse depends on (they import no other): a change to one starts the cache
#: afresh. A package stands for every module in it, at any depth.
PARSE_MODULES = ("records", "model", "experiment", "ids", "diagnostics", "cache", "files", "fingerprints")


def folder() -> Path:
    """Where the cache files live."""
    if os.environ.get("ASSAY_CACHE_DIR"):
        return Path(os.environ["ASSAY_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "assay"


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


class ParseCache:
    """The parses of one kind of file (``kind``: records, say) under one knowledge base ``root``."""

    def __init__(self, root: Path, kind: str, also: tuple[str, ...] = ()):
        """``also``: the modules of Assay besides ``PARSE_MODULES`` that this kind's entries depend on."""
        self.root, self.kind = Path(root).resolve(), kind
        key = hashlib.sha256(f"{self.root}\0{kind}".encode()).hexdigest()[:24]
        try:
            self.path: Path | None = folder() / f"{key}.pickle"
        except (RuntimeError, KeyError):  # no home folder to hold a cache
            self.path = None
        self.engine = _engine(also)
        self._old: dict[str, tuple[Stamp, Any]] = self._read()
        self._new: dict[str, tuple[Stamp, Any]] = {}
        self._changed = False
        self._now = time.time_ns()

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
        data = {"engine": self.engine, "root": str(self.root), "kind": self.kind, "entries": self._new}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if not _private(self.path.parent):
                return
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as fh:
                    pickle.dump(data, fh, protocol=pickle.HIGHEST_PROTOCOL)
                os.replace(tmp, self.path)
            finally:
                Path(tmp).unlink(missing_ok=True)
            _prune(self.path.parent)
        except OSError:
            pass  # a cache that cannot be written only costs time

    def _read(self) -> dict[str, tuple[Stamp, Any]]:
        try:
            if self.path is None or not _private(self.path.parent) or not _private(self.path):
                return {}
            with open(self.path, "rb") as fh:
                data = pickle.load(fh)
            if (data["engine"], data["root"], data["kind"]) != (self.engine, str(self.root), self.kind):
                return {}
            entries = data["entries"]
            return entries if isinstance(entries, dict) else {}
        except Exception:  # noqa: BLE001 - missing, truncated, corrupt or foreign: parse afresh
            return {}


def _private(path: Path) -> bool:
    """Whether ``path`` is ours and nobody else can write it (else a pickle there could be anyone's)."""
    st = os.stat(path, follow_symlinks=False)
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not stat.S_ISLNK(st.st_mode)


def _prune(where: Path) -> None:
    cutoff = time.time() - UNUSED_DAYS * 86400
    for old in where.glob("*.pickle"):
        try:
            if old.stat().st_mtime < cutoff:
                old.unlink()
        except OSError:
            pass


class Uncached:
    """What a reader uses where nothing is kept (a small knowledge base): every value is computed afresh."""

    def memo(self, rel: str, current: Stamp | None, compute: Callable[[], T]) -> T:
        return compute()

    def save(self) -> None:
        pass


UNCACHED = Uncached()
