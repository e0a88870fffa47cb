"""What a committed version of a module ran: a ``code:`` part recorded from a file's bytes, restated from history.

A result recorded before the code digest (``records.code``) holds, for each module it ran, the digest of the
file's bytes (``sha256[:16]``, ``InputParts.file_digest``). Where the file has other bytes now, the version the result
ran may still be in the repository's history: ``restated`` finds the committed version of that exact path whose
bytes have the recorded digest and gives the digest of what its text runs (``code_digest``), which then compares
with today's as any part does. So a docstring or comment edit stales such a result no more than one recorded today;
a code edit still does. Where no version has the digest (no git, a shallow clone, bytes never committed, a digest
made up), there is nothing to restate, and the result reads stale as before.

Git is asked only for a path inside the knowledge base, once per path in a process: one ``git log`` for the blobs of
the path's last ``VERSIONS`` versions (the path as named: no rename followed, no pattern), one ``git cat-file`` for
their bytes. A version's text is only parsed, never run, and a blob over ``files.MAX_BYTES`` (more than Assay
reads of a module) is passed over. What is found stays true (a blob's bytes are its identity); a version committed
after git was asked about its path is seen by the next process.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from assay.files import MAX_BYTES, Unreadable, python_text, resolve_inside
from assay.fingerprints import digest
from assay.ledger.git import blobs, output, repository
from assay.records.code import code_digest

#: How many of a path's latest versions are read: enough for every result a knowledge base keeps, few enough to read
#: in a moment.
VERSIONS = 200

#: ``(root, path)`` -> the digest of each committed version's bytes -> its blob, as git answered once per process.
_versions: dict[tuple[Path, str], dict[str, str]] = {}

#: blob -> the code digest of its text (None: it is no text Python would run), made once per process.
_tokens: dict[str, str | None] = {}


def restated(root: Path, path: str, recorded: str) -> str | None:
    """The code digest of the committed version of ``path`` (relative to the knowledge base ``root``) whose bytes'
    digest is ``recorded``; None where no version read has it, where that version is no text Python would run, or
    where ``path`` lies outside the knowledge base (git is then not asked)."""
    root = Path(root).resolve()
    key = (root, path)
    if key not in _versions:
        _versions[key] = _read(root, path, recorded) if _inside(root, path) and repository(root) else {}
    blob = _versions[key].get(recorded)
    if blob is not None and blob not in _tokens:  # a second old digest of the same path: its one blob read again
        _tokens[blob] = next((_tokenized(data) for _, data in blobs(root, [blob], limit=MAX_BYTES)), None)
    return _tokens.get(blob) if blob is not None else None


def _inside(root: Path, path: str) -> bool:
    """Whether ``path`` names a file of the knowledge base: relative, never climbing, not behind a link that leaves."""
    pure = PurePosixPath(path)
    if not path or pure.is_absolute() or ".." in pure.parts:
        return False
    try:
        resolve_inside(root, root / path, strict=False)
    except Unreadable:
        return False
    return True


def _read(root: Path, path: str, wanted: str) -> dict[str, str]:
    """The digest of the bytes of each of ``path``'s last ``VERSIONS`` committed versions -> its blob; the version
    whose digest is ``wanted`` digested on the way."""
    log = output(
        root,
        *("--literal-pathspecs", "-c", "core.quotepath=off", "log", f"--max-count={VERSIONS}", "--full-history"),
        *("--diff-merges=first-parent", "--no-follow", "--no-renames", "--no-show-signature", "--raw", "--no-abbrev"),
        *("--format=", "--", path),
    )
    if not log:
        return {}
    ids = dict.fromkeys(b for line in log.splitlines() if line.startswith(":") and (b := _blob(line)))
    found: dict[str, str] = {}
    for blob, data in blobs(root, ids, limit=MAX_BYTES):
        found.setdefault(said := digest(data), blob)
        if said == wanted and blob not in _tokens:
            _tokens[blob] = _tokenized(data)
    return found


def _blob(line: str) -> str | None:
    """The blob a ``--raw`` line gives the path after its commit (None where the commit deleted it)."""
    fields = line.partition("\t")[0].split()
    blob = fields[3] if len(fields) > 3 else ""
    return blob if blob.strip("0") else None


def _tokenized(data: bytes) -> str | None:
    try:
        return code_digest(python_text(data))
    except (Unreadable, UnicodeDecodeError):  # a coding other than UTF-8: Python would run other text than is read
        return None
