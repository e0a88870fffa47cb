"""A source's page against the repository's knowledge base, whose sources keep their passages: one heading per
passage, each passage's words once with every claim that quotes them, and the numbers and discrepancies claims
take from a source under their passage or among the other places, every claim page's link into it resolving."""

from __future__ import annotations

import re
from html import unescape

import pytest

from assay.records.passages import holds, normalise
from assay.site import generate
from assay.site.markup import anchor
from tests.test_site import REPO

HEADING = re.compile(r'<h3 id="(cited-[^"]*)">(.*?)</h3>', re.S)


@pytest.fixture(scope="module")
def repo() -> tuple[object, dict[str, str]]:
    from assay.records.knowledge_base import load

    return load(REPO), {o.path: o.content for o in generate(REPO) if isinstance(o.content, str)}


def _passages(html: str) -> str:
    start = html.index('<h2 id="cited-passages">')
    end = html.find("<h2", start + 1)
    return html[start : end if end > 0 else len(html)]


def _words(html: str) -> str:
    """The page's words, letters and digits only: record text is marked up (``f_k`` reads f<sub>k</sub>)."""
    return _letters(unescape(re.sub(r"<[^>]+>", "", html)))


def _quoted(html: str) -> list[str]:
    """The words a page shows as the source's own, letters and digits only: each of its block quotes."""
    return [_words(q) for q in re.findall(r"<blockquote>(.*?)</blockquote>", html, re.S)]


def _letters(text: str) -> str:
    return re.sub(r"[\W_]+", "", normalise(text))


def _quoting(kb, source, passage) -> list[str]:
    """The claims whose citation quotes ``passage`` of ``source``, at its locator."""
    return sorted(
        {
            cid
            for cid, claim in kb.claims.items()
            for c in claim.citations
            if c.source == source.id
            and anchor(c.locator) == anchor(passage.locator)
            and holds(normalise(c.quote), normalise(passage.exact))
        }
    )


def test_each_passage_stands_under_one_heading_its_locator_as_the_source_gives_it(repo) -> None:
    kb, pages = repo
    kept = [s for s in kb.sources.values() if s.passages]
    assert kept
    for source in kept:
        block = _passages(pages[f"sources/{source.id}.md"])
        headings = HEADING.findall(block)
        assert len({slug for slug, _ in headings}) == len(headings), source.id
        declared = {anchor(p.locator): p.locator for p in source.passages}
        assert [(s, unescape(t)) for s, t in headings if declared.get(s[6:]) != unescape(t)] == [], source.id
        # the words of each passage a claim quotes stand under one heading, once (one passage may hold another)
        parts = re.split(r'<h3 id="', block)[1:]
        for p in source.passages:
            under = [part.split('"')[0] for part in parts for q in _quoted(part) if q == _letters(p.exact)]
            assert len(under) == (1 if _quoting(kb, source, p) else 0), (source.id, p.locator, under)


def test_a_quote_a_second_claim_makes_adds_that_claim_not_a_second_copy_of_the_words(repo) -> None:
    kb, pages = repo
    shared = []
    for source in (s for s in kb.sources.values() if s.passages):
        block = _passages(pages[f"sources/{source.id}.md"])
        for p in source.passages:
            claims = _quoting(kb, source, p)
            if len(claims) > 1:
                assert _quoted(block).count(_letters(p.exact)) == 1, (source.id, p.locator)
                assert _letters(f"cited by {', '.join(claims)}") in _words(block), (source.id, p.locator)
                shared.append(p.locator)
    assert shared  # some passage is quoted by two claims


