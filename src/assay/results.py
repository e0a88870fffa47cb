"""The evidence ledger: ``results/<CLAIM>/<check>.<device>.json``, one typed record per check and device.

``Result`` is the one declaration of a ledger file (its JSON Schema, ``schema/result.schema.json``, is
generated from it). The pytest controller builds it; ``write_result`` writes it atomically (temp file,
fsync, rename), figures first, so the JSON never names a figure that is not on disk; ``read_ledger``
reads every file and turns whatever it cannot trust into a diagnostic, never an exception. The path
is the key: a file whose claim, check or device differs from its path is not read as evidence.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import tempfile
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from assay.cache import ParseCache, Stamp, stamp
from assay.diagnostics import Diagnostic
from assay.loader import Unreadable, read_in, read_regular
from assay.model import CLAIM_ID, SLUG, Device, Tier

FORMAT = 2
Verdict = Literal["passed", "failed", "known-failing", "inconclusive", "error"]
#: How an expectation came out: held, did not hold, or seeds disagree about it.
Outcome = Literal["holds", "fails", "inconclusive"]
ErrorKind = Literal["error", "timeout", "crash"]
Key = tuple[str, str, str]  # (claim, check, device)

#: A metric or figure name: what `evidence.metric()` and `evidence.figure()` accept.
NAME = r"^[a-z][a-z0-9_]*$"
#: When a run finished, in UTC.
TIMESTAMP = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"
_CLAIM_FOLDER = re.compile(CLAIM_ID)
_FILE = re.compile(r"^(?P<check>[a-z0-9]+(?:-[a-z0-9]+)*)\.(?P<device>cpu|cuda)\.json$")


def _finite(x: float) -> float:
    if not math.isfinite(x):
        raise ValueError("must be a finite number")
    return x


Finite = Annotated[float, AfterValidator(_finite)]
Name = Annotated[str, StringConstraints(pattern=NAME)]
Timestamp = Annotated[str, StringConstraints(pattern=TIMESTAMP)]


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Metric(_Part):
    """One number a verifier recorded."""

    value: Finite = Field(description="The number the expectation reads (a mean or an extreme over seeds).")
    unit: str | None = Field(None, description="Its unit (`nats`, `fraction`, `MSE`), where the verifier gave one.")
    seeds: list[Finite] = Field(default_factory=list, description="The per-seed values it summarises, where there are several.")


class PaperNumber(_Part):
    """The reported number an expectation is linked to (the same quantity in the same unit as the metric)."""

    value: float = Field(description="The number as the source reports it.")
    bound: Literal[">", ">=", "<", "<=", "~"] | None = Field(None, description="Where the source reports a bound (`>99.9`).")
    unit: str = Field(description="Its unit.")
    quantity: str | None = Field(None, description="What kind of number it is.")
    source: str = Field(description="The source that reports it.")
    locator: str = Field(description="Where the source reports it.")


class Evaluated(_Part):
    """One expectation of the check, as evaluated against what was measured."""

    metric: Name = Field(description="Metric name.")
    op: Literal[">", ">=", "<", "<=", "=="] = Field(description="Comparison.")
    value: float = Field(description="Threshold.")
    tol: float | None = Field(None, description="Absolute tolerance of `==`.")
    reported: str | None = Field(None, description="The `reported` number it is linked to.")
    control: bool = Field(False, description="Whether the record marks it a control.")
    measured: Finite = Field(description="The measured value (the mean, where the verifier recorded per-seed values).")
    holds: bool = Field(description="Whether the comparison held (`outcome` is `holds`).")
    outcome: Outcome | None = Field(
        None, description="`holds`, `fails`, or `inconclusive` (seeds disagree, or the mean's interval straddles the threshold). "
        "Unset in results written before seeds were read: `holds` decides."
    )
    seeds: Literal["value", "all", "mean"] = Field(
        "value", description="How it was read: the one value, every seed, or the mean's interval.")
    seeds_holding: int | None = Field(None, ge=0, description="With `all`: how many seeds satisfied it.")
    seeds_total: int | None = Field(None, ge=0, description="How many seeds were read.")
    interval: tuple[float, float] | None = Field(None, description="With `mean`: the confidence interval of the mean.")
    unit: str | None = Field(None, description="The metric's declared unit.")
    paper: PaperNumber | None = Field(None, description="The linked reported number, as the record had it.")

    @property
    def came_out(self) -> Outcome:
        """The outcome, also of results written before seeds were read."""
        return self.outcome or ("holds" if self.holds else "fails")


class Figure(_Part):
    """A figure the verifier drew, stored as SVG beside the ledger file."""

    name: Name = Field(description="The name the verifier gave it.")
    file: str = Field(pattern=r"^[a-z0-9-]+\.(cpu|cuda)\.[a-z][a-z0-9_]*\.svg$", description="The SVG file beside the result.")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="Hash of the SVG, so a result and its figure are known to match.")
    caption: str | None = Field(None, description="What the figure shows, where the verifier said.")


class Gpu(_Part):
    """The accelerator a result was computed on."""

    name: str = Field(description="Device name, e.g. `NVIDIA H200`.")
    memory_mb: float | None = Field(None, description="Total device memory.")
    capability: str | None = Field(None, description="CUDA compute capability.")
    driver: str | None = Field(None, description="Driver version, where it could be read.")


class Environment(_Part):
    """What the machine had when the result was computed. Recorded and shown; never a reason for staleness."""

    python: str = Field(description="Python version.")
    platform: str = Field(description="Operating system and architecture.")
    hostname: str = Field(description="A hash of the host name: tells machines apart without naming them.")
    packages: dict[str, str] = Field(description="Installed versions of the packages whose pins are inputs.")
    torch_build: str = Field(description="`cpu`, or the CUDA version torch was built for.")
    cudnn: str | None = Field(None, description="cuDNN version, on CUDA builds.")
    cpu_model: str = Field(description="CPU model name.")
    cpu_capability: str | None = Field(None, description="The instruction set torch dispatches to (`AVX2`, `AVX512`).")
    blas: list[str] = Field(default_factory=list, description="BLAS/OpenMP libraries loaded, with version and architecture.")
    cores: int = Field(description="CPUs this process may run on.")
    threads: int = Field(description="torch intra-op threads.")
    gpu: Gpu | None = Field(None, description="The GPU, on `cuda` results.")
    seed: int | None = Field(None, description="The seed the `evidence` fixture set.")
    git_commit: str = Field("", description="The repository's commit when the run started, where git could tell.")


class Inputs(_Part):
    """What the result was computed from: each part hashed or versioned, and the hash of them all."""

    hash: str = Field(description="Hash of `parts`.")
    parts: dict[str, str] = Field(description="Input name -> hash or version (see `assay.inputs`).")


class RunError(_Part):
    """A run that measured nothing: it crashed, timed out or raised."""

    kind: ErrorKind = Field(
        description="`error` (an exception), `timeout` (over its CPU or wall limit), `crash` (the process died).")
    message: str = Field(description="What happened, without the engine's frames.")
    finished: Timestamp = Field(description="When it ended.")
    inputs_hash: str | None = Field(None, description="The inputs it ran with.")


class Unstable(_Part):
    """Reruns with the same inputs gave different verdicts."""

    verdicts: list[Verdict] = Field(min_length=2, description="The verdicts seen, oldest first.")
    since: Timestamp = Field(description="When the verdict first changed without its inputs changing.")


class Result(_Part):
    """One ledger file: the last completed measurement of a check on a device, and the last run's error."""

    format: Literal[2] = Field(description="The ledger format version.")
    claim: Annotated[str, StringConstraints(pattern=CLAIM_ID)] = Field(description="The claim.")
    check: Annotated[str, StringConstraints(pattern=SLUG)] = Field(description="The check.")
    device: Device = Field(description="The device kind it ran on.")
    verdict: Verdict = Field(description="The verdict of the measurement (`error` only when nothing was ever measured).")
    message: str = Field("", description="Why it failed or is known-failing; empty when it passed.")
    tier: Tier = Field(description="The check's evidence tier.")
    metrics: dict[Name, Metric] = Field(default_factory=dict, description="Every metric the verifier recorded.")
    expectation: list[Evaluated] = Field(default_factory=list, description="The check's expectation, as evaluated.")
    notes: list[str] = Field(default_factory=list, description="Notes the verifier recorded.")
    figures: list[Figure] = Field(default_factory=list, description="Figures, as SVG files beside this one.")
    duration_s: float = Field(ge=0, description="Wall time of setup, call and teardown.")
    cpu_s: float | None = Field(None, ge=0, description="CPU time of the verifier's process (and the children it waited for).")
    peak_memory_mb: float | None = Field(None, ge=0, description="Peak resident memory (CPU) or peak allocated memory (CUDA).")
    environment: Environment = Field(description="What the machine had.")
    inputs: Inputs = Field(description="What the result was computed from.")
    finished: Timestamp = Field(description="When the measurement finished, in UTC.")
    last_error: RunError | None = Field(
        None, description="The latest run errored: shown beside this measurement, which it never replaces.")
    unstable: Unstable | None = Field(None, description="Set when a rerun with the same inputs changed the verdict.")

    @property
    def key(self) -> Key:
        return (self.claim, self.check, self.device)

    @property
    def status(self) -> str:
        """The check status this file gives (a key of ``assay.status.CHECK``)."""
        return "error" if self.last_error is not None else self.verdict

    @property
    def measured(self) -> bool:
        """Whether the file holds a completed measurement (not only an error)."""
        return self.verdict != "error"


