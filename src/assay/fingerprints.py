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
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def input_hash(parts: dict[str, str]) -> str:
    return digest(json.dumps(parts, sort_keys=True).encode())
