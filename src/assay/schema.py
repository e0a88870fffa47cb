"""JSON Schemas (draft-07) for editors, generated from ``assay.model``.

Committed under ``schema/``; every record's first line points at its schema so that an editor with
the YAML language server completes and validates fields. ``assay schema`` rewrites them; a test
fails when the committed files differ from the model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.files import write_atomic
from assay.model import MODELS

DRAFT = "http://json-schema.org/draft-07/schema#"


def _draft7(node: Any) -> Any:
    """Rewrite pydantic's 2020-12 output into draft-07: ``$defs`` -> ``definitions``, no ``const`` lists."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                out[key] = value.replace("#/$defs/", "#/definitions/")
            elif key == "$defs":
                out["definitions"] = _draft7(value)
            else:
                out[key] = _draft7(value)
        return out
    if isinstance(node, list):
        return [_draft7(v) for v in node]
    return node


def json_schema(folder: str) -> dict[str, Any]:
    """The draft-07 schema of the records in ``folder`` (claims, sources, decisions)."""
    return {"$schema": DRAFT, "$id": f"{folder[:-1]}.schema.json", **_draft7(MODELS[folder].model_json_schema(mode="validation"))}


def result_schema() -> dict[str, Any]:
    """The draft-07 schema of a ledger file, ``results/<CLAIM>/<check>.<device>.json``."""
    from assay.ledger.result import Result

    return {"$schema": DRAFT, "$id": "result.schema.json", **_draft7(Result.model_json_schema(mode="validation"))}


def schema_files() -> dict[str, str]:
    """File name -> text of every schema file: one per record folder, and the ledger's."""
    schemas = {f"{folder[:-1]}.schema.json": json_schema(folder) for folder in MODELS}
    schemas["result.schema.json"] = result_schema()
    return {name: json.dumps(schema, indent=2, sort_keys=True) + "\n" for name, schema in schemas.items()}


def write(root: Path) -> list[Path]:
    """Write the schema files under ``root/schema``; returns their paths."""
    paths = {root / "schema" / name: text for name, text in schema_files().items()}
    for path, text in paths.items():
        write_atomic(path, text)
    return list(paths)
