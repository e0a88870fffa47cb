"""The built fixture site in headless Chromium (Debian's, driven by Playwright; nothing downloaded).

Opens the dashboard, a claim page and the graph over http on 127.0.0.1 and from disk (file://), clicks a
graph node, and fails on any console error. Measures what a reader meets, on the fixture site and on the
repository's own: SOTA-364's height at 1280 px, sideways scrolling at 390 px, tracebacks and machine paths,
the papers' numbers on their claim's page, rendered math, and the contrast of every status colour in both
schemes. Screenshots (light and dark, wide and narrow) go to build/screenshots/ and build/screens/.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

import pytest

from tests.browser import CHROMIUM, new_page, serve
from tests.test_site import REPO

SHOTS = REPO / "build" / "screenshots"

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (make browser)")


@pytest.fixture(scope="module")
def site(fixture_site_dir: Path) -> Path:
    return fixture_site_dir


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[str]:
    yield from serve(site)


_page = new_page


def _shoot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=False)


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390], ids=["wide", "narrow"])
def test_dashboard_claim_and_graph_pages_render_without_console_errors(server: str, browser, width: int, dark: bool) -> None:
    tag = f"{'dark' if dark else 'light'}-{'wide' if width > 600 else 'narrow'}"
    page, errors = _page(browser, width, dark)
    page.goto(f"{server}/index.html")
    assert page.locator("#assay-shown").inner_text() == "4 of 4 shown"
    _shoot(page, f"dashboard-{tag}")
    page.goto(f"{server}/claims/SOTA-364.html")
    assert "Batch norm leaks" in page.locator("h1").first.inner_text()
    _shoot(page, f"claim-{tag}")
    page.locator("#checks").scroll_into_view_if_needed()
    _shoot(page, f"claim-checks-{tag}")
    page.goto(f"{server}/graph.html")
    page.wait_for_function("document.body.dataset.graphReady === '1'", timeout=10_000)
    _shoot(page, f"graph-{tag}")
    assert errors == []


def test_dashboard_filters_rows_by_status(server: str, browser) -> None:
    page, errors = _page(browser)
    page.goto(f"{server}/index.html")
    page.select_option('select[data-filter="status"]', "verified")
    assert page.locator("#assay-shown").inner_text() == "1 of 4 shown"
    assert page.locator("#assay-claims tbody tr:not([hidden]) td").first.inner_text() == "THEORY-085"
    assert errors == []


def test_payload_claim_runs_no_script(server: str, browser) -> None:
    page, errors = _page(browser)
    page.goto(f"{server}/claims/SOTA-999.html")
    assert '<script>alert("title")</script>' in page.locator("h1").first.inner_text()
    page.goto(f"{server}/graph.html")
    page.wait_for_function("document.body.dataset.graphReady === '1'")
    page.fill("#assay-graph-search", "script")
    assert page.locator("#assay-graph-results li").first.inner_text().startswith("SOTA-999 <script>")
    assert errors == []


def test_the_site_works_opened_from_disk_without_a_server(site: Path, browser) -> None:
    page, errors = _page(browser)
    page.goto((site / "index.html").as_uri())
    assert page.locator("#assay-shown").inner_text() == "4 of 4 shown"
    page.goto((site / "claims" / "SOTA-364.html").as_uri())
    assert "Batch norm leaks" in page.locator("h1").first.inner_text()
    page.goto((site / "graph.html").as_uri())
    page.wait_for_function("document.body.dataset.graphReady === '1'", timeout=10_000)
    assert errors == []


# --- what a reader of 30 seconds needs, measured -----------------------------------------------------

SCREENS = REPO / "build" / "screens"
SCREEN = 900  # px: one screen at 1280 x 900
ABSOLUTE = re.compile(r"(?<![\w.:/<])/(home|usr|tmp|root|Users|opt|var|work|mnt|srv)/")


@pytest.fixture(scope="module")
def repo_site(repo_site_dir: Path) -> Path:
    """The repository's own knowledge base, built as the site a reader meets."""
    return repo_site_dir


