"""Why a ledger file is not read: its problem as a diagnostic code and words (``LedgerProblem``), found the long way
once the quick validation has failed, so that the first thing wrong is named where it sits.
"""

from __future__ import annotations

import json

from pydantic import ValidationError

from assay.ledger.messages import first_line
from assay.ledger.result import FORMAT, Result


def diagnose(rel: str, raw: bytes) -> Result:
    """Why a ledger file does not validate, as the most useful ``LedgerProblem``."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise LedgerProblem("bad-ledger", f"{rel} is not JSON ({first_line(e)}); it may be truncated") from None
    if not isinstance(data, dict):
        raise LedgerProblem("bad-ledger", f"{rel} is not a JSON object")
    if data.get("format") != FORMAT:
        raise LedgerProblem("ledger-format", f"{rel} is ledger format {data.get('format')!r}; this Assay reads format {FORMAT}")
    try:
        return Result.model_validate_json(raw)  # again, for the first error's words: JSON's arrays are the tuples
    except ValidationError as e:
        raise LedgerProblem("ledger-shape", f"{rel}: {first_error(e)}") from None


def first_error(e: ValidationError) -> str:
    """``'metrics.m.unit': string should have at most 4096 characters (and 1 more)``: where and what, of the first."""
    err = e.errors(include_url=False)[0]
    more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
    if not err["loc"] and err["type"] == "value_error":  # a rule of the whole file (its judgement): its words alone
        return f"{err['ctx']['error']}{more}"
    where = ".".join(str(p) for p in err["loc"]) or "the file"
    return f"'{where}': {err['msg'].lower()}{more}"


class LedgerProblem(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


HINTS = {
    "bad-ledger": "rerun the check with pytest verify, or delete the file",
    "ledger-format": "rerun the check with this version (pytest verify --claim ID), or delete the file",
    "ledger-shape": "rerun the check with pytest verify; ledger files are written by the plugin, not by hand",
    "ledger-misplaced": "a result lives at results/<claim>/<check>.<device>.json; delete the stray copy",
}
