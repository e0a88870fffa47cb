"""assay.export: BibTeX for every source, JSON for every record with its computed status."""

from __future__ import annotations

import io
import json

from assay import citation, export, graph
from assay.model import Source
from assay.overview import States
from assay.records.knowledge_base import load
from tests.conftest import load_states, write_result


def source(**fields) -> Source:
    base = {
        "id": "LIT-590",
        "kind": "preprint",
        "title": "Momentum Contrast for Unsupervised Visual Representation Learning",
        "authors": ["Kaiming He", "Haoqi Fan"],
        "year": 2019,
        "identifiers": {"arxiv": "1911.05722v3"},
    }
    return Source.model_validate({**base, **fields})


def test_a_bibkey_is_surname_year_and_first_long_word_of_the_title():
    assert citation.bibkey(source()) == "he2019momentum"
    assert citation.bibkey(source(authors=["Aäron van den Oord"], title="On a CPC")) == "oord2019work"


def test_a_preprint_is_an_article_with_its_arxiv_eprint():
    assert export.bibtex(source()) == (
        "@article{he2019momentum,\n"
        "  title = {Momentum Contrast for Unsupervised Visual Representation Learning},\n"
        "  author = {Kaiming He and Haoqi Fan},\n"
        "  year = {2019},\n"
        "  eprint = {1911.05722v3},\n"
        "  archiveprefix = {arXiv},\n"
        "  note = {Assay LIT-590}\n"
        "}\n"
    )


def test_a_paper_is_inproceedings_with_its_venue_as_booktitle():
    text = export.bibtex(source(kind="paper", venue="CVPR 2020", identifiers={"doi": "10.1109/CVPR42600.2020.00975"}))
    assert text.startswith("@inproceedings{he2019momentum,\n")
    assert "  booktitle = {CVPR 2020},\n" in text and "  doi = {10.1109/CVPR42600.2020.00975},\n" in text


def test_a_blog_post_is_misc_with_its_site_as_howpublished():
    text = export.bibtex(source(kind="blog", venue="distill.pub", identifiers={"url": "https://distill.pub/x_y"}))
    assert text.startswith("@misc{") and "  howpublished = {distill.pub},\n" in text
    assert "  url = {https://distill.pub/x_y},\n" in text  # urls are not escaped


def test_bibtex_specials_in_text_are_escaped():
    text = export.bibtex(source(title="100% of {BN} & co_ops cost $5 #1"))
    assert "  title = {100\\% of \\textbraceleft{}BN\\textbraceright{} \\& co\\_ops cost \\$5 \\#1},\n" in text


def test_bibtex_all_lists_sources_in_id_order(kb_root):
    text = export.bibtex_all(load(kb_root))
    assert text.index("Assay LIT-590") < text.index("Assay LIT-612")
    assert text.count("@") == 2


def test_the_json_export_holds_each_claim_with_status_closure_and_metrics(kb_root):
    write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    kb, states = load_states(kb_root)
    data = export.as_json(kb, states)
    theory = next(c for c in data["claims"] if c["id"] == "THEORY-085")
    assert (theory["status"], theory["closure"]) == ("verified", "closed")
    assert theory["results"] == [
        {
            "check": "log-n-cap",
            "device": "cpu",
            "status": "passed",
            "stale": [],
            "flags": [],
            "off_lock": [],
            "metrics": {"excess": 0.0},
            "expectation": [
                {
                    "metric": "excess",
                    "op": "==",
                    "value": 0.0,
                    "measured": 0.0,
                    "unit": "fraction",
                    "outcome": "holds",
                    "seeds": "value",
                    "seeds_holding": None,
                    "seeds_total": None,
                    "control": False,
                    "against": [],
                    "discriminates": None,
                }
            ],
            "registration": [],  # the fixture is no git repository: no history, so no registration
            "last_error": None,
        }
    ]
    assert theory["history"] is None
    assert theory["assertions"][0]["evidence"] == [{"check": "log-n-cap", "stance": "supports", "metrics": [], "because": None}]
    assert (theory["assertion_status"], theory["assertion_counts"]) == ({"cap": {"cpu": "supported"}}, "cpu: 1 supported")
    assert [s["id"] for s in data["sources"]] == ["LIT-590", "LIT-612"]
    assert [d["id"] for d in data["decisions"]] == ["ADR-011"]
    assert data["graph"] == graph.to_json(graph.build(kb, states))
    json.dumps(data, allow_nan=False)  # plain JSON all the way down


def test_the_json_export_leaves_out_invalid_records_but_the_graph_keeps_them(make_kb):
    kb, states = load_states(make_kb("missing-field"))
    data = export.as_json(kb, states)
    assert "SOTA-380" not in [c["id"] for c in data["claims"]]
    assert {"id": "SOTA-380", "invalid": True} in [
        {"id": n["id"], "invalid": n["invalid"]} for n in data["graph"]["nodes"] if n["invalid"]
    ]


def test_the_streamed_json_export_is_the_same_data_a_record_per_line(kb_root):
    write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    kb, states = load_states(kb_root)
    out = io.StringIO()
    export.write_json(kb, states, out)
    assert json.loads(out.getvalue()) == export.as_json(kb, states)
    lines = out.getvalue().splitlines()
    assert lines[:3] == ["{", ' "claims": [', "  {"]
    assert '   "id": "SOTA-364",' in lines and lines[-2:] == [" ]", "}"]  # a claim's fields a line each


def test_the_json_export_shows_the_last_error_without_engine_frames_or_machine_paths(kb_root):
    message = (
        "Traceback (most recent call last):\n"
        '  File "/home/someone/venv/lib/python3.11/site-packages/_pytest/python.py", line 1, in call\n'
        "    return f()\n"
        f'  File "{kb_root}/verify/test_theory085.py", line 9, in test_x\n'
        "    raise ValueError('boom')\n"
        "ValueError: boom"
    )
    path = write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    data = json.loads(path.read_text())
    data["last_error"] = {"kind": "error", "message": message, "finished": "2026-01-01T00:00:00Z"}
    path.write_text(json.dumps(data))
    kb, states = load_states(kb_root)
    theory = next(c for c in export.as_json(kb, states)["claims"] if c["id"] == "THEORY-085")
    shown = theory["results"][0]["last_error"]["message"]
    assert "site-packages" not in shown and str(kb_root) not in shown and "/home/" not in shown
    assert 'File "verify/test_theory085.py", line 9' in shown and shown.endswith("ValueError: boom")


def test_the_export_made_a_claim_at_a_time_equals_the_one_made_from_every_state_at_once(kb_root, monkeypatch, tmp_path):
    # States computes each claim's state as the writer reaches it and releases it after; with the caches
    # of a large knowledge base (forced here), on a second run whose parses, readings and statuses are kept
    monkeypatch.setattr("assay.overview.CACHE_FROM", 0)
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr("assay.cache.RACY_S", -1.0)
    write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    write_result(
        kb_root,
        "SOTA-364",
        "shuffle-bn",
        "cpu",
        "failed",
        top1=1.0,
        top1_nofix=20.0,
        signature_acc_shuffled=0.3,
        signature_acc_nofix=0.9,
    )
    whole = export.as_json(*load_states(kb_root))
    for _ in range(2):
        kb = load(kb_root, cache=True)
        out = io.StringIO()
        export.write_json(kb, States.read(kb), out)
        assert json.loads(out.getvalue()) == whole
    assert {c["id"]: c["status"] for c in whole["claims"]} == {
        "SOTA-364": "contradicted",
        "THEORY-085": "verified",
        "THEORY-090": "cited-only",
    }
