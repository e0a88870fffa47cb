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


#: Resolves once the canvas's size has been observed (a ResizeObserver reports every element it is given once laid
#: out, in the same step as the page's own observer of it, which draws again) and two frames have been drawn since.
OBSERVED = """() => new Promise((done) => {
  const ro = new ResizeObserver(() => { ro.disconnect(); requestAnimationFrame(() => requestAnimationFrame(done)); });
  ro.observe(document.getElementById('assay-graph-canvas'));
})"""


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


class _Gzip(_Quiet):
    """Sends a file gzipped where the browser accepts it, and the site's 404.html for a path that is not there, as a
    host of static sites does; counts the bytes each path took on the wire (``sent``: path -> bytes of body)."""

    sent: dict[str, int]

    def send_head(self):  # noqa: ANN201 - http.server's own signature
        import gzip
        import io

        path, status = Path(self.translate_path(self.path)), 200
        if path.is_dir() and (path / "index.html").is_file():
            path = path / "index.html"
        if not path.exists() and (Path(self.directory) / "404.html").is_file():  # as a host of static sites does
            path, status = Path(self.directory) / "404.html", 404
        if "gzip" not in self.headers.get("Accept-Encoding", "") or not path.is_file():
            return super().send_head()
        body = gzip.compress(path.read_bytes(), compresslevel=6)
        self.send_response(status)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.sent[self.path.split("?")[0]] = len(body)
        return io.BytesIO(body)


def serve_gzip(site: Path) -> Iterator[tuple[str, dict[str, int]]]:
    """Serve ``site`` gzipped, as a web server would; yields its base URL and the bytes sent per path so far."""
    sent: dict[str, int] = {}
    handler = type("Gzip", (_Gzip,), {"sent": sent})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", sent
    httpd.shutdown()
