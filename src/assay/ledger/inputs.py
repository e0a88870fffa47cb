"""What a result depends on, and whether it still does: freshness that every machine agrees on.

A result's inputs are all **in the repository**: the check's measurement definition (``records.parts``: its
verifier, seeds, reads and metric declarations, never the sentences it tests or its expectations), the verifier
module with the local modules it imports (absolute, relative and ``importlib`` imports, package ``__init__`` files,
the ``conftest.py`` chain), the data files the check declares it reads,
the pins of the committed lock file, and the device kind. Each part is a short hash or a version;
the result is stale when a part differs. What the machine had (its torch build, CPU, GPU) is the
result's environment (``assay.ledger.environment``): shown, compared with the lock ("off-lock"), never a
reason for staleness.

A module's part is a digest of what Python runs (``records.code``): its docstrings, comments and the spacing within
a line are words, no input. A result recorded under an earlier scheme is restated by what it ran (``InputParts.upgrade``,
the one place where a recorded part meets today's). Where a module's part was the digest of its bytes: the module's
bytes now, where it still has them, else the committed version that had them (``ledger.committed``), which then
compares with today's as any part does; where neither has them, it is stale, since what it ran cannot be known. Where
it was the digest of its tokens: the module now, where its tokens are the same.

``InputParts(root)`` reads each file once, so the parts of every check of a large knowledge base cost
one pass over the files they name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from contextlib import suppress
from pathlib import Path

from assay import corpus, data_files
from assay.diagnostics import Diagnostic
from assay.experiment import Check
from assay.files import Unreadable, python_text, read_regular, sha256_regular
from assay.fingerprints import stamp
from assay.ledger.committed import restated
from assay.model import Claim
from assay.records.code import TOKENS, code_digest, made_from_bytes, token_digest
from assay.records.parts import record_parts
from assay.records.verifiers import FILE_IMPORT, Reading, module_imports, readings, source_problems

#: The modules of Assay a kept reading of a module (its imports, its code's digest) depends on, besides
#: ``assay.corpus.cache.PARSE_MODULES``.
CACHE_ALSO = ("ledger.inputs", "ledger.committed", "ledger.git")

#: The committed lock file of exact versions; `make lock` regenerates it from pyproject.toml.
LOCK_FILE = "requirements.lock"


#: Packages whose pinned version is an input of every result: what the verifiers compute with.
PINNED = ("torch", "numpy", "scikit-learn", "scipy")


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_pins(root: Path) -> dict[str, str]:
    """``name -> version`` of every ``name==version`` line of the lock file (empty when there is none)."""
    try:
        text = read_regular(root, Path(root) / LOCK_FILE).decode("utf-8", "replace")
    except Unreadable:
        return {}
    pins = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;\\#]+)", line)
        if m:
            pins[_normalise(m[1])] = m[2]
    return pins


def public(version: str) -> str:
    """The version without its local build tag: ``2.13.0+cpu`` -> ``2.13.0``."""
    return version.split("+", 1)[0]


def off_lock(packages: dict[str, str], pins: dict[str, str]) -> list[str]:
    """The packages a machine had at another version than the lock pins (build tags aside)."""
    out = []
    for name, version in sorted(packages.items()):
        pin = pins.get(_normalise(name))
        if pin is not None and public(pin) != public(version):
            out.append(f"{name} {version} (lock: {pin})")
    return out


class InputParts:
    """The input parts of every check, for one state of the repository under ``root``."""

    def __init__(self, root: Path, cache: bool = False):
        """``cache``: keep each module's reading between runs (``assay.corpus``), for large knowledge bases."""
        self.root = Path(root).resolve()
        self._cached = cache
        runs = corpus.ParseCache(self.root, "code", also=CACHE_ALSO, value=str) if cache else None
        self._runs = runs or corpus.UNCACHED
        self.pins = lock_pins(self.root)
        self._digests: dict[Path, str] = {}
        self._data: dict[str, str] = {}
        self._codes: dict[Path, str] = {}
        self._restatements: dict[tuple[str, str], str] = {}
        self._imports: dict[Path, list[Path]] = {}
        self._closures: dict[Path, tuple[Path, ...]] = {}
        self._verifiers: dict[str, Reading | str] | None = None
        self._code_parts: dict[str, dict[str, str]] = {}
        self._definitions: dict[tuple[str, str], list[tuple[str, str]]] = {}
        self._off_lock: dict[tuple[tuple[str, str], ...], list[str]] = {}

    def parts(self, claim: Claim, check: Check, device: str) -> dict[str, str]:
        """Every input of ``check``'s result on ``device``, each hashed or versioned."""
        parts = dict(self._record_parts(claim, check))
        parts.update(self.code_parts(check.verifier.split("::")[0]))
        for name in check.reads:
            parts[f"data:{name}"] = self.data_digest(name)
        for package in PINNED:
            parts[f"pin:{package}"] = self.pins.get(package, "unpinned")
        parts["device"] = device
        return parts

    def off_lock(self, packages: dict[str, str]) -> list[str]:
        """``off_lock`` against this repository's pins, once per distinct set of installed versions."""
        key = tuple(sorted(packages.items()))
        if key not in self._off_lock:
            self._off_lock[key] = off_lock(packages, self.pins)
        return list(self._off_lock[key])

    def code_parts(self, module: str) -> dict[str, str]:
        """``code:<path>`` -> hash for the verifier module ``module`` (root-relative) and what it loads."""
        if module not in self._code_parts:
            closure = self.closure(self.root / module)
            self._code_parts[module] = {f"code:{self._rel(path)}": self._code_digest(path) for path in closure}
        return self._code_parts[module]

    def _code_digest(self, path: Path) -> str:
        """The digest of what Python runs of a module (``records.code``), or why Assay cannot read it as the text
        Python runs (``files.python_text``): a check whose code cannot be read so is not run (``unreadable_code``).
        A module Python would not compile keeps ``file_digest``: pytest reports it where it collects the module."""
        path = Path(path).absolute()
        if path not in self._codes:
            digest, reading = self.file_digest(path), self._reading(path)
            if isinstance(reading, Reading) and reading.code:
                digest = reading.code  # a verifier module: from the parse that read its tests
            elif not digest.startswith(UNREADABLE):
                current = stamp(path) if self._cached and path.parent.resolve() == path.parent else None
                try:
                    digest = self._runs.memo(self._rel(path), current, lambda: self._read_code(path)) or digest
                except Unreadable as e:
                    digest = f"{UNREADABLE}{e}"
            self._codes[path] = digest
        return self._codes[path]

    def _read_code(self, path: Path, digest: Callable[[str], str | None] = code_digest) -> str:
        try:
            return digest(python_text(read_regular(self.root, path))) or ""
        except UnicodeDecodeError:
            return ""  # Python refuses to run it too; pytest reports it where it collects the module

    def upgrade(self, recorded: dict[str, str]) -> dict[str, str]:
        """The parts a result recorded, as they compare with today's: each ``code:`` part of an earlier scheme is
        restated as the digest of what it ran (``_restated``). The one place where a recorded part meets today's;
        every comparison reads it (``stale``, ``merge.comparable``), so no result fresh before a scheme went stale by
        it, and none recorded from committed bytes goes stale by a later edit of words alone."""
        out = recorded
        for key, value in recorded.items():
            if key.startswith("code:") and (made_from_bytes(value) or value.startswith(TOKENS)):
                now = self._restated(key, value)
                if now != value:
                    out = out if out is not recorded else dict(recorded)
                    out[key] = now
        return out

    def _restated(self, key: str, value: str) -> str:
        """What a ``code:`` part of an earlier scheme ran, as today's scheme writes it, once per part and value (the
        results of one module, hundreds at scale, recorded the same). A part made from bytes (``made_from_bytes``,
        recorded before the token digest): today's digest where the file still has those bytes; else that of the
        committed version that had them (``committed.restated``), where the history has one. A part made from tokens
        (``TOKENS``): today's digest where the module's tokens are still those. Where none of these holds, the part
        stays, and differs: what that result ran cannot be known, or is not what the module runs now."""
        if (key, value) not in self._restatements:
            path, now = (self.root / key[5:]).absolute(), value
            if value.startswith(TOKENS):
                with suppress(Unreadable):  # the part then says so today, and differs
                    if self._read_code(path, token_digest) == value:
                        now = self._code_digest(path)
            elif self.file_digest(path) == value:
                now = self._code_digest(path)
            else:
                now = restated(self.root, key[5:], value) or value
            self._restatements[key, value] = now
        return self._restatements[key, value]

    def stale(self, recorded: dict[str, str], current: dict[str, str]) -> list[str]:
        """Why a result that recorded the parts ``recorded`` is stale against today's ``current`` (``stale_reasons`` of
        its ``upgrade``); empty if fresh."""
        if recorded == current:
            return []
        return stale_reasons(self.upgrade(recorded), current)

    def closure(self, module: Path) -> tuple[Path, ...]:
        """``module``, the conftest files above it, and every local module they import, transitively."""
        module = Path(module).absolute()
        if module not in self._closures:
            seen: set[Path] = set()
            todo = [module, *self._conftests(module)]
            while todo:
                path = todo.pop()
                if path not in seen:
                    seen.add(path)
                    todo += self._imported(path)
            self._closures[module] = tuple(sorted(seen))
        return self._closures[module]

    def imported_problems(self, modules: Iterable[str]) -> list[Diagnostic]:
        """What ``assay check`` says of the local modules the verifier ``modules`` (root-relative) load, besides the
        verifier modules themselves (``records.verifiers`` reads those): one it cannot read inside the knowledge base,
        and what a module's text says against it (``verifiers.source_problems``: a coding other than UTF-8,
        bidirectional controls). A check that loads such a module is not run (``unreadable_code``)."""
        verifier_modules = {self.root / m for m in modules}
        loaded = {path for m in sorted(verifier_modules) for path in self.closure(self.root / m)} - verifier_modules
        out = []
        for path in sorted(loaded):
            rel = self._rel(path)
            try:
                out += source_problems(rel, read_regular(self.root, path))
            except Unreadable as e:
                out.append(
                    Diagnostic(
                        rel, 1, 1, "unreadable-file", f"{rel} {e}", "a verifier loads only files inside the knowledge base"
                    )
                )
        return out

    def _record_parts(self, claim: Claim, check: Check) -> list[tuple[str, str]]:
        key = (claim.id, check.id)
        if key not in self._definitions:
            self._definitions[key] = record_parts(claim, check)
        return self._definitions[key]

    def file_digest(self, path: Path) -> str:
        """The hash of a file in the repository, or why it cannot be read (which is itself an input)."""
        path = Path(path).absolute()
        if path not in self._digests:
            try:  # streamed: a file of any size is an input in full
                self._digests[path] = sha256_regular(self.root, path)[:16]
            except Unreadable as e:
                self._digests[path] = f"{UNREADABLE}{e}"
        return self._digests[path]

    def data_digest(self, name: str) -> str:
        """The hash of the file a check ``reads`` as ``name``, in the repository or an installed package
        (``assay.data_files``), or why it cannot be read: a check whose data is unreadable is not run (``unreadable_data``)."""
        if name not in self._data:
            try:
                self._data[name] = data_files.sha256(self.root, name)[:16]
            except Unreadable as e:
                self._data[name] = f"{UNREADABLE}{e}"
        return self._data[name]

    def _rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() if path.is_relative_to(self.root) else path.as_posix()

    def _conftests(self, module: Path) -> list[Path]:
        """The ``conftest.py`` and package ``__init__.py`` files pytest runs before ``module``, up to the root."""
        folder, out = module.parent, []
        while folder.is_relative_to(self.root):
            out += [folder / name for name in ("conftest.py", "__init__.py") if (folder / name).is_file()]
            if folder == self.root:
                break
            folder = folder.parent
        return out

    def save(self) -> None:
        """Keep what was parsed for the next run (when caching): what each module runs."""
        self._runs.save()

    def _reading(self, path: Path) -> Reading | str | None:
        """When caching, the reading of the verifier module at ``path`` kept between runs (``verifiers.readings``: one
        parse for its tests, its imports and its code's digest); else, and for the few other local modules (a
        conftest, a helper), None: they are read now."""
        if self._cached and self._verifiers is None:
            self._verifiers = readings(self.root, cache=True)
        return (self._verifiers or {}).get(self._rel(path))

    def _names_of(self, path: Path, package: str) -> list[str]:
        """The dotted names ``path`` imports: a verifier module's from its reading (``_reading``), any other read now."""
        reading = self._reading(path)
        if reading is not None:
            return [] if isinstance(reading, str) else list(reading.imports)
        try:
            return module_imports(read_regular(self.root, path), package)
        except Unreadable:
            return []  # the digest says it is unreadable

    def _imported(self, path: Path) -> list[Path]:
        if path in self._imports:
            return self._imports[path]
        folder = path.parent
        package = ".".join(folder.relative_to(self.root).parts) if folder.is_relative_to(self.root) else ""
        found = []
        for name in self._names_of(path, package):
            if name.startswith(FILE_IMPORT):  # imported by its path: relative to the importing module's folder
                candidate = (folder / name[len(FILE_IMPORT) :]).absolute()
                if candidate.is_file() and candidate.is_relative_to(self.root):
                    found.append(candidate)
                continue
            bits = name.split(".")
            # pytest puts the root on sys.path (pythonpath = ["."]) and a test module's own folder too
            for base in (self.root, folder):
                for candidate in (base.joinpath(*bits).with_suffix(".py"), base.joinpath(*bits, "__init__.py")):
                    if candidate.is_file() and candidate.absolute().is_relative_to(self.root):
                        found.append(candidate.absolute())
        self._imports[path] = found
        return found


