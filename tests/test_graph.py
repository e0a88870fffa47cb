"""assay.graph and assay.status: computed status from the ledger, closure over depends_on, the graph's views."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import networkx as nx
import pytest

from assay import files, graph, status, vocabulary
from assay.ledger import store
from assay.model import Claim
from assay.records.document import Loaded
from assay.records.knowledge_base import KnowledgeBase
from assay.records.outline import outline
from assay.status import ClaimState
from tests.conftest import ENVIRONMENT, load_states, write_result

# --- helpers ------------------------------------------------------------------------------------


#: shuffle-bn's metrics on a passing run: its effect and control, each beside the counterpart that fails it.
SHUFFLE = {"top1": 60.0, "top1_nofix": 20.0, "signature_acc_shuffled": 0.3, "signature_acc_nofix": 0.9}


def record(root: Path, claim_id: str, check_id: str, device: str, verdict: str, **metrics: float) -> Path:
    """Write a fresh ledger result as the pytest plugin would."""
    return write_result(root, claim_id, check_id, device, verdict, **metrics)


def verify_all(root: Path) -> None:
    """Every check of the valid fixture passes on every device."""
    record(root, "SOTA-364", "bn-cross-sample", "cpu", "passed", cross_sample_jacobian=0.1)
    record(
        root,
        "SOTA-364",
        "shuffle-bn",
        "cpu",
        "passed",
        **SHUFFLE,
    )
    record(
        root,
        "SOTA-364",
        "shuffle-bn",
        "cuda",
        "passed",
        **{**SHUFFLE, "top1": 61.0},
    )
    record(root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)


def states(root: Path) -> dict[str, ClaimState]:
    return load_states(root)[1]


def summary(root: Path) -> dict[str, tuple[str, str]]:
    return {cid: (s.status, s.closure) for cid, s in states(root).items()}


# --- status per check and claim, from the ledger ------------------------------------------------


def test_without_a_ledger_checked_claims_are_not_run_and_unchecked_ones_cited_only(kb_root):
    assert summary(kb_root) == {
        "SOTA-364": ("not-run", "open"),
        "THEORY-085": ("not-run", "open"),
        "THEORY-090": ("cited-only", "open"),
    }


def test_each_check_has_a_state_on_every_device_it_declares(kb_root):
    record(
        kb_root,
        "SOTA-364",
        "shuffle-bn",
        "cpu",
        "passed",
        **SHUFFLE,
    )
    got = [(c.check, c.device, c.status, c.stale) for c in states(kb_root)["SOTA-364"].checks]
    assert got == [
        ("bn-cross-sample", "cpu", "not-run", []),
        ("shuffle-bn", "cpu", "passed", []),
        ("shuffle-bn", "cuda", "not-run", []),
    ]


def test_a_claim_whose_checks_all_passed_is_verified_and_closed_when_what_it_rests_on_is(kb_root):
    verify_all(kb_root)
    assert summary(kb_root) == {
        "SOTA-364": ("verified", "closed"),
        "THEORY-085": ("verified", "closed"),
        "THEORY-090": ("cited-only", "open"),
    }


def test_a_verified_claim_that_rests_on_an_unverified_one_stays_open(kb_root):
    verify_all(kb_root)
    record(kb_root, "THEORY-085", "log-n-cap", "cpu", "failed", excess=0.3)
    assert summary(kb_root)["SOTA-364"] == ("verified", "open")
    assert summary(kb_root)["THEORY-085"] == ("contradicted", "open")


def test_a_verified_claim_that_rests_on_an_invalid_claim_stays_open(kb_root):
    verify_all(kb_root)
    path = kb_root / "claims" / "THEORY-085.yaml"
    path.write_text(path.read_text().replace("title: The InfoNCE estimate is capped at log N\n", ""))
    assert summary(kb_root)["SOTA-364"] == ("verified", "open")


def test_one_check_failing_beside_one_passing_makes_the_claim_partly_verified(kb_root):
    verify_all(kb_root)
    record(kb_root, "SOTA-364", "bn-cross-sample", "cpu", "failed", cross_sample_jacobian=0.0)
    assert summary(kb_root)["SOTA-364"] == ("partly-verified", "open")


def test_a_failure_on_one_device_outweighs_a_pass_on_another(kb_root):
    verify_all(kb_root)
    record(
        kb_root,
        "SOTA-364",
        "shuffle-bn",
        "cuda",
        "failed",
        top1=10.0,
        top1_nofix=20.0,
        signature_acc_shuffled=0.3,
        signature_acc_nofix=0.9,
    )
    assert summary(kb_root)["SOTA-364"] == ("mixed", "open")  # supported on one device, contradicted on another


def test_checks_that_all_failed_contradict_the_claim(kb_root):
    record(kb_root, "SOTA-364", "bn-cross-sample", "cpu", "failed", cross_sample_jacobian=0.0)
    record(
        kb_root,
        "SOTA-364",
        "shuffle-bn",
        "cpu",
        "known-failing",
        top1=10.0,
        top1_nofix=20.0,
        signature_acc_shuffled=0.3,
        signature_acc_nofix=0.9,
    )
    assert summary(kb_root)["SOTA-364"] == ("contradicted", "open")


def test_a_crashed_check_makes_the_claim_an_error(kb_root):
    verify_all(kb_root)
    record(kb_root, "SOTA-364", "shuffle-bn", "cpu", "error")
    assert summary(kb_root)["SOTA-364"] == ("error", "open")


def test_a_result_is_stale_when_a_module_the_verifier_imports_changes(kb_root):
    verify_all(kb_root)
    (kb_root / "verify" / "helpers.py").write_text("SEED = 1\n")
    st = states(kb_root)["SOTA-364"]
    assert (st.status, st.closure) == ("stale", "open")
    assert [(c.check, c.device, c.stale) for c in st.stale] == [
        ("bn-cross-sample", "cpu", ["verify/helpers.py changed"]),
        ("shuffle-bn", "cpu", ["verify/helpers.py changed"]),
        ("shuffle-bn", "cuda", ["verify/helpers.py changed"]),
    ]
    assert summary(kb_root)["THEORY-085"] == ("verified", "closed")


def test_a_result_is_stale_when_its_measurement_changes_and_re_judged_when_its_expectation_does(kb_root):
    verify_all(kb_root)
    path = kb_root / "claims" / "THEORY-085.yaml"
    path.write_text(path.read_text().replace("locator: Eq. (1)", "locator: Eq. (2)"))
    assert summary(kb_root)["THEORY-085"] == ("verified", "closed")
    path.write_text(path.read_text().replace("tol: 1.0e-6", "tol: 1.0e-5"))  # the judgement: re-judged, no rerun
    assert [c.stale for c in states(kb_root)["THEORY-085"].checks] == [[]]
    assert [e.tol for e in states(kb_root)["THEORY-085"].checks[0].result.expectation] == [1.0e-5]
    path.write_text(path.read_text().replace('unit: "fraction"', 'unit: "ratio"'))  # what the verifier records
    assert [c.stale for c in states(kb_root)["THEORY-085"].checks] == [
        ["the definition of check log-n-cap in THEORY-085 changed"]
    ]


def test_a_stale_reason_names_the_pinned_package_and_both_versions(kb_root):
    (kb_root / "requirements.lock").write_text("numpy==2.4.6\n")
    write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", parts={"pin:numpy": "0.0.1"}, excess=0.0)
    assert states(kb_root)["THEORY-085"].checks[0].stale == ["the lock's pin of numpy changed from 0.0.1 to 2.4.6"]


def test_a_result_computed_with_other_installed_packages_is_fresh_and_off_lock(kb_root):
    (kb_root / "requirements.lock").write_text("torch==2.13.0+cpu\nnumpy==2.4.6\n")
    env = dict(ENVIRONMENT, packages={**ENVIRONMENT["packages"], "torch": "2.11.0+cu128"}, torch_build="cuda 12.8")
    write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", environment=env, excess=0.0)
    check = states(kb_root)["THEORY-085"].checks[0]
    assert (check.status, check.stale, check.off_lock) == ("passed", [], ["torch 2.11.0+cu128 (lock: 2.13.0+cpu)"])
    assert check.flags == ["off-lock"]


def test_a_ledger_of_another_format_counts_as_an_error_with_a_diagnostic(kb_root):
    path = record(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    data = json.loads(path.read_text())
    files.write_atomic(path, json.dumps({**data, "format": 99}))
    ledger = store.read_ledger(kb_root)
    assert ledger.results == {}
    assert [d.render() for d in ledger.diagnostics] == [
        "results/THEORY-085/log-n-cap.cpu.json:1:1: error[ledger-format]: results/THEORY-085/log-n-cap.cpu.json is "
        "ledger format 99; this Assay reads format 2\n"
        "  hint: rerun the check with this version (pytest verify --claim ID), or delete the file"
    ]
    assert summary(kb_root)["THEORY-085"] == ("error", "open")


# --- the status vocabulary ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("per_device", "combined"),
    [
        ([], "not-run"),
        (["not-run"], "not-run"),
        (["skipped"], "not-run"),
        (["passed", "skipped"], "passed"),
        (["passed", "not-run"], "passed"),
        (["passed", "known-failing"], "known-failing"),
        (["passed", "failed"], "failed"),
        (["failed", "error"], "error"),
    ],
)
def test_combine_devices_lets_the_worst_status_that_ran_win(per_device, combined):
    assert status.combine_devices(per_device) == combined


@pytest.mark.parametrize(
    ("checks", "stale", "claim"),
    [
        ([], False, "cited-only"),
        (["passed", "passed"], False, "verified"),
        (["passed", "failed"], False, "mixed"),
        (["passed", "not-run"], False, "partly-verified"),
        (["passed", "known-failing"], False, "mixed"),
        (["failed", "known-failing"], False, "contradicted"),
        (["failed", "not-run"], False, "contradicted"),  # nothing supported, something contradicted: never olive
        (["not-run", "not-run"], False, "not-run"),
        (["passed", "error"], False, "error"),
        (["passed", "passed"], True, "stale"),
        (["error"], True, "error"),
    ],
)
def test_summarise_gives_a_claim_status_from_its_checks(checks, stale, claim):
    assert status.summarise(checks, stale) == claim


def test_not_run_and_skipped_never_summarise_to_verified():
    for statuses in (["not-run"], ["skipped"], ["passed", "not-run"]):
        assert status.summarise([status.combine_devices([s]) for s in statuses], False) != "verified"


def test_every_status_has_an_icon_a_colour_and_a_meaning():
    for table in (vocabulary.CHECK, vocabulary.CLAIM, vocabulary.CLOSURE, vocabulary.FRESHNESS):
        for name, s in table.items():
            assert s.name == name and s.icon.startswith("material-") and s.colour.startswith("#") and s.meaning


def test_summarise_and_combine_only_answer_with_statuses_of_the_vocabulary():
    assert {status.combine_devices([s]) for s in vocabulary.CHECK} <= set(vocabulary.CHECK)
    assert {status.summarise([s], stale) for s in vocabulary.CHECK for stale in (True, False)} <= set(vocabulary.CLAIM)


# --- closure over depends_on -------------------------------------------------------------------


def in_memory(links: dict[str, list[str]]) -> KnowledgeBase:
    """A knowledge base of cited-only claims, each depending on the claims ``links`` gives it."""
    files = []
    for cid, targets in links.items():
        claim = Claim.model_validate(
            {
                "id": cid,
                "title": cid,
                "statement": "It holds.",
                "no_check_reason": "cited only.",
                "citations": [{"source": "LIT-590", "locator": "§1", "quote": "We present MoCo."}],
                "relations": [{"type": "depends_on", "target": t} for t in targets],
            }
        )
        loaded = Loaded(f"claims/{cid}.yaml", "claims", {"id": cid}, record=claim)
        loaded.seal(outline(claim), lambda f: [])
        files.append(loaded)
    return KnowledgeBase(Path("."), files)


def _closed(kb: KnowledgeBase, verified: dict[str, bool]) -> dict[str, bool]:
    closed = status.Closure(kb, verified.__getitem__)
    return {cid: closed(cid) for cid in verified}


def test_closure_asks_the_status_of_what_a_claim_rests_on_only_where_the_claim_is_verified_and_once():
    kb = in_memory({"SOTA-001": ["SOTA-003"], "SOTA-002": ["SOTA-003"], "SOTA-003": ["SOTA-004"], "SOTA-004": []})
    asked = []
    closed = status.Closure(kb, lambda cid: asked.append(cid) or cid != "SOTA-001")
    assert [closed(cid) for cid in ("SOTA-001", "SOTA-002", "SOTA-003")] == [False, True, True]
    assert asked == ["SOTA-001", "SOTA-002", "SOTA-003", "SOTA-004"]


def test_closure_down_a_chain_of_5000_claims_opens_everything_above_one_unverified_link():
    # one pass over the chain; a search below each claim would walk 12.5 million links
    ids = [f"SOTA-{n}" for n in range(1000, 6000)]
    kb = in_memory({cid: ids[n + 1 : n + 2] for n, cid in enumerate(ids)})
    start = time.perf_counter()
    assert all(_closed(kb, dict.fromkeys(ids, True)).values())
    closed = _closed(kb, {**dict.fromkeys(ids, True), "SOTA-4000": False})
    assert [cid for cid in ids if closed[cid]] == ids[3001:]
    assert time.perf_counter() - start < 10


def test_a_verified_claim_in_a_depends_on_cycle_is_open_and_so_is_what_rests_on_it():
    kb = in_memory({"SOTA-001": ["SOTA-002"], "SOTA-002": ["SOTA-003"], "SOTA-003": ["SOTA-002"], "SOTA-004": []})
    assert _closed(kb, dict.fromkeys(["SOTA-001", "SOTA-002", "SOTA-003", "SOTA-004"], True)) == {
        "SOTA-001": False,
        "SOTA-002": False,
        "SOTA-003": False,
        "SOTA-004": True,
    }


def test_a_claim_resting_on_a_missing_claim_is_open_but_a_link_to_a_source_does_not_count():
    kb = in_memory({"SOTA-001": ["SOTA-999"], "SOTA-002": ["LIT-590"]})
    assert _closed(kb, {"SOTA-001": True, "SOTA-002": True}) == {"SOTA-001": False, "SOTA-002": True}


def test_closure_agrees_with_the_definition_on_random_graphs_with_knots_and_self_links():
    # the definition: closed when verified, in no cycle, and resting only on closed claims (over the condensation)
    rng = random.Random(7)
    for _ in range(60):
        ids = [f"SOTA-{n:03d}" for n in range(rng.randint(1, 40))]
        links = {cid: rng.sample(ids + ["SOTA-999"], min(len(ids) + 1, rng.randint(0, 3))) for cid in ids}
        verified = {cid: rng.random() < 0.8 for cid in ids}
        g = nx.DiGraph()
        g.add_nodes_from(ids)
        g.add_edges_from((c, t) for c, ts in links.items() for t in ts)
        knots = nx.condensation(g)
        closed_knot: dict[int, bool] = {}
        for k in reversed(list(nx.topological_sort(knots))):
            members = knots.nodes[k]["members"]
            one = next(iter(members)) if len(members) == 1 else None
            closed_knot[k] = (
                one is not None
                and verified.get(one, False)
                and not g.has_edge(one, one)
                and all(closed_knot[b] for b in knots.successors(k))
            )
        expected = {cid: closed_knot[knots.graph["mapping"][cid]] for cid in ids}
        assert _closed(in_memory(links), verified) == expected, links


# --- the graph ----------------------------------------------------------------------------------


def test_the_graph_has_a_node_per_record_and_a_typed_edge_per_link(kb_root):
    g = graph.to_json(graph.build(*load_states(kb_root)))
    assert [(n["id"], n["kind"], n.get("status")) for n in g["nodes"]] == [
        ("ADR-011", "decision", None),
        ("LIT-590", "source", None),
        ("LIT-612", "source", None),
        ("SOTA-364", "claim", "not-run"),
        ("THEORY-085", "theory", "not-run"),
        ("THEORY-090", "theory", "cited-only"),
    ]
    assert [(e["source"], e["type"], e["target"]) for e in g["edges"]] == [
        ("LIT-612", "compared_against", "LIT-590"),
        ("SOTA-364", "cites", "LIT-590"),
        ("SOTA-364", "cites", "LIT-612"),
        ("SOTA-364", "depends_on", "THEORY-085"),
        ("THEORY-085", "cites", "LIT-612"),
        ("THEORY-090", "cites", "LIT-612"),
        ("THEORY-090", "supports", "SOTA-364"),
    ]


def test_an_invalid_record_stays_in_the_graph_flagged(make_kb):
    g = graph.build(*load_states(make_kb("missing-field")))
    assert g.nodes["SOTA-380"] == {
        "kind": "claim",
        "title": "SOTA-380",
        "path": "claims/SOTA-380.yaml",
        "invalid": True,
        "status": "not-run",
        "closure": "open",
    }
    assert g.nodes["SOTA-364"]["invalid"] is False


def test_links_to_an_invalid_source_survive_so_one_typo_does_not_cascade(kb_root):
    path = kb_root / "sources" / "LIT-590.yaml"
    path.write_text(path.read_text().replace("kind: preprint", "kind: article"))
    g = graph.build(*load_states(kb_root))
    assert g.nodes["LIT-590"]["invalid"] is True
    assert g.has_edge("SOTA-364", "LIT-590", key="cites")
    assert g.has_edge("LIT-612", "LIT-590", key="compared_against")


def test_focus_keeps_what_is_within_depth_links_either_way(kb_root):
    g = graph.build(*load_states(kb_root))
    assert sorted(graph.focus(g, "THEORY-085", 0)) == ["THEORY-085"]
    assert sorted(graph.focus(g, "THEORY-085", 1)) == ["LIT-612", "SOTA-364", "THEORY-085"]
    assert sorted(graph.focus(g, "THEORY-085", 2)) == ["LIT-590", "LIT-612", "SOTA-364", "THEORY-085", "THEORY-090"]


def test_to_json_does_not_depend_on_the_order_records_were_added(kb_root):
    g = graph.build(*load_states(kb_root))
    reversed_g = type(g)()
    reversed_g.add_nodes_from(reversed(list(g.nodes(data=True))))
    reversed_g.add_edges_from(reversed(list(g.edges(keys=True, data=True))))
    assert json.dumps(graph.to_json(reversed_g)) == json.dumps(graph.to_json(g))


def test_to_dot_draws_sources_as_boxes_and_colours_claims_by_status(kb_root):
    g = graph.focus(graph.build(*load_states(kb_root)), "THEORY-085", 1)
    assert graph.to_dot(g) == (
        "digraph assay {\n"
        "  rankdir=LR;\n"
        '  "LIT-612" [label="LIT-612\\nA Simple Framework for Contrastive Learning of Visual Representations", '
        'shape=box, color="#5d4037"];\n'
        '  "SOTA-364" [label="SOTA-364\\nBatch norm leaks information between contrastive pairs", '
        'shape=ellipse, color="#9e9e9e"];\n'
        '  "THEORY-085" [label="THEORY-085\\nThe InfoNCE estimate is capped at log N", shape=diamond, color="#9e9e9e"];\n'
        '  "SOTA-364" -> "LIT-612" [label="cites"];\n'
        '  "SOTA-364" -> "THEORY-085" [label="depends_on"];\n'
        '  "THEORY-085" -> "LIT-612" [label="cites"];\n'
        "}\n"
    )


def test_to_mermaid_uses_ids_mermaid_accepts_and_labels_edges_by_type(kb_root):
    g = graph.focus(graph.build(*load_states(kb_root)), "THEORY-085", 1)
    assert graph.to_mermaid(g) == (
        "graph LR\n"
        '  LIT_612[("LIT-612: A Simple Framework for Contrastive Learning of Visual Representations")]\n'
        '  SOTA_364["SOTA-364: Batch norm leaks information between contrastive pairs"]\n'
        '  THEORY_085["THEORY-085: The InfoNCE estimate is capped at log N"]\n'
        "  SOTA_364 -->|cites| LIT_612\n"
        "  SOTA_364 -->|depends_on| THEORY_085\n"
        "  THEORY_085 -->|cites| LIT_612\n"
    )


def test_quotes_in_titles_are_escaped_in_dot_and_mermaid(kb_root):
    path = kb_root / "claims" / "THEORY-085.yaml"
    path.write_text(path.read_text().replace("title: The InfoNCE estimate is capped at log N", "title: 'The \"cap\"'"))
    g = graph.focus(graph.build(*load_states(kb_root)), "THEORY-085", 0)
    assert '"THEORY-085" [label="THEORY-085\\nThe \\"cap\\"", shape=diamond' in graph.to_dot(g)
    assert 'THEORY_085["THEORY-085: The #quot;cap#quot;"]' in graph.to_mermaid(g)
