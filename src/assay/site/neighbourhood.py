"""A claim's neighbourhood as static SVG: what rests on it (left), what it rests on (right).

Drawn at build time for each depth up to the page's maximum, toggled by radio buttons with CSS only,
so it works without JavaScript and costs O(neighbourhood) per page.
"""

from __future__ import annotations

from assay import status as vocab
from assay.site.markup import esc, href, record_doc
from assay.site.views import SiteIndex

COL_W, ROW_H, BOX_W, BOX_H, MAX_ROWS = 150, 30, 120, 22, 10
KIND_FILL = {"source": "#78909c", "decision": "#8d6e63", "record": "#bdbdbd"}


def node_colour(attrs: dict) -> str:
    if attrs.get("invalid"):
        return "#bdbdbd"
    if "status" in attrs:
        return vocab.CLAIM[attrs["status"]].colour
    return KIND_FILL.get(attrs.get("kind", "record"), "#bdbdbd")


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


def svg(ix: SiteIndex, rid: str, depth: int, here: str) -> str:
    cols = columns(ix, rid, depth)
    lo, hi = min(cols), max(cols)
    rows = min(MAX_ROWS, max(len(v) for v in cols.values())) + 1
    width, height = (hi - lo + 1) * COL_W, rows * ROW_H
    pos: dict[str, tuple[float, float]] = {}
    parts: list[str] = []
    for c, nodes in cols.items():
        shown = nodes[:MAX_ROWS]
        top = (height - len(shown) * ROW_H) / 2
        for i, n in enumerate(shown):
            pos[n] = ((c - lo) * COL_W + (COL_W - BOX_W) / 2, top + i * ROW_H + (ROW_H - BOX_H) / 2)
        if len(nodes) > MAX_ROWS:
            x = (c - lo) * COL_W + COL_W / 2
            parts.append(f'<text x="{x:.0f}" y="{height - 6:.0f}" text-anchor="middle" class="assay-hood-more">+{len(nodes) - MAX_ROWS} more</text>')
    lines = []
    edges = sorted((a, b, d["type"]) for a in pos for _, b, d in ix.graph.out_edges(a, data=True) if b in pos and b != a)
    for a, b, kind in edges:
        (x1, y1), (x2, y2) = pos[a], pos[b]
        lines.append(f'<line x1="{x1 + BOX_W:.0f}" y1="{y1 + BOX_H / 2:.0f}" x2="{x2:.0f}" y2="{y2 + BOX_H / 2:.0f}">'
                     f"<title>{esc(a)} {esc(kind)} {esc(b)}</title></line>")
    boxes = []
    for n, (x, y) in sorted(pos.items()):
        attrs = ix.graph.nodes[n]
        rx = {"source": 0, "decision": 2}.get(attrs.get("kind"), 10)
        cls = "assay-hood-node assay-hood-centre" if n == rid else "assay-hood-node"
        boxes.append(f'<a href="{esc(href(here, record_doc(n)))}" class="{cls}"><title>{esc(n)}: {esc(attrs.get("title", n))}</title>'
                     f'<rect x="{x:.0f}" y="{y:.0f}" width="{BOX_W}" height="{BOX_H}" rx="{rx}" fill="{node_colour(attrs)}"/>'
                     f'<text x="{x + BOX_W / 2:.0f}" y="{y + 15:.0f}" text-anchor="middle">{esc(n)}</text></a>')
    return (f'<svg class="assay-hood-svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
            f'aria-label="neighbourhood of {esc(rid)} at depth {depth}">'
            f'<g class="assay-hood-edges">{"".join(lines)}</g>{"".join(boxes)}{"".join(parts)}</svg>')


def figure(ix: SiteIndex, rid: str, here: str, max_depth: int) -> str:
    """Radio buttons for depth 1..max_depth and one SVG per depth; depth 1 shown first."""
    if rid not in ix.graph:
        return ""
    radios, panels = [], []
    for d in range(1, max_depth + 1):
        checked = " checked" if d == 1 else ""
        radios.append(f'<input type="radio" name="assay-hood" id="assay-hood-{d}" class="assay-hood-radio"{checked}>'
                      f'<label for="assay-hood-{d}">depth {d}</label>')
        panels.append(f'<div class="assay-hood-panel assay-hood-panel-{d}">{svg(ix, rid, d, here)}</div>')
    deeper = " · ".join(f'<a href="{esc(href(here, f"graph.md#focus={rid}&depth={d}"))}">{d}</a>' for d in (1, 2, 3, 4))
    caption = ('<p class="assay-note">Left: records that rest on this one; right: what it rests on '
               f'(cites, depends on, supports, …). Click a box to open its page. In the graph at depth {deeper}.</p>')
    return f'<div class="assay-hood">{"".join(radios)}{"".join(panels)}</div>{caption}'
