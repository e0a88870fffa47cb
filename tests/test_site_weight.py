"""What a reader's browser fetches: a claim page at most 400 KB in all, gzipped as a server sends it, with the search
index fetched only once the search box is used; and the 404 page, styled at any depth, served or from disk."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser import new_page, serve_gzip

#: The most a claim page may fetch, all requests together, in bytes as sent gzipped.
CLAIM_PAGE_MOST = 400_000


@pytest.fixture(scope="module")
def served(repo_site_dir: Path) -> Iterator[tuple[str, dict[str, int]]]:
    yield from serve_gzip(repo_site_dir)


def _opened(browser, url: str):
    """The page at ``url`` once loaded and its network quiet, with the paths it requested and those that failed."""
    page, errors = new_page(browser)
    asked: list[str] = []
    failed: list[str] = []
    page.on("request", lambda r: asked.append(r.url))
    page.on("requestfailed", lambda r: failed.append(r.url))
    page.goto(url)
    page.wait_for_load_state("networkidle")
    return page, errors, asked, failed


def test_the_largest_claim_page_fetches_at_most_400_kb_gzipped_and_not_the_search_index(served, browser) -> None:
    base, sent = served
    sent.clear()
    page, errors, asked, failed = _opened(browser, f"{base}/claims/SOTA-364.html")
    paths = [u.removeprefix(base) for u in asked if u.startswith(base)]
    total = sum(sent.get(p.split("#")[0].split("?")[0], 0) for p in set(paths))
    print(f"claims/SOTA-364.html: {total / 1000:.1f} KB gzipped over {len(set(paths))} requests")
    assert not [p for p in paths if "search_index" in p], paths
    assert total <= CLAIM_PAGE_MOST, sorted(((sent.get(p, 0), p) for p in set(paths)), reverse=True)[:8]
    assert all(p.split("?")[0] in sent for p in paths), [p for p in paths if p.split("?")[0] not in sent]
    assert failed == [] and errors == []
    page.context.close()


def test_the_search_index_is_fetched_once_the_search_box_is_used(served, browser) -> None:
    base, _ = served
    page, errors, asked, _ = _opened(browser, f"{base}/sources/LIT-591.html")
    assert not [u for u in asked if "search_index" in u]
    with page.expect_response(lambda r: r.url.endswith("/search/search_index.json") and r.ok):
        page.locator(".md-search__input").focus()
    page.locator(".md-search__input").press_sequentially("SimCLR")
    page.wait_for_function("document.querySelectorAll('.md-search-result__item > a').length > 0")
    assert errors == []
    page.context.close()


@pytest.mark.parametrize("path", ["claims/SOTA-999.html", "a/b/c.html"])
def test_the_404_page_is_styled_at_any_depth_when_served(served, browser, path: str) -> None:
    base, _ = served
    page, errors = new_page(browser)
    missing: list[str] = []
    failed: list[str] = []
    page.on("response", lambda r: missing.append(r.url) if r.status >= 400 else None)
    page.on("requestfailed", lambda r: failed.append(r.url))
    page.goto(f"{base}/{path}")
    page.wait_for_load_state("networkidle")
    assert page.locator("h1").first.inner_text() == "404 - Not found"
    assert page.evaluate("getComputedStyle(document.querySelector('.md-header')).position") == "sticky"  # Material's CSS
    assert page.evaluate("document.styleSheets.length") >= 3
    logo = page.locator(".md-header__button.md-logo").bounding_box()
    assert logo["height"] <= 48 and logo["width"] <= 48, logo  # a logo of the header's size, not the page's width
    assert missing == [f"{base}/{path}"] and failed == [], (missing, failed)  # only the page itself is not there
    assert errors == ["Failed to load resource: the server responded with a status of 404 (Not Found)"]  # the page's own
    page.locator(".md-header__button.md-logo").click()
    assert page.url == f"{base}/index.html"
    page.context.close()