def test_numbers_and_discrepancies_stand_at_their_place_and_every_link_into_a_source_resolves(repo) -> None:
    kb, pages = repo
    ids = {path: set(re.findall(r' id="([^"]+)"', html)) for path, html in pages.items() if path.startswith("sources/")}
    for path, found in ids.items():
        html = pages[path]
        assert len(re.findall(r' id="([^"]+)"', html)) == len(found), path  # no anchor twice
    broken = [
        (path, link)
        for path, html in pages.items()
        if path.startswith("claims/")
        for link in re.findall(r'href="\.\./sources/(LIT-\d+\.html#[^"]+)"', html)
        if link.split("#")[1] not in ids.get(f"sources/{link.split('.html')[0]}.md", set())
    ]
    assert broken == []
    for source in (s for s in kb.sources.values() if s.passages):
        block = _passages(pages[f"sources/{source.id}.md"])
        for cid, claim in kb.claims.items():
            for d in (d for d in claim.discrepancies if d.source == source.id):
                assert _letters(d.source_says)[:80] in _words(block), (source.id, cid, d.locator)
        headings = {unescape(t) for _, t in HEADING.findall(block)}
        others = block.split('<h3 id="other-places">')[1] if 'id="other-places"' in block else ""
        # a place named in other words than any passage's is no heading of its own
        for item in re.findall(r'<li id="cited-[^"]+"><strong>(.*?)</strong>', others):
            assert unescape(item) not in headings


def test_a_source_page_leads_with_each_takeaway_and_the_verdicts_of_the_assertions_that_file_it(repo) -> None:
    from assay.site.views import index

    kb, pages = repo
    html = pages["sources/LIT-591.md"]
    assert html.index('<h2 id="takeaways">What we found</h2>') < html.index('<h2 id="cited-passages">')
    items = re.findall(r'<li class="assay-takeaway">(.*?)</li>', html, re.S)
    assert len(items) == len(kb.sources["LIT-591"].takeaways) == 8
    summaries = index(REPO).summaries
    verdicts = dict(summaries["SOTA-364"].verdicts)
    bn = next(i for i in items if "Batch norm leaks the answer" in i)
    assert 'href="../claims/SOTA-364.html#assertion-leak-exploited"' in bn
    assert f"SOTA-364 leak-exploited: {verdicts['leak-exploited']}</span>" in bn
    first = items[0]
    shown = re.findall(r'#assertion-([a-z0-9-]+)"', first)
    assert set(shown) == {
        "composition-is-the-task",
        "proved-by-removing-pieces",
        "crop-colour-stands-out",
        "shortcut-is-the-reason",
        "crops-share-histogram",
        "network-takes-the-route",
        "no-single-suffices",
        "solving-and-learning-come-apart",
    }
    still = [
        a
        for a in shown
        if dict(summaries["SOTA-361"].verdicts + summaries["SOTA-365"].verdicts).get(a) not in ("supported", "untested")
    ]
    assert shown[: len(still)] == still  # what does not hold first
    assert f'<span class="assay-label">{len(still)} of 8 do not hold:</span>' in first


def test_a_takeaway_its_source_states_otherwise_is_flagged_where_it_is_shown(repo) -> None:
    _, pages = repo
    first = re.findall(r'<li class="assay-takeaway">(.*?)</li>', pages["sources/LIT-591.md"], re.S)[0]
    flags = re.findall(r'<p class="assay-differs-flag[^"]*">(.*?)</p>', first, re.S)
    assert len(flags) == 4  # SOTA-361's discrepancies against LIT-591 for words of this takeaway
    assert _words(flags[0]).startswith(
        _letters("The source’s own text differs (SOTA-361, §3.1; Figure 5): “the paper proves it by removing pieces”")
    )


def test_a_source_page_shows_its_venue_and_its_first_posting_apart(repo) -> None:
    _, pages = repo
    html = pages["sources/LIT-590.md"]
    assert "<dt>Year</dt><dd>2020</dd>" in html
    venue = "CVPR 2020: IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR), pp. 9729–9738, IEEE"
    assert f"<dt>Published</dt><dd>{venue}</dd>" in html
    assert "<dt>First posted</dt><dd>arXiv 1911.05722v3, first posted 2019-11</dd>" in html
    assert "@inproceedings{he2020momentum," in html and "  pages = {9729--9738},\n" in html
