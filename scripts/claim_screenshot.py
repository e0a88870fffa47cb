"""The README's screenshot: the top of a claim page of the built site at 1280 px, as a PNG of few colours.

    .venv/bin/mkdocs build --strict && .venv/bin/python scripts/claim_screenshot.py [--claim SOTA-364]

Debian's chromium drives it through Playwright (`make browser` installs chromium); it writes docs/claim-page.png.
"""

from __future__ import annotations

import argparse
import io
from pathlib import Path

from PIL import Image
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claim", default="SOTA-364")
    parser.add_argument("--site", type=Path, default=ROOT / "build" / "site", help="the built site")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "claim-page.png")
    args = parser.parse_args()
    page_file = (args.site / "claims" / f"{args.claim}.html").resolve()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 1150}, color_scheme="light")
        page.goto(page_file.as_uri())
        page.wait_for_load_state("networkidle")
        shot = page.screenshot()
        browser.close()
    # 96 colours without dithering: a page of text and flat colours keeps its look at a third of the bytes
    image = Image.open(io.BytesIO(shot)).convert("RGB").quantize(colors=96, dither=Image.Dither.NONE)
    out = args.out.resolve()
    image.save(out, optimize=True)
    shown = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out  # any --out, inside the repository or not
    print(f"{shown}: {out.stat().st_size // 1024} KiB")


if __name__ == "__main__":
    main()
