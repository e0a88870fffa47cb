"""What the browser tests share: Debian's chromium driven by Playwright (nothing downloaded), a quiet local
server for a built site, and a page that records every console error, page error and dialog."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def serve(site: Path) -> Iterator[str]:
    """Serve ``site`` on 127.0.0.1 (a free port) while the generator is open; yields its base URL."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def launch() -> Iterator[object]:
    """A headless chromium for the time the generator is open."""
    from playwright import sync_api

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield browser
        browser.close()


def new_page(browser, width: int = 1280, dark: bool = False, script: str | None = None):
    """A page ``width`` px wide in the light or dark scheme (``script`` runs before any of the page's), and the
    list its console errors, page errors and dialogs are written to."""
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme="dark" if dark else "light")
    page = context.new_page()
    if script:
        page.add_init_script(script)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))
    return page, errors
