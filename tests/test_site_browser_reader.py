"""A claim page's assertions in headless Chromium, opened from disk: ordered and filtered by verdict, device and
tier with the choice kept in the page's query, the same page read without JavaScript, and the key of its chips
standing above the table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser import CHROMIUM, new_page

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (make browser)")

SHOWN = "Array.from(document.querySelectorAll('.assay-assertion')).filter(r => !r.hidden).map(r => r.id.slice(10))"
HEADINGS = "Array.from(document.querySelectorAll('.assay-group')).filter(h => !h.hidden).map(h => h.textContent.trim())"


def _claim(site: Path, query: str = "") -> str:
    return (site / "claims" / "SOTA-364.html").as_uri() + query


def _grouped(page) -> list[str]:
    """The rows in the order the generator grouped them (by their ``data-verdict``, in ``GROUPS`` order, each group in
    the record's order): what the page must show with no choice made, and without JavaScript."""
    from assay.site.claim_page import GROUPS

    order = [g for g, _ in GROUPS]
    rows = [
        (r.get_attribute("id")[10:], r.get_attribute("data-verdict"), int(r.get_attribute("data-order")))
        for r in page.locator(".assay-assertion").all()
    ]
    return [rid for rid, _, _ in sorted(rows, key=lambda r: (order.index(r[1]), r[2]))]


def test_a_query_filters_the_assertions_by_verdict(fixture_site_dir: Path, browser) -> None:
    page, errors = new_page(browser)
    page.goto(_claim(fixture_site_dir, "?verdict=untested"))
    assert page.evaluate(SHOWN) == ["bn-only", "same-batch"]
    assert page.locator("#assay-rows-shown").inner_text() == "2 of 4 assertions shown"
    assert page.evaluate(HEADINGS) == ["untested (2)"]
    assert page.locator(".assay-groups").inner_text() == "untested (2)"
    assert errors == []


def test_choosing_a_filter_and_an_order_writes_them_into_the_query(fixture_site_dir: Path, browser) -> None:
    page, errors = new_page(browser)
    page.goto(_claim(fixture_site_dir))
    assert page.locator("#assay-rows-shown").inner_text() == "4 of 4 assertions shown"
    assert page.evaluate(SHOWN) == _grouped(page)
    page.select_option('#assay-row-filters select[name="sort"]', "filed")
    assert page.evaluate(SHOWN) == ["identifies-positive", "bad-representation", "bn-only", "same-batch"]
    assert page.evaluate(HEADINGS) == []  # as filed: no verdict groups
    page.select_option('#assay-row-filters select[name="tier"]', "toy")
    assert page.evaluate("location.search") == "?tier=toy&sort=filed"
    assert page.evaluate(SHOWN) == ["identifies-positive", "bad-representation"]
    page.reload()
    assert page.evaluate(SHOWN) == ["identifies-positive", "bad-representation"]
    assert page.locator('#assay-row-filters select[name="tier"]').input_value() == "toy"
    assert errors == []


def test_a_device_regroups_the_rows_by_their_verdict_on_it(fixture_site_dir: Path, browser) -> None:
    page, errors = new_page(browser)
    page.goto(_claim(fixture_site_dir, "?device=cuda"))
    assert page.evaluate(SHOWN) == ["identifies-positive"]  # the only row whose checks run on a GPU
    assert page.evaluate(HEADINGS) == ["not-run (1)"]
    page.goto(_claim(fixture_site_dir, "?device=cpu&verdict=untested"))
    assert page.evaluate(SHOWN) == []  # cited only: no check, so on no device
    assert page.locator("#assay-rows-shown").inner_text() == "0 of 4 assertions shown"
    assert errors == []


def test_without_javascript_every_row_reads_grouped_and_no_control_shows(fixture_site_dir: Path, browser) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, java_script_enabled=False)
    page = context.new_page()
    page.goto(_claim(fixture_site_dir, "?verdict=untested"))
    assert not page.locator("#assay-row-filters").is_visible()
    assert [r.get_attribute("id")[10:] for r in page.locator(".assay-assertion").all()] == _grouped(page)
    assert page.locator(".assay-group").count() == len(
        {r.get_attribute("data-verdict") for r in page.locator(".assay-assertion").all()}
    )
    assert all(r.is_visible() for r in page.locator(".assay-assertion").all())
    context.close()


