"""Property tests: whatever bytes a record file holds, reading and validating it gives diagnostics, never an exception."""

from __future__ import annotations

import shutil

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay import audit
from assay.diagnostics import CATALOGUE, Diagnostic
from assay.experiment import Check
from assay.model import Claim, Source
from assay.records.knowledge_base import load
from assay.records.validation import load_record
from assay.records.yaml_safe import read_yaml

from .conftest import VALID

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- YAML-ish text from the pieces YAML is made of ----------------------------------------------

FIELDS = sorted(set(Claim.model_fields) | set(Source.model_fields) | set(Check.model_fields)) + ["<<", "? x", "1"]
FRAGMENTS = st.sampled_from(
    [
        ":",
        ": ",
        "-",
        "- ",
        "'",
        '"',
        "&a ",
        "*a",
        "&b [",
        "*b",
        "!!python/object:os.system ",
        "!!str ",
        "!x ",
        "!!binary ",
        "[",
        "]",
        "{",
        "}",
        ", ",
        "#",
        "|",
        ">-",
        "---",
        "...",
        "%YAML 1.1",
        "\t",
        "  ",
        "    ",
        "~",
        "null",
        "true",
        "2024-05-02",
        "1e400",
        ".nan",
        "0x1F",
        "SOTA-364",
        "LIT-590",
        "§3.3",
        "é",
        "\\u0000",
        "\x01",
        "\ufeff",
    ]
)
LINE = st.tuples(
    st.sampled_from(["", "  ", "    ", "  - ", "- "]),
    st.lists(st.one_of(FRAGMENTS, st.sampled_from(FIELDS), st.text(max_size=6)), max_size=6),
).map(lambda t: t[0] + "".join(t[1]))
YAMLISH = st.lists(LINE, max_size=12).map("\n".join)


def assert_diagnostics(diags: list[Diagnostic]) -> None:
    for d in diags:
        assert d.code in CATALOGUE and d.line >= 1 and d.col >= 1 and d.message
        d.render()


@FAST
@given(YAMLISH)
def test_read_yaml_of_yamlish_text_returns_data_or_diagnostics(text):
    data, positions, diags = read_yaml(text.encode("utf-8", "surrogatepass"), "claims/SOTA-999.yaml")
    assert_diagnostics(diags)
    assert (data is None) == bool(diags)
    if data is not None:
        assert isinstance(data, dict) and () in positions


@FAST
@given(st.binary(max_size=300))
def test_read_yaml_of_random_bytes_returns_data_or_diagnostics(raw):
    data, _, diags = read_yaml(raw, "claims/SOTA-999.yaml")
    assert_diagnostics(diags)
    assert (data is None) == bool(diags)


# --- whole files through load_record --------------------------------------------------------------

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-10, 3000),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(["LIT-590", "SOTA-364", "THEORY-085", "ADR-011", "verify/test_x.py::test_y", "cpu", "==", "toy"]),
)
KEYS = st.one_of(st.sampled_from(FIELDS), st.text(min_size=1, max_size=8))
VALUES = st.recursive(
    SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=4)), max_leaves=12
)
RECORDS = st.dictionaries(KEYS, VALUES, max_size=10)


@FAST
@given(
    folder=st.sampled_from(["claims", "sources", "decisions"]),
    raw=st.one_of(YAMLISH.map(lambda t: t.encode("utf-8", "surrogatepass")), st.binary(max_size=200)),
)
def test_load_record_of_any_bytes_gives_diagnostics_not_an_exception(tmp_path_factory, folder, raw):
    root = tmp_path_factory.mktemp("kb")
    path = root / folder / "X-001.yaml"
    path.parent.mkdir()
    path.write_bytes(raw)
    loaded = load_record(root, path.relative_to(root).as_posix())
    assert_diagnostics(loaded.diagnostics)
    assert loaded.record is None or not [d for d in loaded.diagnostics if d.severity == "error"]


@FAST
@given(folder=st.sampled_from(["claims", "sources", "decisions"]), data=RECORDS)
def test_load_record_of_any_mapping_of_near_fields_reports_each_problem_as_a_diagnostic(tmp_path_factory, folder, data):
    root = tmp_path_factory.mktemp("kb")
    path = root / folder / "SOTA-999.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    loaded = load_record(root, path.relative_to(root).as_posix())
    assert_diagnostics(loaded.diagnostics)


CLAIM_FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "id": st.sampled_from(["SOTA-364", "SOTA-36", "LIT-590", 364]),
        "title": VALUES,
        "statement": VALUES,
        "citations": VALUES,
        "reported": VALUES,
        "relations": VALUES,
        "checks": st.lists(st.dictionaries(st.sampled_from(sorted(Check.model_fields)), VALUES, max_size=8), max_size=2),
        "no_check_reason": VALUES,
    },
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=CLAIM_FIELDS)
def test_checks_run_over_a_knowledge_base_with_a_mangled_claim_never_raises(tmp_path_factory, data):
    root = tmp_path_factory.mktemp("kb") / "kb"
    shutil.copytree(VALID, root)
    (root / "claims" / "SOTA-364.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    assert_diagnostics(audit.run(load(root)))
