"""The built fixture site in headless Chromium (Debian's, driven by Playwright; nothing downloaded).

Opens the dashboard, a claim page and the graph over http on 127.0.0.1 and from disk (file://), clicks a
graph node, and fails on any console error. Screenshots (light and dark, wide and narrow) go to build/screenshots/.
"""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path
from typing import Iterator

import pytest

from tests.test_site import REPO, build_site, fresh_copy

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
SHOTS = REPO / "build" / "screenshots"

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (make browser)")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_site(fresh_copy(tmp_path_factory.mktemp("browser_kb")), tmp_path_factory.mktemp("browser"))


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[str]:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


def _page(browser, width: int = 1280, dark: bool = False):
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme="dark" if dark else "light")
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))
    return page, errors


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
    assert page.locator("#assay-graph-results li").first.inner_text().startswith('SOTA-999 <script>')
    assert errors == []


def test_clicking_a_graph_node_opens_its_page(server: str, browser) -> None:
    page, errors = _page(browser)
    page.goto(f"{server}/graph.html#focus=SOTA-364&depth=1")
    page.wait_for_function("document.body.dataset.graphReady === '1'")
    page.locator("#assay-graph").scroll_into_view_if_needed()
    page.wait_for_timeout(500)  # the camera animates to the focused node, in the middle
    x, y = page.evaluate("""() => { const g = window.assayGraph;
        const p = g.renderer.graphToViewport(g.graph.getNodeAttributes('SOTA-364'));
        const r = document.getElementById('assay-graph').getBoundingClientRect();
        return [r.left + p.x, r.top + p.y]; }""")
    page.mouse.move(x, y)
    page.mouse.click(x, y)
    page.wait_for_url("**/claims/SOTA-364.html")
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
