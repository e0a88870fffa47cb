"""Validation against the model: one record file read, validated, and every fault a diagnostic at its place."""

from __future__ import annotations

import difflib
import heapq
import re
import unicodedata
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from assay.diagnostics import PER_FILE, Diagnostic, Loc
from assay.files import Unreadable, read_in_stat, read_regular
from assay.fingerprints import Stamp, stamp_of
from assay.ids import RECORD_ID
from assay.model import MODELS, SERIES, nested_models, series
from assay.records.document import Loaded
from assay.records.outline import outline
from assay.records.placeholders import marks
from assay.records.within import dotted, local
from assay.records.yaml_safe import SCHEMA_LINE, read_marks, type_name


def load_record(root: Path, rel: str, direct: bool = False) -> Loaded:
    """Read and validate one record file, ``rel`` from ``root`` (``claims/SOTA-001.yaml``); all problems are in
    ``Loaded.diagnostics`` and ``Loaded.rules``.

    ``direct``: the file's folder, ``root`` resolved, is known to be no link and to lie inside it, so a plain
    file in it is read without resolving its path (``read_in_stat``, which stamps it); anything else takes ``read_regular``.
    The path stays a string until the resolving read needs more: 2.7 % fewer instructions a record than building ``Path``s."""
    loaded = _parse_file(root, rel, direct)
    loaded.seal(outline(loaded.record), local)
    return loaded


def _parse_file(root: Path, rel: str, direct: bool) -> Loaded:
    parent, _, name = rel.rpartition("/")
    folder = parent.rpartition("/")[2]
    loaded = Loaded(rel, folder)
    try:
        raw, loaded.stamp = _read(root, parent, name, direct)
    except Unreadable as e:
        loaded.diagnostics.append(
            Diagnostic(rel, 1, 1, "unreadable-file", f"{rel} {e}", "records are regular files inside the knowledge base")
        )
        return loaded
    loaded.marked = marks(raw)
    data, positions, diags = read_marks(raw, rel)
    loaded.read(data, positions)
    loaded.diagnostics.extend(diags)
    if data is None:
        return loaded
    if SCHEMA_LINE not in raw.split(b"\n", 1)[0].decode("utf-8", "replace"):
        loaded.diagnostics.append(
            Diagnostic(
                rel,
                1,
                1,
                "schema-line",
                "the first line does not point editors at the schema",
                f"add '{SCHEMA_LINE}../schema/{folder[:-1]}.schema.json' as the first line",
            )
        )
    prefix = series(data["id"]) if isinstance(data.get("id"), str) else None
    if prefix and SERIES[prefix].folder != folder:
        return loaded  # validated against the wrong model it would only cascade; assay.records.across reports wrong-folder
    model = MODELS[folder]
    try:
        loaded.validate(model)
    except ValidationError as e:
        loaded.diagnostics.extend(_from_pydantic(loaded, model, e))
    return loaded


def _read(root: Path, parent: str, name: str, direct: bool) -> tuple[bytes, Stamp | None]:
    """The bytes of the file ``name`` in ``parent`` (from ``root``), and its stamp where the cache may keep it (a
    plain file in a ``direct`` folder)."""
    if direct:
        try:
            raw, info = read_in_stat(f"{root}/{parent}", name)
            return raw, stamp_of(info)
        except Unreadable:
            pass  # a link, or no regular file: the resolving read decides, and says why
    return read_regular(root, root / parent / name), None


def _from_pydantic(loaded: Loaded, model: type[BaseModel], error: ValidationError) -> list[Diagnostic]:
    """Diagnostics for the first ``PER_FILE + 1`` errors in file order; the rest are only counted.

    Making a diagnostic costs a "did you mean" search, so a record of 400,000 junk keys would take a
    minute and a gigabyte; finding where each error sits is cheap. ``assay.records.across`` lists ``PER_FILE``
    and counts the rest, ``Loaded.unlisted`` included, in one too-many-problems diagnostic.
    """
    located = [
        (loaded.where(loc), loc, err) for err in error.errors(include_url=False) for loc in [_data_loc(loaded.data, err["loc"])]
    ]
    first = heapq.nsmallest(PER_FILE + 1, range(len(located)), key=lambda i: located[i][0])
    loaded.unlisted = len(located) - len(first)
    return [_one_error(loaded, model, located[i][1], located[i][2]) for i in sorted(first)]