def ledger_path(root: Path, claim: str, check: str, device: str) -> Path:
    return Path(root) / "results" / claim / f"{check}.{device}.json"


def figure_file(check: str, device: str, name: str) -> str:
    return f"{check}.{device}.{name}.svg"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- writing ------------------------------------------------------------------------------------


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write ``data`` to ``path`` atomically: a temp file beside it, fsync, rename; cleaned up on failure.

    The one writer of the ledger: a killed run leaves either the old file or the new one, never half.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def to_json(result: Result) -> str:
    return json.dumps(result.model_dump(mode="json"), indent=2, sort_keys=True, allow_nan=False) + "\n"


def write_result(root: Path, result: Result, svgs: dict[str, str] | None = None) -> Path:
    """Write the figures (``Figure.file`` -> SVG text), then the result that names them by hash."""
    path = ledger_path(root, result.claim, result.check, result.device)
    for fig in result.figures:
        if svgs and fig.file in svgs:
            write_atomic(path.with_name(fig.file), svgs[fig.file])
    write_atomic(path, to_json(result))
    return path


# --- reading ------------------------------------------------------------------------------------


class Results(MutableMapping[Key, Result]):
    """Results by key. One taken from the ledger cache stays the JSON it was read from until it is looked
    at, so a command that needs only the ledger's problems or stamps validates none."""

    def __init__(self) -> None:
        self._items: dict[Key, Result | bytes] = {}
        self._json: dict[Key, bytes] = {}  # what a result validated here was read from

    def __getitem__(self, key: Key) -> Result:
        value = self._items[key]
        if isinstance(value, bytes):
            self._json[key] = value
            value = self._items[key] = Result.model_validate_json(value)
        return value

    def __setitem__(self, key: Key, value: Result | bytes) -> None:
        self._items[key] = value
        self._json.pop(key, None)

    def __delitem__(self, key: Key) -> None:
        del self._items[key]
        self._json.pop(key, None)

    def release(self, key: Key) -> None:
        """Keep the result of ``key`` only as its JSON again, if it was read from JSON: a command that walks
        every result of a large ledger holds one claim's at a time."""
        if key in self._json:
            self._items[key] = self._json.pop(key)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[Key]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


