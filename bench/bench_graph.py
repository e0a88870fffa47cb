"""The graph page at scale: knowledge bases of 1,000 and 10,000 claims, drawn in headless Chromium.

For each size: generate a knowledge base with bench_site's generator (sources, claims citing them,
depends_on between claims, a ledger), time the build-time layers and order and the page's data, then open
the graph page in Debian's chromium and time, inside the page:

- ready: from navigation start to the first complete drawing of every record (``assayGraph.readyAt``);
- focus: ``#focus=`` on one record at depth 2 (what a search, a click on "Focus here" or a claim page's
  link does), from the call to the redrawn canvas;
- filter: unticking one claim status in the legend, from the click to the redrawn canvas;
- frame: one redraw of the whole graph, the median of seven (what a pan or a zoom step costs);
- hover: finding the record under the pointer.

The page is the site's own graph.html (built with MkDocs from a small knowledge base: the page's HTML does
not depend on the records, which this script checks) with the large knowledge base's graph-data.js in
place of the small one's, so the 10,000-claim case needs no 10,000-page build. Prints one JSON row per
size and whether the target holds: the graph drawn, and a focus and a filter answered, within 3 s at
10,000 claims.

    python bench/bench_graph.py [--sizes 1000,10000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))  # tests.browser: how the browser is launched, shared with the browser tests

from bench_site import _config, _mkdocs, make_kb  # noqa: E402

from assay.site import explorer  # noqa: E402
from assay.site.graph_layout import ranked  # noqa: E402
from assay.site.views import index  # noqa: E402
from tests.browser import ARGS, CHROMIUM  # noqa: E402

TARGET_S, TARGET_SIZE = 3.0, 10_000

MEASURE = """async (id) => {
  const g = window.assayGraph, out = {ready_ms: g.readyAt, records: g.ids.length, first_frame_ms: g.stats.lastMs};
  const frames = [];
  for (let i = 0; i < 7; i++) {
    await new Promise(r => requestAnimationFrame(r));
    const t0 = performance.now(); g.draw(); frames.push(performance.now() - t0);
  }
  out.frame_ms = frames.sort((a, b) => a - b)[3];  // the median of seven
  let t = performance.now(); g.focus(id); out.focus_ms = performance.now() - t; out.focus_records = g.stats.nodesDrawn;
  g.clear();
  const box = document.getElementById('assay-graph-status-probe') || document.querySelector('[data-status="not-run"]');
  t = performance.now(); box.click(); out.filter_ms = performance.now() - t; out.after_filter = g.stats.nodesDrawn;
  box.click();
  const c = document.getElementById('assay-graph-canvas').getBoundingClientRect();
  const ev = new PointerEvent('pointermove',
    {clientX: c.left + c.width / 2, clientY: c.top + c.height / 2, pointerType: 'mouse', bubbles: true});
  t = performance.now(); document.getElementById('assay-graph-canvas').dispatchEvent(ev); out.hover_ms = performance.now() - t;
  return out;
}"""


def browse(site: Path, focus: str) -> dict:
    from playwright.sync_api import sync_playwright

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"http://127.0.0.1:{httpd.server_address[1]}/graph.html")
            page.wait_for_function("document.body.dataset.graphReady === '1'", timeout=60_000)
            row = page.evaluate(MEASURE, focus)
            browser.close()
            if errors:
                raise RuntimeError(f"the page failed: {errors}")
            return {k: round(v, 1) if isinstance(v, float) else v for k, v in row.items()}
    finally:
        httpd.shutdown()


def small_site(tmp: Path) -> Path:
    """The site of a 20-claim knowledge base, built with MkDocs. Its graph page is the page at any size: the page
    (``explorer.page``) takes nothing from the records, which its data script (``explorer.data_script``) brings."""
    kb = tmp / "small-kb"
    make_kb(kb, 20)
    out = tmp / "small"
    out.mkdir()
    _mkdocs(_config(out, REPO / "site", ["search", "offline", {"assay": {"root": str(kb)}}], None))
    return out / "site"


def bench(n: int, site: Path, tmp: Path) -> dict:
    kb = tmp / f"kb-{n}"
    make_kb(kb, n)
    t0 = time.perf_counter()
    ix = index(kb)
    indexed = time.perf_counter() - t0
    t0 = time.perf_counter()
    lay = ranked(ix.graph)
    laid = time.perf_counter() - t0
    t0 = time.perf_counter()
    script = explorer.data_script(ix)
    data_s = time.perf_counter() - t0
    target = tmp / f"site-{n}"
    shutil.copytree(site, target)
    (target / "graph-data.js").write_text(script, encoding="utf-8")
    row = {
        "claims": n,
        "records": ix.graph.number_of_nodes(),
        "edges": ix.graph.number_of_edges(),
        "layers": 1 + max(layer for layer, _ in lay.values()),
        "index_s": round(indexed, 2),
        "layout_s": round(laid, 2),
        "data_s": round(data_s, 2),
        "data_kb": round(len(script.encode()) / 1024),
    }
    row.update(browse(target, "SOTA-1000"))
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--keep", type=Path, help="work in DIR and keep it")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or Path(scratch)
        tmp.mkdir(parents=True, exist_ok=True)
        site = small_site(tmp)
        rows = []
        for n in (int(s) for s in args.sizes.split(",")):
            rows.append(bench(n, site, tmp))
            print(json.dumps(rows[-1]), flush=True)
    print(
        f"{'claims':>7} {'records':>8} {'edges':>6} {'layout s':>9} {'ready ms':>9} {'focus ms':>9} "
        f"{'filter ms':>10} {'frame ms':>9} {'hover ms':>9}"
    )
    for r in rows:
        print(
            f"{r['claims']:>7} {r['records']:>8} {r['edges']:>6} {r['layout_s']:>9} {r['ready_ms']:>9} {r['focus_ms']:>9} "
            f"{r['filter_ms']:>10} {r['frame_ms']:>9} {r['hover_ms']:>9}"
        )
    at = [r for r in rows if r["claims"] == TARGET_SIZE]
    if not at:
        print(f"target (interactive within {TARGET_S:g} s at {TARGET_SIZE:,} claims): not measured in this run")
    else:
        worst = max(at[0]["ready_ms"], at[0]["focus_ms"], at[0]["filter_ms"]) / 1000
        verdict = "holds" if worst <= TARGET_S else "does not hold"
        print(
            f"target (drawn, focused and filtered within {TARGET_S:g} s at {TARGET_SIZE:,} claims): {verdict} "
            f"(slowest {worst:.2f} s)"
        )


if __name__ == "__main__":
    main()