#: How a part reads where its file could not be read (``file_digest``): the reason is itself the input.
UNREADABLE = "unreadable: "


def unreadable_code(parts: dict[str, str]) -> list[str]:
    """The code of a check that Assay could not read as an input (``path why``): a check that runs it would write a
    result that never goes stale when that code changes, so it is not run."""
    return _unreadable(parts, "code:")


def unreadable_data(parts: dict[str, str]) -> list[str]:
    """The data files a check reads that Assay could not read (``name why``): a run would measure an input nobody can
    name (a package missing, another file), so it is not run."""
    return _unreadable(parts, "data:")


def _unreadable(parts: dict[str, str], kind: str) -> list[str]:
    return [
        f"{key[len(kind) :]} {value[len(UNREADABLE) :]}"
        for key, value in parts.items()
        if key.startswith(kind) and value.startswith(UNREADABLE)
    ]


def stale_reasons(recorded: dict[str, str], current: dict[str, str]) -> list[str]:
    """Why a result computed from ``recorded`` inputs is stale against ``current`` ones; empty if fresh."""
    keys = sorted(set(recorded) | set(current))
    return [_reason(key, recorded.get(key), current.get(key)) for key in keys if recorded.get(key) != current.get(key)]


def _reason(key: str, before: str | None, now: str | None) -> str:
    kind, _, name = key.partition(":")
    if kind == "check":
        claim, _, check = name.partition("#")
        what = f"the definition of check {check} in {claim}"
    elif kind == "statement":
        what = f"the statement of {name}"
    elif kind == "words":
        claim, _, check = name.partition("#")
        what = f"the words of the {claim} assertions that check {check} tests"
    elif kind == "code":
        what = name
    elif kind == "data":
        what = f"the data file {name}"
    elif kind == "pin":
        if before and now:
            return f"the lock's pin of {name} changed from {before} to {now}"
        return f"the lock's pin of {name} changed"
    else:
        what = name or kind
    if before is None:
        return f"{what} is a new input"
    if now is None:
        return f"{what} is no longer an input"
    if kind == "device":
        return f"the device changed from {before} to {now}"
    return f"{what} changed"
