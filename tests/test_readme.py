"""The README a newcomer reads: short, and every relative link in it (and in the reference it points to) resolves
to a file of the repository, with the heading it names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["README.md", "docs/reference.md"]  # read in the repository; the site's pages are checked by mkdocs --strict

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")  # [text](target) and ![alt](target); the text may break lines
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)


def links(text: str) -> list[str]:
    """The targets of the Markdown links of ``text``, outside fenced code blocks."""
    return LINK.findall(FENCE.sub("", text))


def anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives the headings of ``markdown``: lower case, punctuation dropped, spaces to hyphens."""
    headings = re.findall(r"^#{1,6} (.+?)\s*$", FENCE.sub("", markdown), re.M)
    return {re.sub(r"[^\w\- ]", "", h.replace("`", "")).strip().lower().replace(" ", "-") for h in headings}


def test_the_readme_is_at_most_200_lines() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 200


@pytest.mark.parametrize("page", PAGES)
def test_every_relative_link_resolves_to_a_file_of_the_repository(page: str) -> None:
    here = (ROOT / page).parent
    broken = []
    for target in links((ROOT / page).read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (here / path).resolve() if path else ROOT / page
        if not file.is_relative_to(ROOT) or not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text(encoding="utf-8")):
            broken.append(f"{target}: no heading #{anchor} in {file.relative_to(ROOT)}")
    assert not broken, f"{page}: " + "; ".join(broken)


def test_the_readmes_images_are_small_pngs_with_a_description() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    images = re.findall(r"!\[([^\]]+)\]\(([^)\s]+)\)", text)
    assert images, "the README shows a claim page"
    for alt, target in images:
        assert target.endswith(".png") and len(alt.split()) >= 5
        assert (ROOT / target).stat().st_size < 200 * 1024


def test_links_are_read_outside_fenced_blocks_and_headings_give_githubs_anchors() -> None:
    text = "See [the guide](site/nope.md), [fields](docs/reference.md#records)\nand `[code](x.md)` in\n```\n[no](y.md)\n```\n"
    assert links(text) == ["site/nope.md", "docs/reference.md#records", "x.md"]
    assert anchors("# Reference\n\n## The ledger\n\n### `Result` fields\n") == {"reference", "the-ledger", "result-fields"}
