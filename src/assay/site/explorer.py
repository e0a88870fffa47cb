"""The graph page: every record at a position computed at build time, drawn by sigma.js (WebGL).

The data travels as a script (``graph-data.js``) rather than fetched JSON so the page works when
opened from disk; ``graph.json`` beside it is the same graph for download. Record text reaches the
page only as JSON data with ``<``, ``>`` and ``&`` escaped, and the page script shows it as text.
"""

from __future__ import annotations

from assay import status as vocab
from assay.graph import to_json
from assay.model import BY_KIND
from assay.site.graph_layout import layout
from assay.site.markup import chip, esc, legend, script_json
from assay.site.neighbourhood import KIND_FILL
from assay.site.pages import Page
from assay.site.views import SiteIndex

SHAPES = {"claim": "circle", "theory": "border", "source": "square", "decision": "square"}  # in legend order
KINDS = {  # kind -> (shape, what it is)
    **{k: (shape, f"{BY_KIND[k].label} ({BY_KIND[k].prefix})" + (", ringed" if shape == "border" else ""))
       for k, shape in SHAPES.items()},
    "record": ("circle", "record that does not validate"),
}
FOLDERS = {**{k: BY_KIND[k].folder for k in SHAPES}, "record": ""}


def data(ix: SiteIndex) -> dict:
    """Compact arrays: nodes ``[id, title, kind, status, x, y, invalid]``; edges ``[from, to, type]`` by node index."""
    pos = layout(ix.graph)
    ids = sorted(ix.graph.nodes)
    at = {n: i for i, n in enumerate(ids)}
    nodes = []
    for n in ids:
        a = ix.graph.nodes[n]
        x, y = pos[n]
        nodes.append([n, str(a.get("title", n)), a.get("kind", "record"), a.get("status", ""), x, y, int(bool(a.get("invalid")))])
    edges = sorted([at[a], at[b], d["type"]] for a, b, d in ix.graph.edges(data=True))
    return {
        "nodes": nodes,
        "edges": edges,
        "status": {name: s.colour for name, s in vocab.CLAIM.items()},
        "kinds": {k: {"shape": shape, "colour": KIND_FILL.get(k, "#bdbdbd"), "folder": FOLDERS[k]} for k, (shape, _) in KINDS.items()},
    }


def data_script(ix: SiteIndex) -> str:
    return f"window.ASSAY_GRAPH = {script_json(data(ix))};\n"


def json_download(ix: SiteIndex) -> str:
    return script_json(to_json(ix.graph), indent=1) + "\n"


def page(ix: SiteIndex) -> Page:
    statuses = "".join(
        f'<label class="assay-check-label"><input type="checkbox" data-status="{esc(n)}" checked>{chip(s)}</label>'
        for n, s in vocab.CLAIM.items())
    kinds = "".join(
        f'<label class="assay-check-label"><input type="checkbox" data-kind="{esc(k)}" checked>'
        f'<span class="assay-shape assay-shape-{shape}"></span>{esc(text)}</label>' for k, (shape, text) in KINDS.items())
    body = f"""<h1>Graph</h1>
<p>Every record, coloured by status (claims) or kind, shaped by kind. Arrows point from a record to what it rests on.
Click a node to open its page; search to focus on a record's neighbourhood.
Download: <a href="graph.json" download>graph.json</a> · <a href="assay.json" download>assay.json</a></p>
<div class="assay-graph-controls">
<div class="assay-graph-search"><label>Find <input type="search" id="assay-graph-search" placeholder="id or title" autocomplete="off"></label>
<ul id="assay-graph-results" class="assay-graph-results"></ul></div>
<div class="assay-graph-focus"><label>Depth <select id="assay-graph-depth"><option>1</option><option selected>2</option><option>3</option><option>4</option><option value="99">all</option></select></label>
<button type="button" id="assay-graph-clear" class="md-button">Show all</button> <span id="assay-graph-focus-label"></span></div>
<details class="assay-graph-filters"><summary>Filter by status and kind</summary><div>{statuses}</div><div>{kinds}</div></details>
</div>
<div id="assay-graph" class="assay-graph" data-search-exclude><noscript>The graph needs JavaScript; <a href="graph.json">graph.json</a> holds the same data.</noscript></div>
<p id="assay-graph-info" class="assay-graph-info" aria-live="polite"></p>
{legend("Claim")}
<script src="assets/vendor/graph-vendor.min.js"></script>
<script src="graph-data.js"></script>
<script src="assets/graph.js"></script>
"""
    return Page("graph.md", "Graph", body, True)