def _data_loc(data: Any, loc: tuple[Any, ...]) -> Loc:
    """The part of a pydantic location that exists in the data (drops union branch names)."""
    out: list[str | int] = []
    cur = data
    for part in loc:
        if isinstance(cur, dict) and isinstance(part, str) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and isinstance(part, int) and 0 <= part < len(cur):
            cur = cur[part]
        elif isinstance(cur, dict) and isinstance(part, str) and not out[-1:] == [part]:
            out.append(part)  # a missing or unknown key: keep its name for the message
            break
        else:
            continue
        out.append(part)
    return tuple(out)


def _one_error(loaded: Loaded, model: type[BaseModel], loc: Loc, err: dict[str, Any]) -> Diagnostic:
    kind, name = err["type"], dotted(loc) or "the record"
    last = loc[-1] if loc else None
    got = err.get("input")
    if kind == "missing":
        code = "missing-locator" if last == "locator" else "missing-field"
        hint = "give the section, figure, table, page or equation, e.g. '§3.3' or 'Table 2'" if last == "locator" else None
        return loaded.diag(loc[:-1], code, f"'{name}' is required", hint)
    if kind == "extra_forbidden":
        allowed = _allowed_fields(model, loc[:-1], loaded.data)
        close = difflib.get_close_matches(str(last), allowed, n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"allowed fields: {', '.join(sorted(allowed))}"
        return loaded.diag(loc, "unknown-field", f"'{name}' is not a field of this record", hint)
    if kind == "string_too_short" or (kind == "string_type" and got is None):
        code = {"quote": "empty-quote", "locator": "missing-locator"}.get(str(last), "wrong-type")
        return loaded.diag(loc, code, f"'{name}' must not be empty")
    if kind == "string_pattern_mismatch":
        pattern = err.get("ctx", {}).get("pattern", "")
        if last == "id" and len(loc) == 1:
            return loaded.diag(
                loc,
                "bad-id",
                f"id {got!r} does not have the form of its series{_id_flaw(got)}",
                "ids look like LIT-590, SOTA-364, THEORY-085, ADR-011",
            )
        return loaded.diag(loc, "wrong-type", f"'{name}' must match {pattern} (got {got!r})")
    if kind == "literal_error":
        expected = err.get("ctx", {}).get("expected", "")
        return loaded.diag(loc, "bad-value", f"'{name}' must be one of {expected} (got {got!r})")
    if kind in ("value_error", "assertion_error"):
        return loaded.diag(loc, "bad-value", f"{name}: {err['msg'].removeprefix('Value error, ')}")
    return loaded.diag(loc, "wrong-type", f"'{name}' {err['msg'].lower()} (got {got!r} that is a {type_name(got)})")


def _id_flaw(value: Any) -> str:
    """What makes an id that looks right wrong: a character that is not ASCII, space around it, lower case, or a
    leading zero that would make two spellings of one id."""
    if not isinstance(value, str):
        return ""
    odd = next((c for c in value if not c.isascii()), None)
    if odd is not None:
        return f": ids are ASCII, and {odd!r} (U+{ord(odd):04X} {unicodedata.name(odd, 'unnamed')}) is not"
    if value != value.strip():
        return ": it has space or a line break around it"
    if re.fullmatch(RECORD_ID, value.upper()):
        return ": ids are upper case"
    if re.fullmatch(r"[A-Z]+-0[0-9]{3,}", value):
        return ": a number longer than three digits has no leading zero, so that one id has one spelling"
    return ""


def _allowed_fields(model: type[BaseModel], loc: Loc, data: Any) -> list[str]:
    """Field names of the (sub)model at ``loc``."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        info = current.model_fields.get(part) if hasattr(current, "model_fields") else None
        if info is None:
            return []
        current = next(iter(nested_models(info.annotation)), None)
    return list(current.model_fields) if hasattr(current, "model_fields") else []
