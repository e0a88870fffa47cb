"""Safe file access, the one rule for every file Assay reads from or writes to a knowledge base.

A file is read only if it is a regular file whose resolved path lies inside the root, and no larger than
``MAX_BYTES``; what Assay writes is written atomically (a temporary file beside it, fsync, rename), so a
reader never sees half a file and a crash leaves the old one.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import stat
import tempfile
import tokenize
from pathlib import Path

#: How every read here opens a file: never blocking on a FIFO, never inherited by a child process.
_READ = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
#: ``read_in_stat``'s own: the file itself may not be a link.
READ_IN_STAT = _READ | getattr(os, "O_NOFOLLOW", 0)

#: The largest file Assay reads from a knowledge base (records, verifiers, ledgers, figures).
MAX_BYTES = 8 * 2**20


class Unreadable(Exception):
    """A file in the knowledge base that Assay will not read, and why (a diagnostic's message)."""


def read_regular(root: Path, path: Path, limit: int = MAX_BYTES) -> bytes:
    """The bytes of ``path``, which must be a regular file whose resolved path lies inside ``root``.

    The one rule for every file Assay reads from a knowledge base: a symlink that leads outside
    (to a secret, a device) is refused (``resolve_inside``), so is anything that is not a regular file (a FIFO would
    hang, a character device never end) and anything over ``limit`` bytes. Raises ``Unreadable``.
    """
    return _read_open(str(resolve_inside(root, path)), _READ, limit)[0]


def sha256_regular(root: Path, path: Path) -> str:
    """The sha256 of ``path`` by the rule of ``read_regular``, streamed: an input of any size is hashed in full,
    so rewriting a large data file makes its results stale. Raises ``Unreadable``."""
    fd, _ = _open_regular(str(resolve_inside(root, path)), _READ)
    with os.fdopen(fd, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


class LinkOut(Unreadable):
    """A path that lies outside the knowledge base once its links are followed (``resolve_inside``)."""


def resolve_inside(root: Path, path: Path, *, strict: bool = True) -> Path:
    """``path`` with every link on its way followed, which must lie inside the resolved ``root``: the one rule that
    keeps what Assay reads, writes and deletes inside the knowledge base (or the repository that holds a site).

    ``strict``: the path must exist (a file to read); else what exists of it is followed and the rest taken as named,
    so a folder not made yet (``build/site`` before the first build) passes, and a link to a place outside that does
    not exist yet is refused all the same. Raises ``LinkOut`` where it lies outside, else ``Unreadable`` where it
    cannot be resolved; ``link_out`` names the step of a path whose link leaves.
    """
    root = Path(root).resolve()
    try:
        resolved = Path(path).resolve(strict=strict)
    except (OSError, RuntimeError) as e:  # missing, a symlink loop (RuntimeError before Python 3.13, ELOOP after)
        why = "a symlink loop" if isinstance(e, RuntimeError) or e.errno == errno.ELOOP else e.strerror
        raise Unreadable(f"cannot be read ({why})") from None
    if not resolved.is_relative_to(root):
        raise LinkOut(f"is a link to a {'file' if resolved.is_file() else 'folder'} outside the knowledge base")
    return resolved


def link_out(root: Path, path: Path) -> str | None:
    """Why ``path``, where it names a place inside ``root`` (a top-level folder of the knowledge base or of its build:
    claims/, verify/, results/, build/site), leaves it once its links are followed (``resolve_inside``, not strict),
    naming the first step whose link leaves, root-relative (``build/ is a link to a folder outside the knowledge
    base``: the link that leaves, not the folder below it); None where it stays inside, or is named outside ``root``
    (``mkdocs build -d /tmp/out``: the user's own choice). Checked before anything in it is read, written or deleted."""
    root, path = Path(root).absolute(), Path(os.path.abspath(Path(root) / path))
    named = next((base for base in (root, root.resolve()) if path.is_relative_to(base)), None)
    walked = named
    for part in path.relative_to(named).parts if named else ():  # the first step whose link leaves is the one named
        walked = walked / part
        try:
            resolve_inside(root, walked, strict=False)
        except Unreadable as e:
            return f"{walked.relative_to(named).as_posix()}{'' if os.path.isfile(walked) else '/'} {e}"
    return None


def refuse_link_out(root: Path, path: Path) -> None:
    """Raise ``LinkOut`` with the message of ``link_out`` where ``path`` leaves ``root`` (what site/plugin.py calls)."""
    if (why := link_out(root, path)) is not None:
        raise LinkOut(why)


class Miscoded(Unreadable):
    """A Python module whose coding cookie declares another coding than UTF-8 (``python_text``)."""


def python_text(data: bytes) -> str:
    """The text of a Python module as Assay reads it (its static rules, the site's code page), which must be the text
    Python runs: UTF-8. Raises ``Miscoded`` where a coding cookie (PEP 263, ``# -*- coding: utf-7 -*-``) declares
    another coding, in which Python would run other text than Assay reads (in UTF-7 ``+AAo-`` is a line break, so
    what reads as a comment runs); ``UnicodeDecodeError`` where it is not UTF-8."""
    try:
        coding, lines = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:  # a coding Python does not know: it refuses to run the module at all
        coding, lines = "utf-8", []
    if coding not in ("utf-8", "utf-8-sig"):
        raise Miscoded(
            f"declares the coding {coding!r} on line {len(lines)}, in which Python runs other text than Assay reads; "
            "Python modules of a knowledge base are UTF-8"
        )
    return data.decode("utf-8-sig" if coding == "utf-8-sig" else "utf-8")


def read_in_stat(folder: str, name: str, limit: int = MAX_BYTES) -> tuple[bytes, os.stat_result]:
    """``read_regular`` for a file named ``name`` in ``folder``, a resolved folder already known to lie inside the
    root: the file itself must not be a link (``O_NOFOLLOW``), so nothing is resolved. With the bytes comes what
    ``fstat`` said of the file as it was opened, before a byte was read: its stamp (``fingerprints.stamp_of``),
    which a write after the open changes, so it never stands for content newer than what was read."""
    return _read_open(os.path.join(folder, name), READ_IN_STAT, limit)


def _open_regular(path: str, flags: int) -> tuple[int, os.stat_result]:
    """``path`` opened with ``flags``, and what ``fstat`` says of what was opened (so a swap after resolve() is caught
    too), which must be a regular file. Raises ``Unreadable``."""
    try:
        fd = os.open(path, flags)
    except OSError as e:
        why = "it is a link" if e.errno == errno.ELOOP else e.strerror
        raise Unreadable(f"cannot be read ({why})") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise Unreadable("is not a regular file" + (" (a directory)" if stat.S_ISDIR(info.st_mode) else ""))
    return fd, info


def _read_open(path: str, flags: int, limit: int) -> tuple[bytes, os.stat_result]:
    fd, info = _open_regular(path, flags)
    try:
        if info.st_size > limit:
            raise Unreadable(f"is {info.st_size / 2**20:.1f} MiB, more than the {limit / 2**20:g} MiB Assay reads")
        # one byte more than fstat says is asked for, so an unchanged file is read in one call, its end found by the
        # short read; a file that grew or shrank meanwhile is read on to its end, or past the limit
        chunks = [os.read(fd, info.st_size + 1)]
        size = len(chunks[0])
        while size != info.st_size and size <= limit and (chunk := os.read(fd, 1 << 20)):
            chunks.append(chunk)
            size += len(chunk)
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise Unreadable(f"grew past the {limit / 2**20:g} MiB Assay reads")
    return data, info


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: The process's umask, read once at import (reading it means setting it, which is not thread-safe later).
_UMASK = _umask()


#: The end of the name of ``write_atomic``'s temporary file, ``.<name>.<random>.tmp`` beside its target: what a run
#: killed between the write and the rename leaves (``is_temporary``; a knowledge base's .gitignore leaves it out).
TEMPORARY = ".tmp"


def is_temporary(name: str) -> bool:
    """Whether a file's ``name`` is that of a temporary file ``write_atomic`` makes."""
    return name.startswith(".") and name.endswith(TEMPORARY)


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write ``data`` to ``path`` atomically: a temp file beside it, fsync, rename; cleaned up on failure.

    The one writer of the ledger: a killed run leaves either the old file or the new one, never half (and, killed
    before it could clean up, its temporary file: ``is_temporary``).
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMPORARY)
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # as open() would make it: mkstemp's 0600 would hide the ledger from its readers
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
