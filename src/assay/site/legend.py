"""How the graph draws records and links: one legend for the graph page and each claim page's neighbourhood.

Each relation's colour per scheme (4.5:1 on that scheme's page), dash pattern, width and arrowhead; each kind's
shape, fill and words. The graph page's legend, its canvas script and the claim page's small graph all read it.
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.model import BY_KIND


@dataclass(frozen=True)
class Relation:
    """How an edge type is drawn: colour per scheme, dash pattern and width (px), and its arrowhead."""

    type: str
    words: str  # the legend's text; after a "|" what a narrow screen leaves out
    light: str
    dark: str
    dash: tuple[float, ...]
    width: float
    head: str  # a key of HEADS


@dataclass(frozen=True)
class Head:
    """An arrowhead as an SVG path with its tip at the origin pointing along +x; drawn filled, stroked,
    or ``hollow`` (filled with the background, then stroked)."""

    path: str
    mode: str
    length: float  # how far back from the tip the line stops


HEADS = {
    "chevron": Head("M-7,-3.5L0,0L-7,3.5", "stroke", 0),
    "triangle": Head("M0,0L-10,-5L-10,5Z", "fill", 9),
    "open": Head("M-10,-5.5L0,0L-10,5.5", "stroke", 0),
    "tee": Head("M-1.5,-6.5L-1.5,6.5M-6,-6.5L-6,6.5", "stroke", 1.5),
    "diamond": Head("M0,0L-7,-4.5L-14,0L-7,4.5Z", "fill", 13),
    "hollow": Head("M0,0L-11,-6.5L-11,6.5Z", "hollow", 11),
    "circle": Head("M0,0A4.5,4.5 0 1 1 -9,0A4.5,4.5 0 1 1 0,0Z", "fill", 8),
}

#: In drawing order (the many ``cites`` first, beneath the rest). Colours keep 4.5:1 on each scheme's page.
RELATIONS = [
    Relation("cites", "cites|claim → source", "#6b6b6b", "#9e9e9e", (), 1.0, "chevron"),
    Relation("depends_on", "depends on", "#37474f", "#cfd8dc", (), 2.2, "triangle"),
    Relation("supports", "supports", "#2e7d32", "#81c784", (9, 4), 1.6, "open"),
    Relation("contradicts", "contradicts", "#c62828", "#ef9a9a", (9, 3, 2, 3), 1.6, "tee"),
    Relation("refines", "refines", "#1565c0", "#90caf9", (3, 3), 1.8, "diamond"),
    Relation("generalises", "generalises", "#6a1b9a", "#ce93d8", (12, 3, 3, 3, 3, 3), 1.6, "hollow"),
    Relation("compared_against", "compared against|source → source", "#9c4a00", "#ffb74d", (1.5, 3.5), 2.0, "circle"),
]
BY_TYPE = {r.type: r for r in RELATIONS}
OTHER = Relation("other", "other link", "#6b6b6b", "#9e9e9e", (2, 2), 1.0, "chevron")  # a type this table does not know

#: Node shape by kind, in legend order.
SHAPES = {"claim": "circle", "theory": "diamond", "source": "square", "decision": "hexagon", "record": "ring"}
KIND_WORDS = {
    **{k: f"{BY_KIND[k].label} ({BY_KIND[k].prefix})" for k in ("claim", "theory", "source", "decision")},
    "record": "record that does not validate",
}
FOLDERS = {**{k: BY_KIND[k].folder for k in ("claim", "theory", "source", "decision")}, "record": ""}
#: A node's fill by kind, where no status colours it (claims take their status's colour).
KIND_FILL = {"source": "#78909c", "decision": "#8d6e63", "record": "#bdbdbd"}