@pytest.mark.parametrize("width", [1280, 390], ids=["wide", "narrow"])
def test_the_key_of_the_chips_is_on_screen_above_the_table(fixture_site_dir: Path, browser, width: int) -> None:
    page, errors = new_page(browser, width)
    page.goto(_claim(fixture_site_dir))
    key, rows = page.locator(".assay-key"), page.locator(".assay-rows")
    if width < 600:  # folded on a narrow screen, so that the rows start on the first screen; one tap opens it
        assert not key.is_visible()
        page.locator(".assay-key-fold > summary").click()
    assert key.is_visible()
    assert key.bounding_box()["y"] + key.bounding_box()["height"] <= rows.bounding_box()["y"]
    assert [t.inner_text() for t in key.locator("dt").all()] == [
        "The claim",
        "Our verdict",
        "Why",
        "When it was fixed",
        "Beside the paper's",
        "The source",
        "Evidence tier",
        "Closure",
    ]
    width_now, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width_now <= inner
    assert errors == []


def test_at_390_px_the_first_assertion_starts_on_the_first_screen(repo_site_dir: Path, browser) -> None:
    page, errors = new_page(browser, 390)
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto((repo_site_dir / "claims" / "SOTA-364.html").as_uri())
    first = page.locator(".assay-assertion").first.bounding_box()
    assert first["y"] + 40 <= 844, first  # its sentence begins above the fold
    assert errors == []


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390], ids=["wide", "narrow"])
def test_a_checks_strip_names_each_commit_on_hover_and_on_focus(repo_site_dir: Path, browser, width: int, dark: bool) -> None:
    page, errors = new_page(browser, width, dark)
    page.goto((repo_site_dir / "claims" / "SOTA-364.html").as_uri())
    page.evaluate("document.querySelectorAll('.assay-check').forEach(d => d.open = true)")
    cells = page.locator(".assay-strip > li")
    assert cells.count() >= page.locator(".assay-check").count()  # every check of it has a committed result
    for cell in (cells.first, cells.last):
        tip = cell.locator("span")
        assert not tip.is_visible() or tip.bounding_box()["width"] <= 1
        cell.focus()  # a keyboard reaches each cell; its text shows, inside the screen
        box = tip.bounding_box()
        assert box["width"] > 40 and 0 <= box["x"] and box["x"] + box["width"] <= width
        assert re.fullmatch(
            r"[0-9a-f]{8} \d{4}-\d\d-\d\d( to [0-9a-f]{8} \d{4}-\d\d-\d\d, \d+ commits)?: [a-z-]+", tip.inner_text()
        )
    cells.nth(1).hover()
    assert cells.nth(1).locator("span").bounding_box()["width"] > 40
    assert errors == []


def test_the_404_page_opened_from_disk_is_styled_and_its_links_lead_into_the_site(fixture_site_dir: Path, browser) -> None:
    page, errors = new_page(browser)
    failed: list[str] = []
    page.on("requestfailed", lambda r: failed.append(r.url))
    page.goto((fixture_site_dir / "404.html").as_uri())
    assert page.evaluate("getComputedStyle(document.querySelector('.md-header')).position") == "sticky"  # Material's CSS
    assert page.evaluate('Array.from(document.querySelectorAll(\'[href^="/"]:not([href^="//"]), [src^="/"]\')).length') == 0
    page.locator(".md-header__button.md-logo").click()
    assert page.url == (fixture_site_dir / "index.html").as_uri()
    assert failed == [] and errors == []


def test_a_code_page_copies_its_listing_from_a_keyboard(fixture_site_dir: Path, browser) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.goto((fixture_site_dir / "code" / "verify" / "checks_bn.py.html").as_uri())
    button = page.locator("button.assay-copy")
    assert button.is_visible() and button.inner_text() == "Copy the code"
    assert page.locator(".md-code__button").count() == 0  # the theme's faint icon is not drawn beside ours
    button.focus()
    assert page.evaluate("document.activeElement.classList.contains('assay-copy')")
    page.keyboard.press("Enter")
    page.wait_for_function("document.querySelector('.assay-copy-bar .assay-note').textContent === 'Copied.'")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == page.evaluate("document.getElementById('assay-code').textContent")
    assert not copied.lstrip().startswith("1")  # the line numbers are drawn by CSS, not copied
    context.close()
