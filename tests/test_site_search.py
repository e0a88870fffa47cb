"""The site search ranks a claim by its title and its statement: the index's own field for the statement, and the
order Material's search gives in headless Chromium (typed into the search box, as a reader does)."""

from __future__ import annotations

import json
from html import unescape
from pathlib import Path
from typing import Iterator

import pytest

from assay.site import search
from tests.browser import serve


def test_each_claims_own_entry_holds_its_statement_in_a_field_weighed_below_its_title(built_index: dict) -> None:
    from assay.records.knowledge_base import load
    from tests.test_site import REPO

    fields = built_index["config"]["fields"]
    assert fields[search.STATEMENT]["boost"] == search.STATEMENT_BOOST < fields["title"]["boost"]
    docs = {d["location"]: d for d in built_index["docs"]}
    for cid, claim in load(REPO).claims.items():
        entry = docs[f"claims/{cid}.html"]
        assert " ".join(claim.statement.split()) in unescape(entry[search.STATEMENT]), cid
    assert not [d["location"] for d in built_index["docs"] if search.STATEMENT in d and "#" in d["location"]]
    assert not [d["location"] for d in built_index["docs"] if search.STATEMENT in d and not d["location"].startswith("claims/")]


def test_a_statement_with_markup_is_text_in_the_index() -> None:
    index = json.dumps({"config": {"fields": {"title": {"boost": 1000}}}, "docs": [{"location": "claims/X.html"}]})
    from types import SimpleNamespace

    words = search.statement(SimpleNamespace(statement="a <script>x</script>\n  b", refined=None))
    assert words == "a &lt;script&gt;x&lt;/script&gt; b"
    out = json.loads(search.with_statements(index, {"claims/X.html": words}))
    assert out["docs"][0][search.STATEMENT] == words and out["config"]["fields"][search.STATEMENT] == {"boost": 500.0}


@pytest.fixture(scope="module")
def built_index(repo_site_dir: Path) -> dict:
    return json.loads((repo_site_dir / "search" / "search_index.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def repo_site(repo_site_dir: Path) -> Iterator[str]:
    yield from serve(repo_site_dir)


@pytest.mark.parametrize(
    ("query", "first", "below"),
    [
        # "layer norm" is in SOTA-364's statement; SOTA-390's title holds "norm" and its statement "layers"; SOTA-362's
        # title holds "layer" only
        ("layer norm", ("claims/SOTA-364.html", "claims/SOTA-390.html"), "claims/SOTA-362.html"),
        # a record's id, in its title, finds it before the claim whose statement names it
        ("THEORY-085", ("claims/THEORY-085.html",), "claims/SOTA-367.html"),
    ],
)
def test_the_claim_whose_title_or_statement_holds_the_words_ranks_first(
    repo_site: str, browser, query: str, first: tuple[str, ...], below: str
) -> None:
    from tests.test_graph_site import _search

    hits = [h.split("#")[0] for h in _search(browser, repo_site, query)]
    claims = [h for h in hits if h.startswith("claims/")]
    assert claims[0] in first, hits[:6]
    assert below in hits and hits.index(claims[0]) < hits.index(below), hits[:6]
    assert hits[0] == claims[0], hits[:6]
