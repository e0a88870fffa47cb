"""A claim's neighbourhood as static SVG: what rests on it (left), what it rests on (right).

Drawn at build time for each depth up to the page's maximum, toggled by radio buttons with CSS only,
so it works without JavaScript and costs O(neighbourhood) per page. This module places the boxes and lines;
``templates/neighbourhood.html`` draws them. Measured on bench_site's knowledge bases, both ways in one run (CPU s,
best of three): the figures of 1,000 claims 0.18 s written in Python, 0.30 s from the template, their claim pages
1.61 s and 1.59 s; at 10,000 claims 1.83 s and 3.26 s, the pages 18.1 s and 17.5 s: the difference within the noise.
"""

from __future__ import annotations

from functools import lru_cache

from assay import vocabulary
from assay.site.legend import KIND_FILL, RELATIONS
from assay.site.markup import contrast, href, record_doc
from assay.site.template import render
from assay.site.views import SiteIndex

#: A column holds a box wide enough for an id at 11 px (``THEORY-085``) and a gap for the lines; three columns (depth 1)
#: fit a phone's 358 px of content at their own size, so that the text is never scaled below 11 px.
COL_W, ROW_H, BOX_W, BOX_H, MAX_ROWS = 116, 30, 96, 22, 10


def node_colour(attrs: dict) -> str:
    if attrs.get("invalid"):
        return "#bdbdbd"
    if "status" in attrs:
        return vocabulary.CLAIM[attrs["status"]].colour
    return KIND_FILL.get(attrs.get("kind", "record"), "#bdbdbd")


@lru_cache(maxsize=256)
def ink(fill: str) -> str:
    """Black or white, whichever reads better on ``fill``; one of them always keeps 4.5:1 (at least √21)."""
    return max(("#000000", "#ffffff"), key=lambda c: contrast(c, fill))


#: The graph page's dash pattern of each relation type (``legend.RELATIONS``), as an SVG dasharray.
_DASHES = {r.type: " ".join(f"{v:g}" for v in r.dash) for r in RELATIONS}


def columns(ix: SiteIndex, rid: str, depth: int) -> dict[int, list[str]]:
    """Column -k holds records k links above (resting on ``rid``), +k those k links below."""
    g = ix.graph
    placed = {rid: 0}
    for sign, step in ((1, g.successors), (-1, g.predecessors)):
        frontier = [rid]
        for k in range(1, depth + 1):
            nxt = sorted({n for f in frontier for n in step(f)} - placed.keys())
            placed.update({n: sign * k for n in nxt})
            frontier = nxt
    cols: dict[int, list[str]] = {}
    for n, c in sorted(placed.items()):
        cols.setdefault(c, []).append(n)
    return cols


def placed(ix: SiteIndex, rid: str, depth: int, here: str) -> dict:
    """One depth's figure: its size, boxes, lines and "+N more" notes, for the template."""
    cols = columns(ix, rid, depth)
    lo, hi = min(cols), max(cols)
    rows = min(MAX_ROWS, max(len(v) for v in cols.values())) + 1
    width, height = (hi - lo + 1) * COL_W, rows * ROW_H
    pos: dict[str, tuple[int, int]] = {}
    more = []
    for c, nodes in cols.items():
        shown = nodes[:MAX_ROWS]
        top = (height - len(shown) * ROW_H) / 2
        for i, n in enumerate(shown):
            pos[n] = (round((c - lo) * COL_W + (COL_W - BOX_W) / 2), round(top + i * ROW_H + (ROW_H - BOX_H) / 2))
        if len(nodes) > MAX_ROWS:
            more.append({"x": round((c - lo) * COL_W + COL_W / 2), "y": height - 6, "n": len(nodes) - MAX_ROWS})
    edges, dash = [], _DASHES
    for a, b, kind in sorted(
        (a, b, d["type"]) for a in pos for _, b, d in ix.graph.out_edges(a, data=True) if b in pos and b != a
    ):
        (x1, y1), (x2, y2) = pos[a], pos[b]
        edges.append(
            {
                "x1": x1 + BOX_W,
                "y1": y1 + BOX_H // 2,
                "x2": x2,
                "y2": y2 + BOX_H // 2,
                "dash": dash.get(kind, ""),
                "a": a,
                "b": b,
                "type": kind,
            }
        )
    boxes = []
    for n, (x, y) in sorted(pos.items()):
        attrs = ix.graph.nodes[n]
        fill = node_colour(attrs)
        boxes.append(
            {
                "id": n,
                "title": attrs.get("title", n),
                "href": href(here, record_doc(n)),
                "x": x,
                "y": y,
                "fill": fill,
                "ink": ink(fill),
                "rx": {"source": 0, "decision": 2}.get(attrs.get("kind"), 10),
                "centre": n == rid,
            }
        )
    return {"depth": depth, "width": width, "height": height, "edges": edges, "boxes": boxes, "more": more}


def figure(ix: SiteIndex, rid: str, here: str, max_depth: int) -> str:
    """Radio buttons for depth 1..max_depth and one SVG per depth; depth 1 shown first."""
    if rid not in ix.graph:
        return ""
    figures = [placed(ix, rid, d, here) for d in range(1, max_depth + 1)]
    deeper = [(d, href(here, f"graph.md#focus={rid}&depth={d}")) for d in (1, 2, 3, 4)]
    return render("neighbourhood.html", rid=rid, figures=figures, deeper=deeper, box_w=BOX_W, box_h=BOX_H)
