"""assay.schema: the committed JSON Schemas are the model's, every record points at its schema, and the
schema agrees with the model on the repository's records and the fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.model import MODELS
from assay.records.yaml_safe import SCHEMA_LINE, read_yaml
from assay.schema import DRAFT, json_schema, schema_files

from .conftest import BROKEN, VALID

ROOT = Path(__file__).resolve().parents[1]


def records(root: Path) -> list[Path]:
    return [p for folder in MODELS for p in sorted((root / folder).glob("*.yaml"))]


def validator(folder: str):
    jsonschema = pytest.importorskip("jsonschema", reason="install the test extra: pip install -e '.[test]'")
    schema = json.loads((ROOT / "schema" / f"{folder[:-1]}.schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft7Validator(schema)


def plain(path: Path):
    data, _, diags = read_yaml(path.read_bytes(), path.name)
    assert diags == [], [d.render() for d in diags]
    return data


def test_the_committed_schemas_are_those_the_model_generates():
    committed = {p.name: p.read_text(encoding="utf-8") for p in sorted((ROOT / "schema").glob("*.schema.json"))}
    assert committed == schema_files(), "schema/ differs from assay.model: run `assay schema` and commit the result"


def test_the_schemas_are_draft_07_without_2020_12_keywords():
    for folder in MODELS:
        schema = json_schema(folder)
        assert schema["$schema"] == DRAFT and schema["$id"] == f"{folder[:-1]}.schema.json"
        assert "$defs" not in json.dumps(schema)


def test_the_schemas_are_valid_draft_07_schemas():
    for folder in MODELS:
        validator(folder).check_schema(json_schema(folder))


@pytest.mark.parametrize("root", [ROOT, VALID], ids=["repository", "fixture"])
def test_every_record_points_editors_at_the_schema_of_its_folder(root):
    wrong = []
    for path in records(root):
        first = path.read_text(encoding="utf-8").split("\n", 1)[0]
        want = f"{SCHEMA_LINE}../schema/{path.parent.name[:-1]}.schema.json"
        if first != want:
            wrong.append(f"{path.relative_to(root)}:1: {first!r}, want {want!r}")
    assert wrong == [], "\n".join(wrong)


@pytest.mark.parametrize("root", [ROOT, VALID], ids=["repository", "fixture"])
def test_the_json_schema_accepts_every_record(root):
    problems = []
    for path in records(root):
        for error in validator(path.parent.name).iter_errors(plain(path)):
            problems.append(f"{path.relative_to(root)}: {'.'.join(map(str, error.absolute_path))}: {error.message}")
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize(
    ("broken", "path"),
    [
        ("unknown-field", "claims/SOTA-380.yaml"),
        ("missing-field", "claims/SOTA-380.yaml"),
        ("missing-locator-citation", "claims/SOTA-380.yaml"),
        ("empty-quote", "claims/SOTA-380.yaml"),
        ("bad-id", "claims/SOTA-38.yaml"),
        ("bad-value", "sources/LIT-620.yaml"),
        ("wrong-type", "sources/LIT-620.yaml"),
    ],
)
def test_the_json_schema_rejects_what_the_model_rejects(broken, path):
    errors = list(validator(path.split("/")[0]).iter_errors(plain(BROKEN / broken / path)))
    assert errors, f"the schema accepts broken/{broken}/{path}, which the model rejects"
