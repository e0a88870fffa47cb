"""The graph on a phone and the colours a dark page keeps, in headless Chromium (Debian's, driven by Playwright):
at 390 px every record named on the canvas and, with its title, in the list beside it, the panel of each record
inside the screen, a focus ring on each legend checkbox; the claim page's neighbourhood figure with 11-px text and
lines of 3:1; the graph's "Show all" button, the copy button and the linked check ids of a claim page at 4.5:1 in
the dark scheme. Colours are read from computed styles and made sRGB by the browser itself (a 1-px canvas), so a
``color-mix()`` is measured as it is drawn. Screenshots for a person go to build/screens/graph-390-*.png."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser import CHROMIUM, OBSERVED, new_page
from tests.test_site import REPO

SHOTS = REPO / "build" / "screens"
PHONE = {"width": 390, "height": 844}

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (make browser)")

# The contrast of an element's text (or of ``prop``, a colour property) against what it is drawn on: the nearest
# ancestor's opaque background, the colour and background made sRGB on a canvas, alpha blended as the page does.
CONTRAST = """(el, prop) => {
  const c = document.createElement('canvas').getContext('2d', {willReadFrequently: true});
  const rgba = css => { c.clearRect(0, 0, 1, 1); c.fillStyle = '#000'; c.fillStyle = css; c.fillRect(0, 0, 1, 1);
    const d = c.getImageData(0, 0, 1, 1).data; return [d[0], d[1], d[2], d[3] / 255]; };
  const under = e => { for (e = e.parentElement; e; e = e.parentElement) {
    const b = rgba(getComputedStyle(e).backgroundColor); if (b[3] > 0.99) return b; } return [255, 255, 255, 1]; };
  const bg = (() => { const own = rgba(getComputedStyle(el).backgroundColor); return own[3] > 0.99 ? own : under(el); })();
  const f = rgba(getComputedStyle(el)[prop || 'color']);
  const fg = f.slice(0, 3).map((v, i) => v * f[3] + bg[i] * (1 - f[3]));
  const lum = x => { const l = x.slice(0, 3).map(v => (v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2]; };
  const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
  return (a + 0.05) / (b + 0.05);
}"""


def _phone(browser, dark: bool):
    page, errors = new_page(browser, 390, dark)
    page.set_viewport_size(PHONE)
    return page, errors


def _contrast(page, selector: str, prop: str | None = None) -> list[tuple[str, float]]:
    return [(e.inner_text().strip()[:30], e.evaluate(CONTRAST, prop)) for e in page.locator(selector).all() if e.is_visible()]


def _graph(page, site: Path) -> None:
    page.goto((site / "graph.html").as_uri())
    page.wait_for_function("document.body.dataset.graphReady === '1'", timeout=15_000)
    page.evaluate(OBSERVED)


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_at_390_px_every_record_is_named_on_the_canvas_and_listed_with_its_title(
    repo_site_dir: Path, browser, dark: bool
) -> None:
    page, errors = _phone(browser, dark)
    _graph(page, repo_site_dir)
    nodes = page.evaluate("window.ASSAY_GRAPH.nodes")
    labels = page.evaluate("window.assayGraph.stats.labels")
    assert sorted(b["id"] for b in labels) == sorted(r[0] for r in nodes)  # THEORY-085's id is wider than its column
    for a in labels:  # no two labels drawn over each other
        for b in labels:
            if a is not b:
                apart = (
                    a["x"] + a["w"] <= b["x"]
                    or b["x"] + b["w"] <= a["x"]
                    or a["y"] + a["h"] <= b["y"]
                    or b["y"] + b["h"] <= a["y"]
                )
                assert apart, (a, b)
    items = page.locator("#assay-graph-list > li")
    listed = {li.locator(".assay-gp-id").inner_text(): li.inner_text() for li in items.all()}
    assert set(listed) == {r[0] for r in nodes}
    for rid, title, *_ in nodes:
        assert title in listed[rid], rid
    assert page.locator("#assay-graph-list-count").inner_text() == f"({len(nodes)})"
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"graph-390-{'dark' if dark else 'light'}.png"), full_page=True)
    assert errors == []


@pytest.mark.parametrize("scrolled", [False, True], ids=["on-arrival", "scrolled-to-the-graph"])
def test_at_390_px_each_records_panel_is_inside_the_screen(repo_site_dir: Path, browser, scrolled: bool) -> None:
    page, errors = _phone(browser, False)
    _graph(page, repo_site_dir)
    if scrolled:
        page.locator("#assay-graph").scroll_into_view_if_needed()
    outside = []
    for rid in page.evaluate("window.assayGraph.ids"):
        at = page.evaluate(f"window.assayGraph.screen({rid!r})")
        frame = page.locator("#assay-graph-canvas").bounding_box()
        if not 0 <= frame["y"] + at["y"] <= PHONE["height"]:
            continue  # a record below the screen is not tapped; scrolled to the graph, every record is on screen
        page.evaluate(f"window.assayGraph.show({rid!r})")  # a tap
        box = page.locator("#assay-graph-panel").bounding_box()
        if box["y"] < 0 or box["y"] + box["height"] > PHONE["height"] or box["x"] < 0 or box["x"] + box["width"] > 390:
            outside.append((rid, round(box["y"]), round(box["y"] + box["height"])))
    assert outside == []
    if scrolled:
        assert len(page.evaluate("window.assayGraph.ids")) == page.locator("#assay-graph-list > li").count()
    assert errors == []


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_each_legend_checkbox_shows_a_focus_ring_from_the_keyboard(repo_site_dir: Path, browser, dark: bool) -> None:
    page, errors = _phone(browser, dark)
    _graph(page, repo_site_dir)
    boxes = page.locator("#assay-graph-legend input")
    boxes.first.focus()
    for _ in range(boxes.count()):
        ring = page.evaluate(
            "(() => { const s = getComputedStyle(document.activeElement);"
            " return [s.outlineStyle, parseFloat(s.outlineWidth)]; })()"
        )
        assert ring[0] == "solid" and ring[1] >= 2, ring
        active = page.locator("#assay-graph-legend input:focus")
        assert active.evaluate(CONTRAST, "outlineColor") >= 3
        page.keyboard.press("Tab")
    assert errors == []


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390], ids=["wide", "narrow"])
def test_the_neighbourhood_figure_keeps_11_px_text_and_3_to_1_lines(repo_site_dir: Path, browser, width: int, dark: bool) -> None:
    page, errors = new_page(browser, width, dark)
    page.goto((repo_site_dir / "claims" / "SOTA-364.html").as_uri())
    svg = page.locator(".assay-hood-panel-1 .assay-hood-svg")
    scale = svg.evaluate("s => s.getBoundingClientRect().width / s.viewBox.baseVal.width")
    size = svg.locator("text").first.evaluate("t => parseFloat(getComputedStyle(t).fontSize)")
    assert size * scale >= 11, (size, scale)
    lines = svg.locator(".assay-hood-edges line")
    assert lines.count() >= 1
    ratios = [line.evaluate(CONTRAST, "stroke") for line in lines.all()]
    assert min(ratios) >= 3, ratios
    width_now, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width_now <= inner
    assert errors == []


def test_in_the_dark_scheme_buttons_and_linked_check_ids_keep_4_5_to_1(repo_site_dir: Path, browser) -> None:
    page, errors = new_page(browser, 1280, True)
    _graph(page, repo_site_dir)
    low = [x for x in _contrast(page, "#assay-graph-clear") + _contrast(page, "#assay-graph-list a") if x[1] < 4.5]
    page.goto((repo_site_dir / "code" / "verify" / "test_sota364_mechanics.py.html").as_uri())
    low += [x for x in _contrast(page, "button.assay-copy") if x[1] < 4.5]
    page.goto((repo_site_dir / "claims" / "SOTA-364.html").as_uri())
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    evidence = _contrast(page, ".assay-evidence a code")
    assert len(evidence) >= 10
    low += [x for x in evidence + _contrast(page, ".md-content a code") if x[1] < 4.5]
    assert low == []
    assert errors == []


#: Whether the element ``selector`` has no transition or animation running (its colours are the final ones).
SETTLED = "selector => document.querySelector(selector).getAnimations().length === 0"


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_a_hovered_or_focused_button_keeps_4_5_to_1(repo_site_dir: Path, browser, dark: bool) -> None:
    page, errors = new_page(browser, 1280, dark)
    _graph(page, repo_site_dir)
    page.hover("#assay-graph-clear")
    page.wait_for_function(SETTLED, arg="#assay-graph-clear")  # Material's colour transition
    hovered = _contrast(page, "#assay-graph-clear")
    page.goto((repo_site_dir / "code" / "verify" / "test_sota364_mechanics.py.html").as_uri())
    page.focus("button.assay-copy")
    page.wait_for_function(SETTLED, arg="button.assay-copy")
    focused = _contrast(page, "button.assay-copy")
    assert len(hovered) == len(focused) == 1
    assert [x for x in hovered + focused if x[1] < 4.5] == []
    assert errors == []


#: How many of the canvas's pixels differ from its first one: 0 for a blank canvas, whatever its background.
INKED = """() => {
  const c = document.getElementById('assay-graph-canvas');
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 4; i < d.length; i += 4) if (d[i] !== d[0] || d[i + 1] !== d[1] || d[i + 2] !== d[2]) n++;
  return n;
}"""


def test_the_graph_draws_on_every_reload_and_after_a_resize(repo_site_dir: Path, browser) -> None:
    page, errors = new_page(browser, 1280, False)
    blank = []
    for attempt in range(20):  # a resize observed just after the first drawing used to leave the canvas cleared
        _graph(page, repo_site_dir) if attempt == 0 else page.reload()
        page.wait_for_function("document.body.dataset.graphReady === '1'", timeout=15_000)
        page.evaluate(OBSERVED)  # past the first resize the observer reports
        blank += [attempt] if page.evaluate(INKED) == 0 else []
    for width in (900, 1280):
        page.set_viewport_size({"width": width, "height": 800})
        page.wait_for_function(f"({INKED})() > 0", timeout=5_000)
    assert blank == [] and errors == []
    page.close()
