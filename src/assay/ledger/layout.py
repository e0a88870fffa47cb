"""Where the ledger keeps a result: ``results/<claim>/<check>.<device>.json``, with its figures beside it.

The one spelling of that layout: the path of a key (``result_file``) and the key a path names (``key_of``)."""

from __future__ import annotations

import re
from pathlib import Path

from assay.ids import CLAIM_ID
from assay.ledger.result import Key

#: The ledger's folder, top-level in a knowledge base.
RESULTS = "results"

_CLAIM = re.compile(CLAIM_ID)
_FILE = re.compile(r"^(?P<check>[a-z0-9]+(?:-[a-z0-9]+)*)\.(?P<device>cpu|cuda)\.json$")


def result_file(claim: str, check: str, device: str) -> str:
    """The root-relative path of the result of ``(claim, check, device)``."""
    return f"{RESULTS}/{claim}/{check}.{device}.json"


def ledger_path(root: Path, claim: str, check: str, device: str) -> Path:
    """The file of the result of ``(claim, check, device)`` under ``root``."""
    return Path(root) / result_file(claim, check, device)


def key_of(rel: str) -> Key | None:
    """The key a root-relative path names, if it is a result's file (``result_file``'s inverse); else None."""
    parts = rel.split("/")
    if len(parts) != 3 or parts[0] != RESULTS:
        return None
    return key_named(parts[1], parts[2])


def key_named(folder: str, name: str) -> Key | None:
    """The key the ledger file ``name`` in the folder ``folder`` of ``results/`` names, if any."""
    m = _FILE.match(name)
    return (folder, m["check"], m["device"]) if m and _CLAIM.match(folder) else None


def figure_file(check: str, device: str, name: str, sha: str) -> str:
    """A figure's file: named by its content, so a new figure never takes the place of one a kept result names."""
    return f"{check}.{device}.{name}.{sha[:12]}.svg"


def figure_pattern(check: str, device: str) -> re.Pattern[str]:
    """What the figures of ``check`` on ``device`` are named (``figure_file``, or an older name without the hash)."""
    return re.compile(rf"^{re.escape(check)}\.{device}\.[a-z][a-z0-9_]*(\.[0-9a-f]{{12}})?\.svg$")
