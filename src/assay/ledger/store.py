"""The ledger on disk: where each result and figure lives, and the one reader and writer of those files.

``results/<CLAIM>/<check>.<device>.json`` with its figures beside it. A file that cannot be read, or is not a
result of this format, is a diagnostic, never a crash; a file is written atomically (``assay.files``).
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import msgspec
from pydantic import ValidationError

from assay import corpus
from assay.diagnostics import Diagnostic
from assay.files import Unreadable, is_temporary, link_out, read_in_stat, read_regular, resolve_inside, write_atomic
from assay.fingerprints import Stamp, input_hash, sha256, stamp, stamp_of
from assay.ledger.layout import RESULTS, figure_pattern, key_named, key_of, ledger_path
from assay.ledger.refusals import HINTS, LedgerProblem, diagnose, first_error  # noqa: F401 - read from here too
from assay.ledger.result import MAX_FILE_BYTES, Figure, Key, Result, to_json
from assay.svg import unsafe


@contextmanager
def locked(root: Path, claim: str) -> Iterator[None]:
    """Hold the lock of ``results/<claim>/`` (an exclusive ``flock`` on the folder itself, so nothing is left
    behind): every writer of the ledger reads what it replaces and writes under it, so a merge and a run that
    finish together never put an older pick over a newer result. Raises ``OSError`` before anything is written
    where ``results/`` or the claim's folder is a link or leads outside ``root``, or is not a folder."""
    base = Path(root) / RESULTS
    if (why := link_out(root, Path(RESULTS, claim))) is not None:
        raise OSError(errno.ENOTDIR, f"{why}; the ledger is written only inside the knowledge base")
    if os.path.lexists(base) and not base.is_dir():
        raise OSError(errno.ENOTDIR, "results/ is not a folder; the ledger is written only inside the knowledge base")
    folder = base / claim
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


class Unkeepable(OSError):
    """A result no reader would read back (past a bound of ``assay.ledger.result``); nothing was written."""


def serialised(result: Result) -> str:
    """``result`` as its ledger file holds it. Raises ``Unkeepable`` where a reader would refuse that file: a result
    made with ``model_copy`` was never validated, so it is read back here as every reader reads it."""
    text = to_json(result)
    if (size := len(text.encode("utf-8"))) > MAX_FILE_BYTES:
        raise Unkeepable(f"it is {size / 2**20:.1f} MiB as written, more than the {MAX_FILE_BYTES >> 20} MiB a ledger file holds")
    try:
        Result.model_validate_json(text)
    except ValidationError as e:
        raise Unkeepable(first_error(e)) from None
    return text


def write_result(root: Path, result: Result, svgs: dict[str, str] | None = None) -> Path:
    """Write the figures (``Figure.file`` -> SVG text) under their own names, then the result that names them, and
    only then remove this check's figures that it no longer names: at every moment the result on disk has its
    figures (a full disk fails the JSON and leaves the kept result and its figures as they were). Call it
    holding ``locked``. Raises ``Unkeepable`` before anything is written where the result would not read back."""
    path = ledger_path(root, result.claim, result.check, result.device)
    text = serialised(result)
    written = []
    try:
        for fig in result.figures:
            if svgs and fig.file in svgs:
                target = path.with_name(fig.file)
                if not target.exists():
                    written.append(target)
                write_atomic(target, svgs[fig.file])
        write_atomic(path, text)
    except BaseException:
        for target in written:
            target.unlink(missing_ok=True)
        raise
    named = {fig.file for fig in result.figures}
    mine = figure_pattern(result.check, result.device)
    for entry in os.scandir(path.parent):
        if mine.match(entry.name) and entry.name not in named and entry.is_file(follow_symlinks=False):
            os.unlink(entry.path)
    return path


def _result(plain: Result | bytes) -> Result:
    """A result as the ledger keeps it: one taken from the ledger cache stays the JSON it was read from until it is
    looked at, so a command that needs only the ledger's problems or stamps validates none."""
    return plain if isinstance(plain, Result) else Result.model_validate_json(plain)


