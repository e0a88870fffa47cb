"""The evidence ledger: ``results/<CLAIM>/<check>.<device>.json``, one file per check and device.

Written atomically (temp file, fsync, rename) and only by the pytest controller. Each result keeps the
hash of its inputs with the parts it was made from, so staleness can be told, and explained, without
running anything. Ledgers of different machines merge by copying files.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from assay.model import Check, Claim
from assay.verifiers import local_imports

FORMAT = 1
#: Packages whose version is part of every result's inputs.
PINNED = ("torch", "numpy", "scikit-learn")
VERDICTS = ("passed", "failed", "known-failing", "error", "skipped")


def ledger_path(root: Path, claim: str, check: str, device: str) -> Path:
    return root / "results" / claim / f"{check}.{device}.json"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def input_parts(root: Path, claim: Claim, check: Check, device: str) -> dict[str, str]:
    """What a result depends on, each part hashed or versioned.

    The record part is the check's own definition (its sentence, verifier, expectation, devices,
    timeout, whether it is declared known-failing) and the claim's statement, not the whole file:
    fixing a citation's typo or rewording a note does not invalidate evidence, changing what is
    checked does.
    """
    definition = check.model_dump(mode="json", exclude={"note", "known_failing"})
    definition["known_failing"] = check.known_failing is not None
    record = {"claim": claim.id, "statement": claim.statement, "check": definition}
    parts = {f"record:{claim.id}#{check.id}": _sha(json.dumps(record, sort_keys=True).encode())}
    module = root / check.verifier.split("::")[0]
    for path in local_imports(root, module):
        parts[f"code:{path.relative_to(root.resolve()).as_posix()}"] = _file_sha(path, path.stat().st_mtime_ns)
    parts.update(_package_versions())
    parts["device"] = device
    return parts


@functools.lru_cache(maxsize=4096)
def _file_sha(path: Path, mtime_ns: int) -> str:
    """The hash of a file, cached per modification time (many results share one verifier module)."""
    return _sha(path.read_bytes())


@functools.lru_cache(maxsize=1)
def _package_versions() -> dict[str, str]:
    """Versions of the pinned packages; installed packages do not change under a running process."""
    versions = {}
    for package in PINNED:
        try:
            versions[f"package:{package}"] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[f"package:{package}"] = "absent"
    return versions


def input_hash(parts: dict[str, str]) -> str:
    return _sha(json.dumps(parts, sort_keys=True).encode())


def stale_reasons(recorded: dict[str, str], current: dict[str, str]) -> list[str]:
    """Why a result computed from ``recorded`` inputs is stale against ``current`` ones; empty if fresh."""
    reasons = []
    for key in sorted(set(recorded) | set(current)):
        before, now = recorded.get(key), current.get(key)
        if before == now:
            continue
        kind, _, name = key.partition(":")
        if before is None:
            reasons.append(f"{name or kind} is a new input")
        elif now is None:
            reasons.append(f"{name or kind} is no longer an input")
        elif kind == "package":
            reasons.append(f"{name} changed from {before} to {now}")
        elif kind == "record":
            reasons.append(f"the check in {name.split('#')[0]} changed")
        else:
            reasons.append(f"{name or kind} changed")
    return reasons


@dataclass(frozen=True)
class Result:
    """One ledger file, as read."""

    path: Path
    data: dict[str, Any]

    @property
    def verdict(self) -> str:
        return self.data["verdict"]

    @property
    def parts(self) -> dict[str, str]:
        return self.data.get("inputs", {}).get("parts", {})


def write(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as JSON atomically: a killed run leaves the previous file intact."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_ledger(root: Path) -> tuple[dict[tuple[str, str, str], Result], list[str]]:
    """Every readable result under ``results/``, keyed by (claim, check, device); and unreadable paths."""
    found: dict[tuple[str, str, str], Result] = {}
    bad: list[str] = []
    for path in sorted((root / "results").glob("*/*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            key = (data["claim"], data["check"], data["device"])
            if data.get("format") != FORMAT or data["verdict"] not in VERDICTS:
                raise ValueError
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            bad.append(path.relative_to(root).as_posix())
            continue
        found[key] = Result(path, data)
    return found, bad


@dataclass(frozen=True)
class CheckState:
    """A check's status on one device, with why it is stale if it is."""

    claim: str
    check: str
    device: str
    status: str  # a key of assay.status.CHECK
    stale: list[str]
    result: Result | None


def check_states(root: Path, claim: Claim, ledger: dict[tuple[str, str, str], Result]) -> list[CheckState]:
    """The state of every check of ``claim`` on every device it declares."""
    states = []
    for check in claim.checks:
        for device in check.devices:
            result = ledger.get((claim.id, check.id, device))
            if result is None:
                states.append(CheckState(claim.id, check.id, device, "not-run", [], None))
                continue
            reasons = stale_reasons(result.parts, input_parts(root, claim, check, device))
            states.append(CheckState(claim.id, check.id, device, result.verdict, reasons, result))
    return states
