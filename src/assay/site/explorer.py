"""The graph page: every record at a layered position computed at build time, drawn on a canvas.

The data travels as a script (``graph-data.js``) rather than fetched JSON so the page works when
opened from disk; ``graph.json`` beside it is the same graph for download. Record text reaches the
page only as JSON data with ``<``, ``>`` and ``&`` escaped, and the page script draws it as canvas text
or sets it as ``textContent``.

How each relation, kind and status looks (dash pattern, arrowhead, shape, colour in each scheme) is
declared once here: the legend (``templates/graph.html``) and the page script (``assets/graph.js``) both
read it, so what the legend shows is what the canvas draws.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from assay import status as vocab
from assay.graph import ClaimState, to_json
from assay.model import BY_KIND
from assay.site.graph_layout import layout
from assay.site.markup import BACKGROUNDS, readable, script_json
from assay.site.neighbourhood import KIND_FILL
from assay.site.pages import Page
from assay.site.template import render
from assay.site.views import SiteIndex


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
KIND_WORDS = {**{k: f"{BY_KIND[k].label} ({BY_KIND[k].prefix})" for k in ("claim", "theory", "source", "decision")},
              "record": "record that does not validate"}
FOLDERS = {**{k: BY_KIND[k].folder for k in ("claim", "theory", "source", "decision")}, "record": ""}


def schemes(colour: str) -> dict[str, str]:
    """A fill for each scheme: the colour itself where it keeps contrast with the page, else darkened or
    lightened just enough (``markup.readable``), so a marker never fades into the background."""
    return {"light": readable(colour, BACKGROUNDS["default"]), "dark": readable(colour, BACKGROUNDS["slate"])}


def verdict_counts(state: ClaimState | None) -> str:
    """The claim's counts in words: its assertions' (``status.counts_sentence``), or, for a claim not cut
    into assertions, its checks' statuses per device (``cpu: 2 passed, 1 known-failing``)."""
    if state is None:
        return ""
    if state.counts:
        return state.counts
    per_device: dict[str, Counter] = {}
    for c in state.checks:
        per_device.setdefault(c.device, Counter())[c.status] += 1
    return "; ".join(f"{d}: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items(), key=lambda x: -x[1]))
                     for d, counts in sorted(per_device.items()))


def data(ix: SiteIndex) -> dict:
    """Compact arrays. Nodes: ``[id, title, kind, status, col, row, layer, invalid, counts]`` where
    ``counts`` indexes the ``counts`` strings; edges: ``[from, to, relation]`` by index."""
    lay = layout(ix.graph)
    ids = sorted(ix.graph.nodes)
    at = {n: i for i, n in enumerate(ids)}
    sentences: dict[str, int] = {"": 0}
    nodes = []
    for n in ids:
        a = ix.graph.nodes[n]
        words = verdict_counts(ix.states.get(n))
        k = sentences.setdefault(words, len(sentences))
        nodes.append([n, str(a.get("title", n)), a.get("kind", "record"), a.get("status", ""),
                      lay.cols[n], lay.rows[n], lay.layers[n], int(bool(a.get("invalid"))), k])
    types = [r.type for r in RELATIONS]
    extra = sorted({d["type"] for *_, d in ix.graph.edges(data=True)} - set(types))
    types += extra
    kind_of = {t: i for i, t in enumerate(types)}
    edges = sorted([at[a], at[b], kind_of[d["type"]]] for a, b, d in ix.graph.edges(data=True) if a != b)
    relations = [BY_TYPE.get(t, OTHER) for t in types]
    return {
        "nodes": nodes,
        "edges": edges,
        "counts": list(sentences),
        "width": lay.width,
        "height": lay.height,
        "relations": [{"type": t, "light": r.light, "dark": r.dark, "dash": list(r.dash), "width": r.width, "head": r.head}
                      for t, r in zip(types, relations)],
        "heads": {name: {"path": h.path, "mode": h.mode, "length": h.length} for name, h in HEADS.items()},
        "status": {name: schemes(s.colour) for name, s in vocab.CLAIM.items()},
        "kinds": {k: {"shape": shape, "folder": FOLDERS[k], "words": KIND_WORDS[k], **schemes(KIND_FILL.get(k, "#9e9e9e"))}
                  for k, shape in SHAPES.items()},
    }


def data_script(ix: SiteIndex) -> str:
    return f"window.ASSAY_GRAPH = {script_json(data(ix))};\n"


def json_download(ix: SiteIndex) -> str:
    return script_json(to_json(ix.graph), indent=1) + "\n"


def page(ix: SiteIndex) -> Page:
    """The page: its words, controls, canvas and legend do not depend on the knowledge base (the data does)."""
    html = render("graph.html", relations=RELATIONS, heads=HEADS, shapes=SHAPES, kind_words=KIND_WORDS,
                  statuses=list(vocab.CLAIM.values()), fills={k: schemes(KIND_FILL.get(k, "#9e9e9e")) for k in SHAPES},
                  status_fills={n: schemes(s.colour) for n, s in vocab.CLAIM.items()})
    return Page("graph.md", "Graph", html, True)