@dataclass
class Ledger:
    """Every result under ``results/`` that can be trusted, and a diagnostic for every file that cannot.

    ``broken`` maps the key a bad file's path names to its diagnostic: such a check counts as an
    error, and no other result is affected. ``figures``: the figures each result names (file, hash),
    for the results that name any. ``stamps``: for each key a file's path names, what ``stat`` said of
    the file where the ledger cache keeps its reading (it then stands for the file's content), else None.
    """

    results: corpus.Lazy[Key, Result] = field(default_factory=lambda: corpus.Lazy(_result))
    diagnostics: list[Diagnostic] = field(default_factory=list)
    broken: dict[Key, Diagnostic] = field(default_factory=dict)
    figures: dict[Key, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    stamps: dict[Key, Stamp | None] = field(default_factory=dict)

    def get(self, key: Key) -> Result | None:
        return self.results.get(key)

    def readings(self, key: Key) -> Result | Readings | None:
        """What the rules of ``assay check`` read of the result ``key`` (``Readings``): the result where it is made,
        else decoded from its JSON for that alone (a tenth of validating it, which the file passed as it was read)."""
        plain = self.results.plain(key) if key in self.results else None
        return plain if plain is None or isinstance(plain, Result) else _READINGS.decode(plain)

    def reads_seeds(self, key: Key) -> bool:
        """Whether the result ``key`` read an expectation over seeds."""
        return any(e.seeds != "value" for e in self.readings(key).expectation)


class _Counterpart(msgspec.Struct):
    metric: str
    flag: str | None = None


class _Evaluated(msgspec.Struct):
    metric: str
    seeds: str = "value"
    against: list[_Counterpart] = []


class _Seeds(msgspec.Struct):
    seeds: list[float] = []


class Readings(msgspec.Struct):
    """Of a result's JSON, what the rules of ``assay check`` read (``assay.ledger.challenges``, ``reads_seeds``), by
    the names of ``Result``: its verdict, how each expectation read its seeds, its counterparts and their flags, and
    each metric's per-seed values."""

    verdict: str
    expectation: list[_Evaluated] = []
    metrics: dict[str, _Seeds] = {}
    measured = Result.measured  # the one rule, read from the verdict as a result reads it


_READINGS = msgspec.json.Decoder(Readings)


def read_result(root: Path, path: Path, raw: bytes | None = None) -> Result:
    """One ledger file, validated; raises ``LedgerProblem`` with the diagnostic's code and message.

    ``raw`` is the file's bytes where the caller has read them by the rule of ``read_regular``.
    """
    rel = path.relative_to(root).as_posix()
    if raw is None:  # read by the rule, and named by it when it fails
        try:
            raw = read_regular(root, path)
        except Unreadable as e:
            raise LedgerProblem("bad-ledger", f"{rel} {e}") from None
    try:
        result = Result.model_validate_json(raw)  # the common case, in one pass
    except ValidationError:
        result = diagnose(rel, raw)
    if input_hash(result.inputs.parts) != result.inputs.hash:  # the hash is recomputed from its parts, never trusted
        raise LedgerProblem("ledger-shape", f"{rel}: 'inputs.hash' is not the hash of its parts")
    named = key_of(rel)
    if named != result.key:
        raise LedgerProblem(
            "ledger-misplaced",
            f"{rel} holds the result of {'/'.join(result.key)}, not of {'/'.join(named) if named else 'its path'}",
        )
    return result


#: One ledger file as read: the key its result or its path names, the result (its JSON, or the model where
#: only the long way read it) or None, the diagnostic if it cannot be trusted, and the figures it names.
Entry = tuple[Key | None, "Result | bytes | None", Diagnostic | None, tuple[tuple[str, str], ...]]


#: An ``Entry`` as the cache keeps it: a result as its JSON (one only the long way read is not kept).
KEPT = tuple[tuple[str, str, str] | None, bytes | None, Diagnostic | None, tuple[tuple[str, str], ...]]


def _keepable(current: Stamp | None, entry: Entry) -> Stamp | None:
    """The stamp to keep ``entry`` under: none (not kept) where its result is a model, not the JSON it was read from."""
    return None if isinstance(entry[1], Result) else current


#: The modules of Assay a kept ledger reading depends on, besides ``assay.corpus.cache.PARSE_MODULES``.
CACHE_ALSO = (
    "svg",
    "ledger.result",
    "ledger.layout",
    "ledger.store",
    "ledger.refusals",
    "ledger.messages",
    "reading",
    "precision",
)


def read_ledger(root: Path, cache: bool = False) -> Ledger:
    """Read every ``results/*/*.json`` under ``root``; nothing here raises on a bad file.

    The common case is one pass: a plain file in a folder inside the root is read without resolving
    it (``read_in_stat``, which stamps it as opened) and validated straight from its bytes. Anything else (a
    link, a linked folder, a file that does not validate or sits at another result's path) takes ``read_result``, which reads by
    ``read_regular``'s rule and names the problem. ``cache``: keep the reading of every plain file
    between runs under its stamp (``assay.corpus``), for large knowledge bases; a result read from there
    is validated when it is looked at.
    """
    root, ledger = Path(root).resolve(), Ledger()
    store = corpus.ParseCache(root, "ledger", also=CACHE_ALSO, value=KEPT) if cache else None
    if store is None or store.empty:  # nothing to compare with: each folder is listed, each file stamped, where read
        folders = corpus.map_all(partial(_read_folders, root), _ledger_folders(root), FOLDER_COST)
        read = [e for f in folders for e in f]
        listed, stamps, found = [e[0] for e in read], [e[1] for e in read], [e[2] for e in read]
        if store is not None:
            for (f, n, _), current, entry in read:
                store.put(f"{RESULTS}/{f}/{n}", _keepable(current, entry), entry)
    else:  # stamped before it is read
        listed = [entry for folder in _ledger_folders(root) for entry in _entries_in(*folder)]
        stamps = [stamp(os.path.join(real, name)) if real else None for _, name, real in listed]
        found = [store.get(f"{RESULTS}/{f}/{n}", current) for (f, n, _), current in zip(listed, stamps)]
    todo = [i for i, entry in enumerate(found) if entry is None]
    # shared among forked processes where they are large: a ledger cloned afresh has every file to validate
    for i, (current, entry) in zip(todo, corpus.map_all(partial(_read_chunk, root), [listed[i] for i in todo])):
        found[i] = entry
        if store is not None:
            stamps[i] = current
            store.put(f"{RESULTS}/{listed[i][0]}/{listed[i][1]}", _keepable(current, entry), entry)
    for (folder, name, _), current, (key, result, diag, figures) in zip(listed, stamps, found):  # type: ignore[misc]
        if diag is not None:
            ledger.diagnostics.append(diag)
            if key is not None:
                ledger.broken[key] = diag
        elif key is not None and result is not None:
            ledger.results[key] = result
            if figures:
                ledger.figures[key] = figures
        named = key_named(folder, name)
        if named is not None:
            ledger.stamps[named] = current if store is not None and store.settled(current) else None
    if store is not None:
        store.save()
    return ledger


#: What reading one folder of results/ costs beside a record (``corpus.large``): a claim's checks and devices.
FOLDER_COST = 2


def ahead(root: Path) -> None:
    """Start reading every ledger file under the resolved ``root`` (``corpus.ahead``) if the ledger's cache keeps none:
    ``read_ledger`` takes what was read."""
    if not corpus.kept(root, "ledger"):
        corpus.ahead(partial(_read_folders, root), _ledger_folders(root), FOLDER_COST)


def _read_chunk(root: Path, listed: Sequence[tuple[str, str, str]]) -> list[tuple[Stamp | None, Entry]]:
    return [_read_entry(root, *item) for item in listed]


def _read_entry(root: Path, folder: str, name: str, real: str) -> tuple[Stamp | None, Entry]:
    """One ledger file as read, and its stamp as it was opened where the cache may keep it (a plain file in a
    folder inside the root)."""
    current = None
    if real:
        try:
            raw, info = read_in_stat(real, name)
            current = stamp_of(info)
            result = Result.model_validate_json(raw)
            placed = key_named(folder, name) == result.key
            if placed and input_hash(result.inputs.parts) == result.inputs.hash:
                return current, (result.key, raw, None, tuple((f.file, f.sha256) for f in result.figures))
        except (Unreadable, ValidationError):
            pass
    rel = f"{RESULTS}/{folder}/{name}"
    try:
        result = read_result(root, root / rel)
    except LedgerProblem as e:
        diag = Diagnostic(rel, 1, 1, e.code, e.message, HINTS[e.code])
        key = key_of(rel)
        return current, ((key if e.code != "ledger-misplaced" else None), None, diag, ())
    return current, (result.key, result, None, tuple((f.file, f.sha256) for f in result.figures))


#: A ledger file as listed: its folder's name, its name, its resolved folder where it may be read directly, else "".
Listed = tuple[str, str, str]


def _ledger_folders(root: Path) -> list[tuple[str, str, str]]:
    """``(name, path, real)`` of every folder in ``results/``, sorted; ``real`` is the resolved folder where it is
    no link and lies inside the root, else empty (the resolving read must decide)."""
    base = root / RESULTS
    try:
        base_real = str(resolve_inside(root, base, strict=False))
    except Unreadable:
        return []  # results/ itself leads outside: nothing in it is read (``assay check`` says so)
    try:
        folders = sorted(os.scandir(base), key=lambda e: e.name)
    except OSError:
        return []
    return [
        (f.name, f.path, os.path.join(base_real, f.name) if base_real and not f.is_symlink() else "")
        for f in folders
        if f.is_dir()
    ]


def leftovers(root: Path) -> list[str]:
    """The temporary files (``files.is_temporary``) in the folders of ``results/`` under the resolved ``root``,
    root-relative: what a run or a merge killed between a write and its rename left; nothing reads them."""
    out = []
    for folder, path, _ in _ledger_folders(root):
        try:
            names = os.listdir(path)
        except OSError:
            continue
        out += [f"{RESULTS}/{folder}/{name}" for name in sorted(names) if is_temporary(name)]
    return out


def _entries_in(folder: str, path: str, real: str) -> list[Listed]:
    """``(folder, name, real)`` of every ``*.json`` of a folder of ``results/``, sorted; ``real`` is the folder's
    where the file is plain (``_ledger_folders``), else empty."""
    try:
        entries = sorted((e for e in os.scandir(path) if e.name.endswith(".json")), key=lambda e: e.name)
    except OSError:
        return []
    return [(folder, e.name, real if real and e.is_file(follow_symlinks=False) else "") for e in entries]


def _read_folders(
    root: Path, folders: Sequence[tuple[str, str, str]]
) -> list[list[tuple[tuple[str, str, str], Stamp | None, Entry]]]:
    """For each folder of ``results/`` (``_ledger_folders``), each of its files as listed, stamped and read
    (``_read_entry``): a ledger no cache keeps is listed where it is read, each run's files asked for at once
    (``corpus.read_ahead``)."""
    listed = [_entries_in(*folder) for folder in folders]
    corpus.read_ahead(os.path.join(real, name) for items in listed for _, name, real in items if real)
    return [[(item, *_read_entry(root, *item)) for item in items] for items in listed]


def figure_bytes(root: Path, result: Result, fig: Figure) -> bytes | None:
    """The SVG of a figure if it is readable, matches the result's hash and passes the allow-list; else None."""
    path = ledger_path(root, result.claim, result.check, result.device).with_name(fig.file)
    try:
        data = read_regular(root, path)
    except Unreadable:
        return None
    return data if sha256(data) == fig.sha256 and unsafe(data) is None else None
