"""The user's cache folder: where it is, and its files read and written only as this user's own.

The folder is ``$ASSAY_CACHE_DIR``, else ``$XDG_CACHE_HOME/assay``, else ``~/.cache/assay``, and never one inside the
knowledge base (``files.resolve_inside``: a cache there could arrive with a commit or an archive). It and each file are
checked as they are opened (a real folder and a regular file of this user that nobody else can write), so swapping
either between a check and its use does not help. The parse cache (``assay.corpus.cache``) keeps its data here;
the history's summaries are read and written with ``read_plain`` and ``write_plain``.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from pathlib import Path

from assay.files import LinkOut, Unreadable, resolve_inside


def folder() -> Path:
    """Where the cache files live."""
    if os.environ.get("ASSAY_CACHE_DIR"):
        return Path(os.environ["ASSAY_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "assay"


def outside(root: Path) -> Path | None:
    """The cache folder, where it lies outside the knowledge base at the resolved ``root`` (``files.resolve_inside``);
    else None: a cache inside could come with a commit or an archive."""
    try:
        path = folder()
        resolve_inside(root, path, strict=False)
    except LinkOut:
        return path
    except (RuntimeError, KeyError, Unreadable):  # no home folder to hold a cache; unresolvable: as good as inside
        return None
    return None


def read_plain(root: Path, name: str) -> bytes | None:
    """The bytes of the cache file ``name`` that holds plain data (JSON: ``assay.ledger.history``'s summaries), where
    the cache folder lies outside the knowledge base at ``root`` (``read_private``); else None."""
    return read_private(outside(Path(root).resolve()), name)


def write_plain(root: Path, name: str, data: bytes) -> None:
    """``data`` written to the cache file ``name`` by the rules of ``read_plain`` (``write_private``)."""
    write_private(outside(Path(root).resolve()), name, data)


def read_private(kept_in: Path | None, name: str) -> bytes | None:
    """The bytes of the file ``name`` in the cache folder ``kept_in`` (None: there is none), where the folder and the
    file are this user's alone, checked as they are opened; else None."""
    dir_fd = None if kept_in is None else open_private(kept_in)
    if dir_fd is None:
        return None
    try:
        return read_in(dir_fd, name)
    finally:
        os.close(dir_fd)


def write_private(kept_in: Path | None, name: str, data: bytes, then: Callable[[int], None] | None = None) -> None:
    """``data`` written to the file ``name`` in the cache folder ``kept_in`` (made where missing) by the rules of
    ``read_private``, then ``then`` of the folder's descriptor; a cache that cannot be written is no error."""
    if kept_in is None:
        return
    with contextlib.suppress(OSError):
        kept_in.mkdir(parents=True, exist_ok=True, mode=0o700)
        dir_fd = open_private(kept_in)
        if dir_fd is None:
            return
        try:
            write_in(dir_fd, name, data)
            if then is not None:
                then(dir_fd)
        finally:
            os.close(dir_fd)


def _ours(st: os.stat_result) -> bool:
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def open_private(path: Path) -> int | None:
    """A descriptor of the cache folder if it is a real folder (no link) of this user that nobody else can write."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    if _ours(os.fstat(fd)):
        return fd
    os.close(fd)
    return None


def read_in(dir_fd: int, name: str) -> bytes | None:
    """The bytes of ``name`` in the checked folder, if it is a regular file of this user (checked as opened)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), dir_fd=dir_fd)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        return fh.read() if stat.S_ISREG(st.st_mode) and _ours(st) else None


def write_in(dir_fd: int, name: str, data: bytes) -> None:
    """``data`` written to ``name`` in the checked folder atomically: a private temporary file, then a rename, so
    a reader meets the old file or the new one, whole.

    Not synced to disk: a cache file cut short by a crash does not decode and is ignored, and syncing the records'
    cache of a large knowledge base cost most of a second.
    """
    tmp = f".{name}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
