"""The graph page, the claim page's neighbourhood figure and the site search, in headless Chromium.

Builds the repository's own knowledge base (17 records, six relation types) and the fixture one (which
has ``contradicts``), opens them over http on 127.0.0.1 in Debian's chromium (driven by Playwright;
nothing downloaded) and asserts numbers: label boxes inside the canvas box, the legend in view without
any interaction, one dash pattern per relation type on the canvas and in the legend, the panel's verdict
counts, contrast of the mini-graph's labels, and what the search ranks first. Screenshots for a person go
to build/screens/graph-*.png.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Iterator

import pytest

from assay.site import explorer
from assay.site.markup import BACKGROUNDS, contrast
from assay.site.views import SETTLED
from tests.browser import CHROMIUM, OBSERVED, new_page, serve
from tests.test_site import REPO

SHOTS = REPO / "build" / "screens"
NAMED = ["depends_on", "supports", "contradicts", "refines", "generalises", "compared_against"]

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (make browser)")


# --- without a browser ----------------------------------------------------------------------------


def test_each_relation_type_has_its_own_dash_pattern_and_a_colour_with_contrast_in_both_schemes() -> None:
    by = {r.type: r for r in explorer.RELATIONS}
    assert set(NAMED) | {"cites"} == set(by)
    dashes = [tuple(by[t].dash) for t in NAMED]
    assert len(set(dashes)) == len(NAMED), dashes
    looks = [(tuple(r.dash), r.width, r.head) for r in explorer.RELATIONS]
    assert len(set(looks)) == len(looks)
    assert len({by[t].head for t in NAMED}) == len(NAMED)  # the arrowheads differ too
    for r in explorer.RELATIONS:
        assert contrast(r.light, BACKGROUNDS["default"]) >= 4.5, r
        assert contrast(r.dark, BACKGROUNDS["slate"]) >= 4.5, r


def test_the_neighbourhood_labels_pick_the_ink_that_reads_on_their_box() -> None:
    from assay import vocabulary
    from assay.site.neighbourhood import KIND_FILL, ink

    for fill in [s.colour for s in vocabulary.CLAIM.values()] + list(KIND_FILL.values()):
        assert contrast(ink(fill), fill) >= 4.5, fill
    assert ink("#9e9d24") == "#000000" and ink("#5d4037") == "#ffffff"  # white on olive read 2.9:1 before


def test_the_layers_put_what_is_rested_on_first_and_a_cycle_in_one_layer() -> None:
    import networkx as nx

    from assay.site.graph_layout import ranked
    from assay.site.views import index

    g = index(REPO).graph
    lay = ranked(g)
    knot = {n: k for k, members in enumerate(nx.strongly_connected_components(g)) for n in members}
    for a, b in g.edges():
        if knot[a] != knot[b]:  # every arrow points left, to an earlier layer, but within a knot (two claims that
            # contradict each other), which shares a layer
            assert lay[a][0] > lay[b][0], (a, b)
        else:
            assert lay[a][0] == lay[b][0], (a, b)
    assert len(set(lay.values())) == g.number_of_nodes()  # each its own place in its layer
    assert ranked(g) == lay  # deterministic
    cycle = nx.MultiDiGraph([("a", "b"), ("b", "a"), ("b", "c"), ("d", "a")])
    assert {n: layer for n, (layer, _) in ranked(cycle).items()} == {"a": 1, "b": 1, "c": 0, "d": 2}


# --- the built sites --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def repo_site(repo_site_dir: Path) -> Iterator[str]:
    yield from serve(repo_site_dir)


@pytest.fixture(scope="module")
def fixture_site(fixture_site_dir: Path) -> Iterator[str]:
    yield from serve(fixture_site_dir)


@pytest.fixture(scope="module")
def repo_graph() -> dict:
    """The repository's graph as the page's data holds it, and the in-degree of each record."""
    from assay.site.views import index

    ix = index(REPO)
    data = explorer.data(ix)
    used_by = {n: sum(1 for a, _ in ix.graph.in_edges(n) if a != n) for n in ix.graph.nodes}
    return {"data": data, "used_by": used_by, "states": ix.states}


# Records every stroke the page makes on a canvas: its colour, dash pattern and width.
STROKES = """
window.__strokes = [];
const stroke = CanvasRenderingContext2D.prototype.stroke;
CanvasRenderingContext2D.prototype.stroke = function (...args) {
  window.__strokes.push([String(this.strokeStyle), this.getLineDash().join(","), this.lineWidth]);
  return stroke.apply(this, args);
};
"""


def _page(browser, width: int = 1280, dark: bool = False, strokes: bool = False):
    return new_page(browser, width, dark, STROKES if strokes else None)


def _graph(page, url: str) -> dict:
    page.goto(url)
    page.wait_for_function("document.body.dataset.graphReady === '1'", timeout=15_000)
    page.evaluate(OBSERVED)
    return page.evaluate("""() => { const c = document.getElementById('assay-graph-canvas').getBoundingClientRect();
        return {w: c.width, h: c.height, top: c.top, left: c.left, stats: window.assayGraph.stats}; }""")


def _tag(width: int, dark: bool) -> str:
    return f"{width}-{'dark' if dark else 'light'}"


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
def test_labels_stay_inside_the_canvas_and_the_legend_is_in_view(
    repo_site: str, repo_graph: dict, browser, width: int, dark: bool
) -> None:
    page, errors = _page(browser, width, dark)
    g = _graph(page, f"{repo_site}/graph.html")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"graph-{_tag(width, dark)}.png"))
    labels, n = g["stats"]["labels"], len(repo_graph["data"]["nodes"])
    assert g["stats"]["nodesDrawn"] == n
    for box in labels:
        assert 0 <= box["x"] and box["x"] + box["w"] <= g["w"], box
        assert 0 <= box["y"] and box["y"] + box["h"] <= g["h"], box
    if width == 1280:  # every record named, most with their title's words
        assert sorted(b["id"] for b in labels) == sorted(r[0] for r in repo_graph["data"]["nodes"])
        assert sum(b["lines"] > 0 for b in labels) == n
    else:
        assert len(labels) >= 0.8 * n, sorted(b["id"] for b in labels)
    # the drawing uses the top of the canvas: some record within its top 40 %
    tops = page.evaluate("() => window.assayGraph.ids.map(id => window.assayGraph.screen(id)).filter(Boolean).map(p => p.y)")
    assert min(tops) < 0.4 * g["h"] and max(tops) > 0.6 * g["h"]
    # the legend: in the viewport on arrival, no box to open, every relation's sample drawn
    legend = page.locator("#assay-graph-legend")
    box = legend.bounding_box()
    assert box and 0 <= box["y"] and box["y"] + box["height"] <= 900 and box["x"] + box["width"] <= width, box
    assert page.locator("#assay-graph-legend").evaluate("e => e.closest('details') === null")
    for r in explorer.RELATIONS:
        sample = page.locator(f'[data-relation="{r.type}"] + svg')
        assert sample.is_visible() and sample.bounding_box()["width"] >= 28
    # every relation's colour keeps 4.5:1 against the background the canvas is actually drawn on
    bg = page.evaluate("() => getComputedStyle(document.getElementById('assay-graph')).backgroundColor")
    rgb = "#" + "".join(f"{int(v):02x}" for v in bg[bg.index("(") + 1 : bg.index(")")].split(",")[:3])
    assert contrast(rgb, BACKGROUNDS["slate" if dark else "default"]) < 1.05  # the scheme's page background
    for r in explorer.RELATIONS:
        assert contrast(r.dark if dark else r.light, rgb) >= 4.5, (r.type, rgb)
    assert errors == []


def _dashes_drawn(page, scheme: str, data: dict) -> dict[str, str]:
    """The dash pattern each relation was stroked with on the canvas, found by its colour."""
    by_look = {(r[scheme], round(r["width"], 2)): r["type"] for r in data["relations"]}  # arrowheads are stroked thinner
    seen: dict[str, set[str]] = {}
    for colour, dash, width in page.evaluate("window.__strokes"):
        if (colour, round(width, 2)) in by_look:
            seen.setdefault(by_look[(colour, round(width, 2))], set()).add(dash)
    return {t: d.pop() for t, d in seen.items() if len(d) == 1}


@pytest.mark.parametrize("which", ["repo", "fixture"])
def test_the_canvas_draws_each_relation_with_the_legend_s_dash_pattern(
    repo_site: str, fixture_site: str, browser, which: str
) -> None:
    base = repo_site if which == "repo" else fixture_site
    page, errors = _page(browser, 1280, strokes=True)
    _graph(page, f"{base}/graph.html")
    data = page.evaluate("window.ASSAY_GRAPH")
    present = {data["relations"][e[2]]["type"] for e in data["edges"]}
    drawn = _dashes_drawn(page, "light", data)
    legend = {
        r.type: page.locator(f'[data-relation="{r.type}"] + svg line').evaluate("e => getComputedStyle(e).strokeDasharray")
        for r in explorer.RELATIONS
    }
    for t in present:
        want = ",".join(f"{v:g}" for v in explorer.BY_TYPE[t].dash)
        assert drawn.get(t) == want, (t, drawn)
        assert legend[t].replace("px", "").replace(" ", "") == (want or "none"), (t, legend[t])
    named = [legend[t] for t in NAMED]
    assert len(set(named)) == len(NAMED), named
    if which == "repo":
        assert present >= {"cites", "depends_on", "supports", "refines", "generalises", "compared_against"}
    else:
        assert "contradicts" in present
    assert errors == []


@pytest.mark.parametrize("width", [1280, 390])
def test_the_panel_beside_a_record_shows_its_verdict_counts_and_what_uses_it(
    repo_site: str, repo_graph: dict, browser, width: int
) -> None:
    page, errors = _page(browser, width)
    g = _graph(page, f"{repo_site}/graph.html")
    page.locator("#assay-graph").scroll_into_view_if_needed()
    at = page.evaluate("window.assayGraph.screen('SOTA-364')")
    frame = page.locator("#assay-graph-canvas").bounding_box()
    x, y = frame["x"] + at["x"], frame["y"] + at["y"]
    if width == 1280:
        page.mouse.move(x, y)
    else:  # a tap shows the panel; the page opens on a second tap
        page.evaluate("window.assayGraph.show('SOTA-364')")
    panel = page.locator("#assay-graph-panel")
    panel.wait_for(state="visible")
    text = panel.inner_text()
    counts = repo_graph["data"]["counts"][next(r[7] for r in repo_graph["data"]["nodes"] if r[0] == "SOTA-364")]
    assert counts and counts == explorer.verdict_counts(repo_graph["states"]["SOTA-364"])
    assert f"Verdict counts: {counts}" in text
    assert f"Used by {repo_graph['used_by']['SOTA-364']} (" in text
    box = panel.bounding_box()
    assert frame["x"] <= box["x"] and box["x"] + box["width"] <= frame["x"] + g["w"] + 1
    assert frame["y"] <= box["y"] and box["y"] + box["height"] <= frame["y"] + g["h"] + 1
    assert min(abs(box["y"] - y), abs(box["y"] + box["height"] - y)) < 40 or box["y"] <= y <= box["y"] + box["height"]
    assert errors == []


def test_focus_links_depth_filters_and_find_keep_working(repo_site: str, repo_graph: dict, browser) -> None:
    from assay.graph import focus as focus_graph
    from assay.site.views import index

    g = index(REPO).graph
    near, far = (focus_graph(g, "SOTA-371", d).number_of_nodes() for d in (1, 99))
    assert near < far  # so the depth is seen to matter
    page, errors = _page(browser)
    drawn = _graph(page, f"{repo_site}/graph.html#focus=SOTA-371&depth=1")
    assert drawn["stats"]["nodesDrawn"] == near
    assert "Focused on SOTA-371" in page.locator("#assay-graph-focus-label").inner_text()
    assert page.locator("#assay-graph-panel").inner_text().startswith("SOTA-371")
    page.select_option("#assay-graph-depth", "99")
    assert page.evaluate("window.assayGraph.stats.nodesDrawn") == far
    page.click("#assay-graph-clear")
    n = len(repo_graph["data"]["nodes"])
    assert page.evaluate("window.assayGraph.stats.nodesDrawn") == n
    edges = page.evaluate("window.assayGraph.stats.edgesDrawn")
    page.locator('[data-relation="cites"]').uncheck()
    cites = sum(1 for e in repo_graph["data"]["edges"] if repo_graph["data"]["relations"][e[2]]["type"] == "cites")
    assert page.evaluate("window.assayGraph.stats.edgesDrawn") == edges - cites
    page.locator('[data-kind="source"]').uncheck()
    sources = sum(1 for r in repo_graph["data"]["nodes"] if r[2] == "source")
    assert page.evaluate("window.assayGraph.stats.nodesDrawn") == n - sources
    page.fill("#assay-graph-search", "batch norm leaks")
    assert page.locator("#assay-graph-results li").first.inner_text().startswith("SOTA-364")
    page.press("#assay-graph-search", "Enter")
    assert "Focused on SOTA-364" in page.locator("#assay-graph-focus-label").inner_text()
    assert "#focus=SOTA-364&depth=99" in page.url
    assert errors == []


def test_the_page_wraps_a_layer_taller_than_its_block_into_sub_columns(repo_site: str, repo_graph: dict, browser) -> None:
    # one source and 2,000 claims resting on it, in place of the repository's graph: a block of about the
    # canvas's shape has ceil(sqrt(2001 * 4.5 / 1.25)) = 85 rows, so the claims' layer takes ceil(2000 / 85) columns
    claims = [[f"SOTA-{i:04d}", "t", "claim", "not-run", 1, i, 0, 0, [], [], ""] for i in range(2000)]
    data = {**repo_graph["data"], "nodes": [["LIT-001", "s", "source", "", 0, 0, 0, 0, [], [], ""], *claims]}
    data["edges"] = [[i, 0, 0] for i in range(1, 2001)]
    page, errors = _page(browser)
    script = f"window.ASSAY_GRAPH = {json.dumps(data)};"
    page.route("**/graph-data.js", lambda route: route.fulfill(body=script, content_type="text/javascript"))
    assert _graph(page, f"{repo_site}/graph.html")["stats"]["nodesDrawn"] == 2001
    at = page.evaluate("window.assayGraph.ids.map(id => window.assayGraph.screen(id))")
    assert len({round(p["x"]) for p in at}) == 1 + math.ceil(2000 / 85)
    assert len({(round(p["x"]), round(p["y"])) for p in at}) == 2001
    assert errors == []


def test_each_claim_is_ringed_by_its_assertions_verdicts_in_the_verdict_palette(
    repo_site: str, repo_graph: dict, browser
) -> None:
    from assay import vocabulary

    page, errors = _page(browser, 1280, strokes=True)
    _graph(page, f"{repo_site}/graph.html")
    data = page.evaluate("window.ASSAY_GRAPH")
    states = repo_graph["states"]
    node = next(r for r in data["nodes"] if r[0] == "SOTA-364")
    verdicts = [a.by_device["cpu"] for a in states["SOTA-364"].assertions]
    assert node[8] == [verdicts.count(v) for v in vocabulary.ASSERTION] and node[10] == "cpu"
    assert [a for a, _ in node[9]] == [a.id for a in states["SOTA-364"].assertions if a.by_device["cpu"] not in SETTLED]
    assert [v["light"] for v in data["verdicts"]] == [explorer.schemes(s.colour)["light"] for s in vocabulary.ASSERTION.values()]
    shown = {k for r in data["nodes"] if r[8] for k, n in enumerate(r[8]) if n}
    stroked = {c for c, *_ in page.evaluate("window.__strokes")}
    assert {data["verdicts"][k]["light"] for k in shown} <= stroked
    assert page.evaluate("window.assayGraph.stats.rings") == len(shown)
    assert errors == []


def test_a_click_on_a_claim_lists_its_assertions_that_do_not_hold_each_linked(repo_site: str, repo_graph: dict, browser) -> None:
    page, errors = _page(browser)
    _graph(page, f"{repo_site}/graph.html")
    node = next(r for r in repo_graph["data"]["nodes"] if r[0] == "SOTA-361")
    at = page.evaluate("window.assayGraph.screen('SOTA-361')")
    frame = page.locator("#assay-graph-canvas").bounding_box()
    page.mouse.move(frame["x"] + at["x"], frame["y"] + at["y"])
    page.mouse.click(frame["x"] + at["x"], frame["y"] + at["y"])
    items = page.locator("#assay-graph-panel .assay-gp-open li")
    items.first.wait_for(state="visible")
    verdicts = repo_graph["data"]["verdicts"]
    assert items.all_inner_texts() == [f"{verdicts[v]['name']}{a}" for a, v in node[9]]
    title = page.locator("#assay-graph-panel .assay-gp-open-title").inner_text()
    assert title == f"{len(node[9])} of its assertions do not hold (cpu):"
    first = node[9][0][0]
    items.first.locator("a").click()
    page.wait_for_url(f"**/claims/SOTA-361.html#assertion-{first}")
    assert errors == []


def test_clicking_a_record_opens_its_page(repo_site: str, browser) -> None:
    page, errors = _page(browser)
    _graph(page, f"{repo_site}/graph.html")
    at = page.evaluate("window.assayGraph.screen('LIT-591')")
    frame = page.locator("#assay-graph-canvas").bounding_box()
    page.mouse.move(frame["x"] + at["x"], frame["y"] + at["y"])
    page.mouse.click(frame["x"] + at["x"], frame["y"] + at["y"])
    page.wait_for_url("**/sources/LIT-591.html")
    assert errors == []


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_the_neighbourhood_figure_labels_read_at_4_5_to_1(repo_site: str, browser, dark: bool) -> None:
    page, errors = _page(browser, 1280, dark)
    page.goto(f"{repo_site}/claims/SOTA-364.html")
    pairs = page.evaluate("""() => [...document.querySelectorAll('.assay-hood-node')].map(a =>
        [getComputedStyle(a.querySelector('text')).fill, a.querySelector('rect').getAttribute('fill')])""")
    assert len(pairs) >= 3

    def hexa(css: str) -> str:
        if css.startswith("#"):
            return css
        return "#" + "".join(f"{int(v):02x}" for v in css[css.index("(") + 1 : css.index(")")].split(",")[:3])

    ratios = [contrast(hexa(text), hexa(box)) for text, box in pairs]
    assert min(ratios) >= 4.5, list(zip(pairs, ratios))
    assert errors == []


# Records, for each query the page sends the search worker, the answer to it: the worker answers in the order asked
# (Material's worker/main), so the answer to the last query sent is known, and with it the result to wait for.
ANSWERS = """
window.__answers = {};
const post = Worker.prototype.postMessage;
Worker.prototype.postMessage = function (message, ...rest) {
  if (message && message.type === 2) {  // SearchMessageType.QUERY
    (this.__asked = this.__asked || []).push(message.data);
    if (!this.__heard) {
      this.__heard = true;
      this.addEventListener("message", (e) => {
        if (e.data && e.data.type === 3) {  // SearchMessageType.RESULT
          const items = e.data.data.items || [];
          window.__answers[this.__asked.shift()] = items.length ? items[0][0].location : "";
        }
      });
    }
  }
  return post.call(this, message, ...rest);
};
"""


def _search(browser, base: str, query: str) -> list[str]:
    """The results as a reader sees them once the page shows the answer to the whole query, typed a key at a time:
    the answers to its first letters (``SOTA-36`` ranks SOTA-361 first) may come before it, however slow the machine."""
    page, _ = new_page(browser, script=ANSWERS)
    page.goto(f"{base}/index.html")
    page.locator(".md-search__input").click()
    page.locator(".md-search__input").press_sequentially(query, delay=15)
    page.wait_for_function("q => q in window.__answers", arg=query, timeout=20_000)
    first = page.evaluate("q => window.__answers[q]", query)
    page.wait_for_function(
        """first => { const a = document.querySelector('.md-search-result__item > a');
            return a && new URL(a.href).href === new URL(first, document.baseURI).href; }""",
        arg=first,
        timeout=10_000,
    )
    hrefs = page.eval_on_selector_all(".md-search-result__item > a", "els => els.map(e => e.getAttribute('href'))")
    page.context.close()
    return [h.split("//", 1)[-1].split("/", 1)[-1] for h in hrefs]


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("2002.05709", "sources/LIT-591.html"),  # an arXiv id without its version
        ("2002.05709v3", "sources/LIT-591.html"),
        ("10.1109/CVPR42600.2020.00975", "sources/LIT-590.html"),  # a DOI
        ("SOTA-364", "claims/SOTA-364.html"),  # a claim id
        ("THEORY-085", "claims/THEORY-085.html"),
    ],
)
def test_the_search_finds_identifiers(repo_site: str, browser, query: str, first: str) -> None:
    hits = _search(browser, repo_site, query)
    assert hits and hits[0].split("#")[0] == first, hits[:5]


@pytest.mark.parametrize(("query", "claim"), [("layer norm", None), ("batch norm", "claims/SOTA-364.html")])
def test_a_claim_outranks_a_tag_page_for_its_title_words(repo_site: str, browser, query: str, claim: str | None) -> None:
    hits = _search(browser, repo_site, query)
    tags = [i for i, h in enumerate(hits) if h.startswith("tags/")]
    claims = [i for i, h in enumerate(hits) if h.startswith("claims/")]
    assert claims and not hits[0].startswith("tags/"), hits[:6]
    assert not tags or claims[0] < tags[0], hits[:6]
    if claim:  # the claim whose title has the words in the first three, above the tag page of the same words (which
        # may fall past the first page of results as claims that hold the words too come in)
        assert claim in hits[:3] and (not tags or hits.index(claim) < tags[0]), hits
