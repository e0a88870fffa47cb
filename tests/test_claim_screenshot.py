"""scripts/claim_screenshot.py: the README's screenshot, written wherever --out says (the browser stood in for)."""

from __future__ import annotations

import importlib.util
import io
import sys
from pathlib import Path
from types import SimpleNamespace

from PIL import Image

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "claim_screenshot.py"


class _Browser:
    """What the script asks of Playwright's chromium: a page whose screenshot is a small white PNG."""

    chromium = property(lambda self: self)

    def launch(self, **_: object) -> _Browser:
        return self

    def new_page(self, **_: object) -> SimpleNamespace:
        png = io.BytesIO()
        Image.new("RGB", (8, 8), "white").save(png, format="PNG")
        return SimpleNamespace(goto=lambda _: None, wait_for_load_state=lambda _: None, screenshot=lambda: png.getvalue())

    def close(self) -> None:
        pass

    def __enter__(self) -> _Browser:
        return self

    def __exit__(self, *_: object) -> None:
        pass


def test_the_screenshot_is_written_to_an_out_outside_the_repository(tmp_path, monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("claim_screenshot", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    monkeypatch.setattr(script, "sync_playwright", _Browser)
    out = tmp_path / "shot.png"
    monkeypatch.setattr(sys, "argv", ["claim_screenshot.py", "--site", str(tmp_path), "--out", str(out)])
    script.main()
    assert capsys.readouterr().out == f"{out}: {out.stat().st_size // 1024} KiB\n"
    assert Image.open(out).size == (8, 8)
