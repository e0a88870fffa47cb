"""The first screen of a claim page in headless Chromium: the number that decided a row, with its seeds and when its
threshold was fixed, and the claim's one verdict name (issue 43)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser import CHROMIUM, new_page

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (make browser)")

#: The text of the first row's deciding number, if its top is on the first screen (900 px at 1280).
FIRST = """() => {
  const m = document.querySelector('.assay-assertion .assay-deciding');
  const r = m.getBoundingClientRect();
  return r.top < window.innerHeight ? m.innerText.replace(/\\s+/g, ' ') : null;
}"""


def _first(site: Path, browser, claim: str, width: int = 1280) -> tuple[str | None, list[str]]:
    page, errors = new_page(browser, width)
    page.goto((site / "claims" / f"{claim}.html").as_uri())
    return page.evaluate(FIRST), errors


def test_sota_368s_first_row_shows_the_failing_margin_gain_with_each_seed_and_its_registration(
    repo_site_dir: Path, browser
) -> None:
    text, errors = _first(repo_site_dir, browser, "SOTA-368")
    assert text is not None, "the deciding number is below the first screen"
    assert text.startswith("lin_mining_gain_margin -0.007817 fraction expected > 0 fails 3 seeds: ")
    assert text.endswith("moved-after-result")
    assert errors == []


def test_sota_362s_first_row_shows_its_deciding_number_with_seeds_and_registration_beside_the_papers(
    repo_site_dir: Path, browser
) -> None:
    page, errors = new_page(browser, 1280)
    page.goto((repo_site_dir / "claims" / "SOTA-362.html").as_uri())
    text = page.evaluate(FIRST)
    assert text is not None, "the deciding number is below the first screen"
    assert "fails 3 seeds: " in text and text.endswith("moved-after-result")
    pair = page.locator(".assay-assertion .assay-pair").first
    assert pair.bounding_box()["y"] < 900
    assert pair.inner_text().split(" ")[0] in ("same-quantity", "direction-only", "different-quantity")
    assert errors == []


@pytest.mark.parametrize("claim", ["SOTA-362", "SOTA-364", "SOTA-368"])
def test_the_page_says_each_verdict_by_its_one_name(repo_site_dir: Path, browser, claim: str) -> None:
    page, errors = new_page(browser, 1280)
    page.goto((repo_site_dir / "claims" / f"{claim}.html").as_uri())
    text = page.locator("article").inner_text()
    for other in ("Does not hold", "Undecided", "Holds in part", "Holds in direction only"):
        assert other not in text, other
    headings = page.evaluate("Array.from(document.querySelectorAll('.assay-group')).map(h => h.firstChild.textContent.trim())")
    from assay import vocabulary

    assert headings and set(headings) <= set(vocabulary.ASSERTION)
    assert errors == []


def test_at_390_px_the_rows_with_their_numbers_never_scroll_sideways(repo_site_dir: Path, browser) -> None:
    page, errors = new_page(browser, 390)
    for claim in ("SOTA-362", "SOTA-364", "SOTA-368"):
        page.goto((repo_site_dir / "claims" / f"{claim}.html").as_uri())
        page.evaluate("document.querySelectorAll('details.assay-assertion').forEach(d => d.open = true)")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), claim
    assert errors == []
