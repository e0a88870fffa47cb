"""assay.export: BibTeX for every source, JSON for every record with its computed status."""

from __future__ import annotations

import io
import json

from assay import citation, export, graph, overview
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
    monkeypatch.setattr("assay.corpus.LARGE_FROM", 0)
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr("assay.corpus.cache.RACY_S", -1.0)
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
        states = States.read(kb)
        export.write_json(kb, states, out)
        states.save()
        assert json.loads(out.getvalue()) == whole
    assert {c["id"]: c["status"] for c in whole["claims"]} == {
        "SOTA-364": "contradicted",
        "THEORY-085": "verified",
        "THEORY-090": "cited-only",
    }


def test_the_export_computes_each_claims_state_once_when_no_status_was_kept(kb_root, monkeypatch, tmp_path):
    # the closure of a verified claim needs the status of what it rests on: known by then, or made once and kept
    monkeypatch.setattr("assay.corpus.LARGE_FROM", 0)
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    made = []
    check_states = overview.check_states
    monkeypatch.setattr(
        overview, "check_states", lambda inputs, claim, *a, **k: made.append(claim.id) or check_states(inputs, claim, *a, **k)
    )
    kb = load(kb_root, cache=True)
    export.write_json(kb, States.read(kb), io.StringIO())
    assert sorted(made) == ["SOTA-364", "THEORY-085", "THEORY-090"]


def published(**fields) -> Source:
    conference = {
        "kind": "conference",
        "name": "IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)",
        "short": "CVPR 2020",
        "year": 2020,
        "pages": {"first": 9729, "last": 9738},
        "publisher": "IEEE",
    }
    return source(kind="paper", date="2019-11", published={**conference, **fields})


def test_a_conference_paper_is_inproceedings_in_its_venues_year_with_its_pages_and_its_arxiv_posting_apart():
    assert citation.bibtex(published()) == (
        "@inproceedings{he2020momentum,\n"
        "  title = {Momentum Contrast for Unsupervised Visual Representation Learning},\n"
        "  author = {Kaiming He and Haoqi Fan},\n"
        "  year = {2020},\n"
        "  booktitle = {IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)},\n"
        "  pages = {9729--9738},\n"
        "  publisher = {IEEE},\n"
        "  eprint = {1911.05722v3},\n"
        "  archiveprefix = {arXiv},\n"
        "  note = {Assay LIT-590; arXiv 1911.05722v3, first posted 2019-11}\n"
        "}\n"
    )


def test_a_conference_paper_in_csl_json_is_a_paper_conference_issued_in_its_venues_year():
    item = citation.csl(published())
    assert (item["type"], item["issued"], item["available-date"]) == (
        "paper-conference",
        {"date-parts": [[2020]]},
        {"date-parts": [[2019, 11]]},
    )
    assert (item["container-title"], item["page"], item["publisher"]) == (published().published.name, "9729-9738", "IEEE")


def test_a_conference_papers_page_tags_name_its_conference_and_its_first_and_last_page():
    tags = citation.highwire(published())
    assert ("citation_conference_title", published().published.name) in tags
    assert ("citation_firstpage", "9729") in tags and ("citation_lastpage", "9738") in tags
    assert ("citation_publication_date", "2020") in tags and ("citation_online_date", "2019/11") in tags
    assert not [name for name, _ in tags if name == "citation_journal_title"]


def test_a_journal_paper_is_an_article_with_citation_journal_title():
    paper = published(kind="journal", name="Journal of Machine Learning Research", volume="21")
    assert citation.bibtex(paper).startswith(
        "@article{"
    ) and "  journal = {Journal of Machine Learning Research},\n" in citation.bibtex(paper)
    assert citation.csl(paper)["type"] == "article-journal"
    assert ("citation_journal_title", "Journal of Machine Learning Research") in citation.highwire(paper)


def test_the_last_page_may_not_come_before_the_first():
    import pydantic
    import pytest

    with pytest.raises(pydantic.ValidationError, match=r"the last page \(9\) comes before the first \(12\)"):
        published(pages={"first": 12, "last": 9})


def test_assay_export_csl_prints_every_source_as_csl_json(kb_root, capsys):
    from assay.cli import main

    assert main(["--root", str(kb_root), "export", "csl"]) == 0
    assert [i["id"] for i in json.loads(capsys.readouterr().out)] == ["LIT-590", "LIT-612"]


def test_a_claim_is_cited_as_an_entry_of_the_work_at_its_commit_and_the_day_it_was_read():
    work = citation.Work("Assay: a knowledge base", ("The Assay contributors",), "0.1.0", "https://example.org/kb/")
    cited = citation.ClaimCitation(
        "SOTA-364",
        "Batch norm leaks",
        work,
        "1a2b3c4d",
        "2026-01-05",
        "2026-02-01",
        "https://example.org/kb/claims/SOTA-364.html",
    )
    assert cited.bibtex() == (
        "@misc{assay-sota-364,\n"
        "  title = {SOTA-364: Batch norm leaks},\n"
        "  author = {{The Assay contributors}},\n"
        "  year = {2026},\n"
        "  howpublished = {Assay: a knowledge base},\n"
        "  version = {0.1.0, commit 1a2b3c4d},\n"
        "  url = {https://example.org/kb/claims/SOTA-364.html},\n"
        "  urldate = {2026-02-01},\n"
        "  note = {Claim SOTA-364, accessed 2026-02-01}\n"
        "}\n"
    )
    assert cited.csl()["accessed"] == {"date-parts": [[2026, 2, 1]]} and cited.csl()["container-title"] == work.title
