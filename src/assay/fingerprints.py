"""Fingerprints: short content hashes, the hash of a result's input parts, and ``stat`` stamps of files."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

Stamp = tuple[int, int, int, int, int]


def stamp(path: str | Path) -> Stamp | None:
    """What ``stat`` says of a regular file, not followed through a link; None for anything else."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return stamp_of(st) if stat.S_ISREG(st.st_mode) else None


def stamp_of(st: os.stat_result) -> Stamp:
    """The stamp of a regular file from what ``stat`` (or ``fstat`` of the file as opened) says of it."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


#: ``json.dumps(parts, sort_keys=True)`` without making an encoder each call (2.7 % of reading a ledger file).
_SORTED_JSON = json.JSONEncoder(sort_keys=True).encode


def input_hash(parts: dict[str, str]) -> str:
    return digest(_SORTED_JSON(parts).encode())
