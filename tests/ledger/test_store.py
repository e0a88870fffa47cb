"""assay.ledger (result, store): the typed ledger record, its one writer, its reader's diagnostics, and the rules
between an old result and a new one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay import audit, export, fingerprints
from assay.ledger import merge, problems, store
from assay.ledger.result import Figure, Inputs, Metric, Result, RunError, Unstable
from assay.records.knowledge_base import load
from assay.site import generate
from tests.conftest import load_states, write_result


def result(path: Path) -> Result:
    return Result.model_validate_json(path.read_text())


def test_a_result_round_trips_through_its_file_unchanged(kb_root):
    path = write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    first = result(path)
    store.write_result(kb_root, first)
    assert result(path) == first
    assert store.read_ledger(kb_root).results[("THEORY-085", "log-n-cap", "cpu")] == first


def test_the_committed_json_schema_is_the_models(tmp_path):
    from assay.schema import result_schema

    committed = json.loads((Path(__file__).parents[2] / "schema" / "result.schema.json").read_text())
    assert committed == json.loads(json.dumps(result_schema()))


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("inputs", "abc", "'inputs': input should be an object"),
        ("expectation", {"a": 1}, "'expectation': input should be a valid array"),
        ("environment", [], "'environment': input should be an object"),
        ("figures", "x.svg", "'figures': input should be a valid array"),
        ("finished", 12, "'finished': input should be a valid string"),
        ("metrics", {"gap": {"value": "NaN"}}, "'metrics.gap.value': input should be a valid number"),  # a string
        ("metrics", {"gap": {"value": True}}, "'metrics.gap.value': input should be a valid number"),  # a boolean
        ("duration_s", "0.5", "'duration_s': input should be a valid number"),
        (
            "verdict",
            "green",
            "'verdict': input should be 'passed', 'failed', 'known-failing', 'inconclusive', 'out-of-regime' or 'error'",
        ),
    ],
)
def test_a_field_of_the_wrong_type_is_a_shape_diagnostic_and_nothing_crashes(kb_root, field, value, message, capsys):
    path = write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    data = json.loads(path.read_text())
    data[field] = value
    path.write_text(json.dumps(data))
    found = [d.render() for d in audit.run(load(kb_root)) if d.code.startswith("ledger")]
    assert found == [
        f"results/THEORY-085/log-n-cap.cpu.json:1:1: error[ledger-shape]: "
        f"results/THEORY-085/log-n-cap.cpu.json: {message}\n"
        "  hint: rerun the check with pytest verify; ledger files are written by the plugin, not by hand"
    ]
    kb, states = load_states(kb_root)
    assert [(c.check, c.status) for c in states["THEORY-085"].checks] == [("log-n-cap", "error")]
    export.as_json(kb, states)
    page = next(o for o in generate(kb_root) if o.path == "claims/THEORY-085.md").content
    assert "The ledger file cannot be read" in page


def test_a_folder_named_like_a_ledger_file_is_a_diagnostic(kb_root):
    (kb_root / "results" / "THEORY-085" / "log-n-cap.cpu.json").mkdir(parents=True)
    diagnostics = audit.run(load(kb_root))
    assert [d.render().splitlines()[0] for d in diagnostics if d.code.startswith("ledger") or d.code == "bad-ledger"] == [
        "results/THEORY-085/log-n-cap.cpu.json:1:1: error[bad-ledger]: results/THEORY-085/log-n-cap.cpu.json is not a "
        "regular file (a directory)"
    ]


def test_a_ledger_file_linked_outside_the_knowledge_base_is_not_read(kb_root, tmp_path):
    path = write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    outside = tmp_path / "elsewhere.json"
    outside.write_text(path.read_text())
    path.unlink()
    path.symlink_to(outside)
    ledger = store.read_ledger(kb_root)
    assert ledger.results == {}
    assert ledger.diagnostics[0].message == "results/THEORY-085/log-n-cap.cpu.json is a link to a file outside the knowledge base"


def test_a_figure_whose_file_differs_from_its_hash_is_not_published(kb_root):
    path = write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    r = result(path)
    fig = Figure(
        name="curve",
        file="log-n-cap.cpu.curve.svg",
        sha256=fingerprints.sha256(b"<svg xmlns='http://www.w3.org/2000/svg'>drawn</svg>"),
    )
    store.write_result(
        kb_root, r.model_copy(update={"figures": [fig]}), {fig.file: "<svg xmlns='http://www.w3.org/2000/svg'>drawn</svg>"}
    )
    assert problems.figure_problems(kb_root, result(path).key, tuple((f.file, f.sha256) for f in result(path).figures)) == []
    (path.parent / fig.file).write_text(
        "<svg xmlns='http://www.w3.org/2000/svg'>another run's</svg>"
    )  # a run killed between the two writes
    assert problems.figure_problems(kb_root, result(path).key, tuple((f.file, f.sha256) for f in result(path).figures)) == [
        "log-n-cap.cpu.curve.svg is not the figure this result drew (its hash differs)"
    ]
    assert not any(o.path.startswith("figures/THEORY-085") for o in generate(kb_root))


def _pair(kb_root: Path) -> tuple[Result, Result]:
    old = result(write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0))
    return old, old.model_copy(update={"finished": "2026-02-01T00:00:00Z"})


def test_an_error_never_replaces_a_measurement_it_is_kept_beside_it(kb_root):
    old, new = _pair(kb_root)
    error = RunError(kind="crash", message="died", finished="2026-02-01T00:00:00Z")
    failed_run = new.model_copy(update={"verdict": "error", "metrics": {}, "last_error": error})
    kept = merge.supersede(old, failed_run)
    assert (kept.verdict, kept.metrics, kept.last_error, kept.status) == ("passed", old.metrics, error, "error")
    assert merge.supersede(None, failed_run) == failed_run


def test_a_new_measurement_clears_the_last_error(kb_root):
    old, new = _pair(kb_root)
    error = RunError(kind="timeout", message="slow", finished="2026-02-01T00:00:00Z")
    assert merge.supersede(old.model_copy(update={"last_error": error}), new).last_error is None


def test_a_verdict_that_moves_with_the_same_inputs_is_unstable_until_the_inputs_change(kb_root):
    old, new = _pair(kb_root)
    e = new.expectation[0].model_copy(update={"measured": 1.0, "holds": False, "outcome": "fails"})
    other = new.model_copy(update={"metrics": {"excess": Metric(value=1.0)}, "expectation": [e], "verdict": "failed"})
    moved = merge.supersede(old, other)  # the same inputs, other numbers: the verdict moved
    assert moved.unstable == Unstable(verdicts=["passed", "failed"], since="2026-02-01T00:00:00Z")
    assert merge.supersede(old, new.model_copy(update={"verdict": "failed"})).unstable is None  # the word alone: no
    again = merge.supersede(moved, other)
    assert again.unstable == moved.unstable  # stays flagged while the inputs are the same
    changed = new.model_copy(update={"inputs": Inputs(hash="other", parts={})})
    assert merge.supersede(again, changed).unstable is None


def test_largest_change_and_environment_change_say_what_moved(kb_root):
    old, new = _pair(kb_root)
    env = old.environment.model_copy(update={"cpu_model": "Other CPU"})
    new = new.model_copy(update={"metrics": {"excess": Metric(value=0.25)}, "environment": env})
    assert merge.largest_change(old, new) == "largest metric change |Δ| 0.25 (excess); 0 of 1 metrics identical"
    assert merge.environment_change(old, new) == "environment differs: cpu_model Test CPU -> Other CPU"


@pytest.mark.parametrize("cache", [False, True], ids=["read", "from-the-cache"])
def test_whether_a_result_reads_seeds_is_told_alike_from_its_json_and_from_its_model(make_kb, cache):
    root = make_kb("no-history")
    unseeded = {"top1": 60, "top1_nofix": 40, "signature_acc_shuffled": 0.5, "signature_acc_nofix": 0.9}
    write_result(root, "SOTA-364", "shuffle-bn", "cpu", "passed", **unseeded)  # beside the fixture's seeded one
    store.read_ledger(root, cache=cache)  # a second reading takes the cache's JSON, where it keeps one
    ledger = store.read_ledger(root, cache=cache)
    told = {key: ledger.reads_seeds(key) for key in ledger.results}
    assert told == {key: any(e.seeds != "value" for e in ledger.get(key).expectation) for key in ledger.results}
    assert sorted(set(told.values())) == [False, True]