def _contrast(rgb_a: list[float], rgb_b: list[float]) -> float:
    def lum(rgb: list[float]) -> float:
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (x / 255 for x in rgb[:3])]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    a, b = sorted((lum(rgb_a), lum(rgb_b)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def _rgb(css: str) -> list[float]:
    return [float(x) for x in re.findall(r"[\d.]+", css)[:3]]


def test_sota_364_fits_in_eight_screens_at_1280_and_opens_with_its_verdict(repo_site: Path, browser) -> None:
    page, errors = _page(browser, 1280)
    page.goto((repo_site / "claims" / "SOTA-364.html").as_uri())
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height <= 8 * SCREEN, f"SOTA-364 is {height} px tall at 1280 px ({height / SCREEN:.1f} screens)"
    verdict = page.locator(".assay-verdict-text")
    assert verdict.bounding_box()["y"] < SCREEN and re.search(r"\d+ of \d+ assertions supported", verdict.inner_text())
    assert page.locator("#assertions").bounding_box()["y"] < SCREEN  # the assertions table starts on the first screen
    assert errors == []


def test_every_reported_number_appears_on_its_claims_page(repo_site: Path, browser) -> None:
    from assay.records.knowledge_base import load
    from assay.site.markup import quantity

    page, errors = _page(browser, 1280)
    missing = []
    for cid, claim in sorted(load(REPO).claims.items()):
        if not claim.reported:
            continue
        page.goto((repo_site / "claims" / f"{cid}.html").as_uri())
        text = page.locator("#reported + details .assay-table-wrap").text_content()  # in the fold: on the page
        missing += [
            f"{cid}: {r.id}"
            for r in claim.reported
            if _shown(quantity(r.value, r.unit, getattr(r, "bound", None))) not in text or r.locator not in text
        ]
    assert missing == []
    assert errors == []


def _shown(text: str) -> str:
    """Record text as a reader reads it on the page: its sub- and superscripts marked up (``R^2`` reads ``R2``)."""
    from html import unescape

    from assay.site.markup import rich

    return unescape(re.sub(r"<[^>]+>", "", str(rich(text))))


@pytest.mark.parametrize("which", ["fixture", "repository"])
def test_no_built_page_shows_a_traceback_or_an_absolute_path(site: Path, repo_site: Path, which: str) -> None:
    root = site if which == "fixture" else repo_site
    found = []
    for html in sorted(root.rglob("*.html")):
        text = html.read_text(encoding="utf-8")
        if "Traceback" in text or ABSOLUTE.search(text):
            found.append(html.relative_to(root).as_posix())
    assert found == []


NARROW_PAGES = [
    "index.html",
    "graph.html",
    "claims/SOTA-364.html",
    "claims/SOTA-999.html",
    "claims/THEORY-085.html",
    "sources/LIT-590.html",
    "sources/index.html",
    "decisions/ADR-011.html",
    "decisions/index.html",
    "anthologies/304.html",
    "anthologies/index.html",
    "tags/contrastive.html",
    "tags/index.html",
    "code/verify/checks_bn.py.html",
    "reference/records.html",
    "reference/diagnostics.html",
]


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_no_page_scrolls_sideways_at_390_px(site: Path, repo_site: Path, browser, dark: bool) -> None:
    page, errors = _page(browser, 390, dark)
    wide = []
    pages = [(site, p) for p in NARROW_PAGES] + [(repo_site, f"claims/{c}.html") for c in ("SOTA-364", "SOTA-370", "SOTA-371")]
    pages += [(repo_site, "sources/LIT-590.html"), (repo_site, "code/verify/test_sota364_mechanics.py.html")]
    for root, rel in pages:
        if not (root / rel).is_file():
            continue
        page.goto((root / rel).as_uri())
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")  # expanded too
        width, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        if width > inner:
            wide.append(f"{rel}: {width} > {inner}")
    assert wide == []
    assert errors == []


def test_formulas_in_record_text_are_rendered_by_katex(site: Path, repo_site: Path, browser) -> None:
    page, errors = _page(browser, 1280)
    for root, rel in ((site, "claims/THEORY-085.html"), (repo_site, "claims/SOTA-371.html")):
        page.goto((root / rel).as_uri())
        page.wait_for_function("document.body.dataset.mathReady === '1'", timeout=10_000)
        assert page.locator(".md-content .katex").count() >= 1, rel
        assert page.locator(".md-content .katex-error").count() == 0, rel
    page.goto((site / "claims" / "SOTA-364.html").as_uri())  # no formula: KaTeX is not even loaded
    assert page.evaluate("typeof window.katex") == "undefined"
    assert errors == []


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_every_status_colour_keeps_4_5_to_1_against_the_page(site: Path, browser, dark: bool) -> None:
    page, errors = _page(browser, 1280, dark)
    page.goto((site / "reference" / "records.html").as_uri())  # every status of every vocabulary, as a chip
    background = _rgb(page.evaluate("getComputedStyle(document.body).backgroundColor"))
    chips = page.evaluate("""() => Array.from(document.querySelectorAll('.md-content .assay-chip[class*="assay-c-"]'))
        .map(c => [c.textContent.trim(), getComputedStyle(c).color])""")
    from assay import vocabulary

    assert len({name for name, _ in chips}) >= len({s.name for t in vocabulary.VOCABULARIES.values() for s in t.values()})
    low = [
        (name, colour, round(_contrast(_rgb(colour), background), 2))
        for name, colour in chips
        if _contrast(_rgb(colour), background) < 4.5
    ]
    assert low == []
    assert errors == []


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390], ids=["wide", "narrow"])
def test_screenshots_of_sota_364_and_the_dashboard_for_a_person(repo_site: Path, browser, width: int, dark: bool) -> None:
    SCREENS.mkdir(parents=True, exist_ok=True)
    page, errors = _page(browser, width, dark)
    tag = f"{width}-{'dark' if dark else 'light'}"
    for rel, name in (("claims/SOTA-364.html", "SOTA-364"), ("index.html", "dashboard")):
        page.goto((repo_site / rel).as_uri())
        page.screenshot(path=str(SCREENS / f"{name}-{tag}.png"))
        page.screenshot(path=str(SCREENS / f"{name}-{tag}-full.png"), full_page=True)
    assert errors == []