@dataclass
class Ledger:
    """Every result under ``results/`` that can be trusted, and a diagnostic for every file that cannot.

    ``broken`` maps the key a bad file's path names to its diagnostic: such a check counts as an
    error, and no other result is affected. ``figures``: the figures each result names (file, hash),
    for the results that name any. ``stamps``: for each key a file's path names, what ``stat`` said of
    the file where the ledger cache keeps its reading (it then stands for the file's content), else None.
    """

    results: Results = field(default_factory=Results)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    broken: dict[Key, Diagnostic] = field(default_factory=dict)
    figures: dict[Key, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    stamps: dict[Key, Stamp | None] = field(default_factory=dict)

    def get(self, key: Key) -> Result | None:
        return self.results.get(key)


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
        result = _diagnose(rel, raw)
    named = _key_of(path)
    if named != result.key:
        raise LedgerProblem("ledger-misplaced", f"{rel} holds the result of {'/'.join(result.key)}, "
                                                f"not of {'/'.join(named) if named else 'its path'}")
    return result


def _diagnose(rel: str, raw: bytes) -> Result:
    """Why a ledger file does not validate, as the most useful ``LedgerProblem``."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise LedgerProblem("bad-ledger", f"{rel} is not JSON ({_first_line(e)}); it may be truncated") from None
    if not isinstance(data, dict):
        raise LedgerProblem("bad-ledger", f"{rel} is not a JSON object")
    if data.get("format") != FORMAT:
        raise LedgerProblem("ledger-format", f"{rel} is ledger format {data.get('format')!r}; this Assay reads format {FORMAT}")
    try:
        return Result.model_validate(data)
    except ValidationError as e:
        err = e.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err["loc"]) or "the file"
        more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
        raise LedgerProblem("ledger-shape", f"{rel}: '{where}': {err['msg'].lower()}{more}") from None


class LedgerProblem(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


_HINTS = {
    "bad-ledger": "rerun the check with pytest verify, or delete the file",
    "ledger-format": "rerun the check with this version (pytest verify --claim ID), or delete the file",
    "ledger-shape": "rerun the check with pytest verify; ledger files are written by the plugin, not by hand",
    "ledger-misplaced": "a result lives at results/<claim>/<check>.<device>.json; delete the stray copy",
}


def _key_of(path: Path) -> Key | None:
    return _key_named(path.parent.name, path.name)


def _key_named(folder: str, name: str) -> Key | None:
    """The key the ledger file ``name`` in the folder ``folder`` names by its path, if any."""
    m = _FILE.match(name)
    return (folder, m["check"], m["device"]) if m and _CLAIM_FOLDER.match(folder) else None


def _first_line(e: Exception) -> str:
    return str(e).splitlines()[0] if str(e) else type(e).__name__


#: One ledger file as read: the key its result or its path names, the result (its JSON, or the model where
#: only the long way read it) or None, the diagnostic if it cannot be trusted, and the figures it names.
Entry = tuple[Key | None, "Result | bytes | None", Diagnostic | None, tuple[tuple[str, str], ...]]


def read_ledger(root: Path, cache: bool = False) -> Ledger:
    """Read every ``results/*/*.json`` under ``root``; nothing here raises on a bad file.

    The common case is one pass: a plain file in a folder inside the root is read without resolving
    it (``read_in``) and validated straight from its bytes. Anything else (a link, a linked folder, a
    file that does not validate or sits at another result's path) takes ``read_result``, which reads by
    ``read_regular``'s rule and names the problem. ``cache``: keep the reading of every plain file
    between runs under its stamp (``assay.cache``), for large knowledge bases; a result read from there
    is validated when it is looked at.
    """
    root = Path(root).resolve()
    ledger = Ledger()
    store = ParseCache(root, "ledger", also=("results",)) if cache else None
    for folder, name, real in _ledger_entries(root):
        rel, current = f"results/{folder}/{name}", None
        entry = None
        if store is not None and real:
            current = stamp(os.path.join(real, name))  # stamped before it is read
            entry = store.get(rel, current)
        if entry is None:
            entry = _read_entry(root, folder, name, real)
            if store is not None and real:
                store.put(rel, current, entry)
        key, result, diag, figures = entry
        if diag is not None:
            ledger.diagnostics.append(diag)
            if key is not None:
                ledger.broken[key] = diag
        elif key is not None and result is not None:
            ledger.results[key] = result
            if figures:
                ledger.figures[key] = figures
        named = _key_named(folder, name)
        if named is not None:
            ledger.stamps[named] = current if store is not None and store.settled(current) else None
    if store is not None:
        store.save()
    return ledger


def _read_entry(root: Path, folder: str, name: str, real: str) -> Entry:
    if real:
        try:
            raw = read_in(real, name)
            result = Result.model_validate_json(raw)
            if result.claim == folder and name == f"{result.check}.{result.device}.json":
                return result.key, raw, None, tuple((f.file, f.sha256) for f in result.figures)
        except (Unreadable, ValidationError):
            pass
    path = root / "results" / folder / name
    try:
        result = read_result(root, path)
    except LedgerProblem as e:
        diag = Diagnostic(f"results/{folder}/{name}", 1, 1, e.code, e.message, _HINTS[e.code])
        key = _key_of(path)
        return (key if e.code != "ledger-misplaced" else None), None, diag, ()
    return result.key, result, None, tuple((f.file, f.sha256) for f in result.figures)


def _ledger_entries(root: Path) -> Iterator[tuple[str, str, str]]:
    """``(folder, name, real)`` of every ``results/*/*.json``, sorted; ``real`` is the resolved folder when
    the file is plain and its folder lies inside the root, else empty (the resolving read must decide)."""
    base = root / "results"
    base_real = os.path.realpath(base)
    if not Path(base_real).is_relative_to(root):
        base_real = ""  # results/ itself leads outside: every file takes the resolving read, which refuses it
    try:
        folders = sorted(os.scandir(base), key=lambda e: e.name)
    except OSError:
        return
    for folder in folders:
        if not folder.is_dir():
            continue
        real = os.path.join(base_real, folder.name) if base_real and not folder.is_symlink() else ""
        try:
            entries = sorted((e for e in os.scandir(folder.path) if e.name.endswith(".json")), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            yield folder.name, entry.name, real if real and entry.is_file(follow_symlinks=False) else ""


def figure_problems(root: Path, key: Key, figures: tuple[tuple[str, str], ...],
                    store: ParseCache | None = None) -> list[str]:
    """Figures (file, hash) the result of ``key`` names that are missing or do not match their hash (a run
    killed between writes). ``store``: keep each figure's hash under its stamp between runs (``assay.cache``),
    so a large ledger's figures are read once per change, not on every check; only where no link lies on
    the way to the file."""
    out = []
    folder = ledger_path(root, *key).parent
    direct = store is not None and os.path.realpath(folder) == str(folder)
    for file, sha in figures:
        rel = f"results/{key[0]}/{file}"
        current = stamp(folder / file) if direct else None
        digest = store.get(rel, current) if store is not None and current is not None else None
        if digest is None:
            try:
                digest = sha256(read_regular(root, folder / file))
            except Unreadable as e:
                out.append(f"{file} {e}")
                continue
            if store is not None and current is not None:
                store.put(rel, current, digest)
        if digest != sha:
            out.append(f"{file} is not the figure this result drew (its hash differs)")
    return out


def figure_bytes(root: Path, result: Result, fig: Figure) -> bytes | None:
    """The SVG of a figure if it is readable and matches the result's hash; else None."""
    path = ledger_path(root, result.claim, result.check, result.device).with_name(fig.file)
    try:
        data = read_regular(root, path)
    except Unreadable:
        return None
    return data if sha256(data) == fig.sha256 else None


# --- the rules between an old result and a new one ----------------------------------------------


def supersede(old: Result | None, new: Result) -> Result:
    """What the ledger holds after ``new`` ran where ``old`` was.

    An error never replaces a completed measurement: it is kept beside it as ``last_error``. A
    verdict that changed while the inputs did not marks the result unstable, and stays marked
    until the inputs change.
    """
    if new.verdict == "error":
        if old is not None and old.measured:
            return old.model_copy(update={"last_error": new.last_error})
        return new
    unstable = old.unstable if old is not None and old.inputs.hash == new.inputs.hash else None
    return new.model_copy(update={"unstable": moved(old, new) or unstable})


def flag_unstable(old: Result, new: Result) -> Result | None:
    """``old`` marked unstable when a rerun with the same inputs gave another verdict; None otherwise."""
    mark = moved(old, new)
    return old.model_copy(update={"unstable": mark}) if mark else None


def moved(old: Result | None, new: Result) -> Unstable | None:
    """The unstable mark for ``new`` run after ``old`` with the same inputs and another verdict; None otherwise."""
    if old is None or not old.measured or not new.measured or old.inputs.hash != new.inputs.hash:
        return None
    if old.verdict == new.verdict:
        return None
    seen = old.unstable.verdicts if old.unstable else [old.verdict]
    return Unstable(verdicts=[*seen, new.verdict], since=old.unstable.since if old.unstable else new.finished)


def largest_change(old: Result, new: Result) -> str:
    """The metric that moved most between two results, in words."""
    shared = sorted(set(old.metrics) & set(new.metrics))
    if not shared:
        return "no metric in common"
    name = max(shared, key=lambda m: (abs(new.metrics[m].value - old.metrics[m].value), m))
    delta = abs(new.metrics[name].value - old.metrics[name].value)
    same = sum(old.metrics[m].value == new.metrics[m].value for m in shared)
    return f"largest metric change |Δ| {delta:.3g} ({name}); {same} of {len(shared)} metrics identical"


_MACHINE = ("python", "platform", "hostname", "packages", "torch_build", "cudnn", "cpu_model", "cpu_capability",
            "blas", "cores", "threads", "gpu")


def environment_change(old: Result, new: Result) -> str:
    """Which parts of the machine differ between two results, or that none does."""
    a, b = old.environment, new.environment
    differs = [f"{name} {getattr(a, name)!s} -> {getattr(b, name)!s}"
               for name in _MACHINE if getattr(a, name) != getattr(b, name)]
    return "environment differs: " + ", ".join(differs) if differs else "same environment"


# --- what a reader is shown of a ledger message ---------------------------------------------------

_ENGINE = re.compile(r"(site-packages|dist-packages|_pytest|pluggy|/assay/|\\assay\\|<frozen )")
_FRAME = re.compile(r'^\s*File "([^"]+)", line \d+')
_ABSOLUTE = re.compile(r"(?<![\w.:/])(/(?:[\w.@+-]+/)+)([\w.@+-]+)|[A-Za-z]:\\(?:[\w.@+ -]+\\)+([\w.@+-]+)")


def clean_message(text: str) -> str:
    """A failure or crash message as a page shows it: the engine's frames dropped (with the source line under
    each), every absolute path cut to the file's name below the knowledge base (``verify/x.py``) or to its
    last part. Applied to whatever the ledger says, since a page never shows a machine path."""
    out, skip = [], False
    for line in text.splitlines():
        frame = _FRAME.match(line)
        if frame:
            skip = bool(_ENGINE.search(frame.group(1))) or not _is_verifier(frame.group(1))
        elif skip and line.startswith("    ") and not line.strip().startswith("File "):
            continue  # the code line under a dropped frame
        else:
            skip = False
        if skip or line.strip() == "Traceback (most recent call last):":
            continue
        out.append(_ABSOLUTE.sub(_relative, line))
    return "\n".join(out).strip()


def _is_verifier(path: str) -> bool:
    return "/verify/" in path.replace("\\", "/") or path.replace("\\", "/").startswith("verify/")


def _relative(m: re.Match) -> str:
    whole = m.group(0).replace("\\", "/")
    if "/verify/" in whole:
        return "verify/" + whole.split("/verify/", 1)[1]
    return m.group(2) or m.group(3) or whole.rsplit("/", 1)[-1]
