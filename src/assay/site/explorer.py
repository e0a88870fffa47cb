"""The graph page: every record in a layer, and in its place in the layer, computed at build time, drawn on a canvas
(where each sits is the page script's rule: it lays out a focus the same way as the reader picks one).

The data travels as a script (``graph-data.js``) rather than fetched JSON so the page works when
opened from disk; ``graph.json`` beside it is the same graph for download. Record text reaches the
page only as JSON data with ``<``, ``>`` and ``&`` escaped, and the page script draws it as canvas text
or sets it as ``textContent``.

How each relation, kind and status looks is declared once, in ``assay.site.legend``: the legend
(``templates/graph.html``) and the page script (``assets/graph.js``) both read it, so what the legend
shows is what the canvas draws.
"""

from __future__ import annotations

from assay import vocabulary
from assay.graph import to_json
from assay.site.graph_layout import ranked
from assay.site.legend import BY_TYPE, FOLDERS, HEADS, KIND_FILL, KIND_WORDS, OTHER, RELATIONS, SHAPES
from assay.site.markup import BACKGROUNDS, readable, script_json
from assay.site.pages import Output
from assay.site.template import render
from assay.site.views import SETTLED, SiteIndex, Summary, verdict_counts


def schemes(colour: str) -> dict[str, str]:
    """A fill for each scheme: the colour itself where it keeps contrast with the page, else darkened or
    lightened just enough (``markup.readable``), so a marker never fades into the background."""
    return {"light": readable(colour, BACKGROUNDS["default"]), "dark": readable(colour, BACKGROUNDS["slate"])}


def data(ix: SiteIndex) -> dict:
    """Compact arrays. Nodes: ``[id, title, kind, status, layer, rank, invalid, counts, ring, open, device]`` where
    ``rank`` is the record's place in its layer (``graph_layout.ranked``),
    ``counts`` indexes the ``counts`` strings, ``ring`` counts a claim's assertions by verdict (in the order of
    ``verdicts``, the assertion vocabulary: the ring drawn round its marker), ``open`` lists those that do not hold
    as ``[assertion id, verdict index]`` (``views.SETTLED``), both read on ``device``; edges: ``[from, to, relation]``
    by index."""
    lay = ranked(ix.graph)
    ids = sorted(ix.graph.nodes)
    at = {n: i for i, n in enumerate(ids)}
    sentences: dict[str, int] = {"": 0}
    nodes = []
    for n in ids:
        a = ix.graph.nodes[n]
        words = verdict_counts(ix.summaries.get(n))
        k = sentences.setdefault(words, len(sentences))
        ring, still, device = _verdicts(ix.summaries.get(n))
        nodes.append(
            [
                n,
                str(a.get("title", n)),
                a.get("kind", "record"),
                a.get("status", ""),
                *lay[n],
                int(bool(a.get("invalid"))),
                k,
                ring,
                still,
                device,
            ]
        )
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
        "relations": [
            {"type": t, "light": r.light, "dark": r.dark, "dash": list(r.dash), "width": r.width, "head": r.head}
            for t, r in zip(types, relations)
        ],
        "heads": {name: {"path": h.path, "mode": h.mode, "length": h.length} for name, h in HEADS.items()},
        "status": {name: schemes(s.colour) for name, s in vocabulary.CLAIM.items()},
        "verdicts": [{"name": name, **schemes(s.colour)} for name, s in vocabulary.ASSERTION.items()],
        "kinds": {
            k: {"shape": shape, "folder": FOLDERS[k], "words": KIND_WORDS[k], **schemes(KIND_FILL.get(k, "#9e9e9e"))}
            for k, shape in SHAPES.items()
        },
    }


VERDICTS = list(vocabulary.ASSERTION)


def _verdicts(summary: Summary | None) -> tuple[list[int], list[list], str]:
    """A claim's assertions counted by verdict (``VERDICTS`` order), those that do not hold, and the device read."""
    if summary is None or not summary.verdicts:
        return [], [], ""
    ring = [0] * len(VERDICTS)
    for _, v in summary.verdicts:
        ring[VERDICTS.index(v)] += 1
    return ring, [[a, VERDICTS.index(v)] for a, v in summary.verdicts if v not in SETTLED], summary.read_on


def data_script(ix: SiteIndex) -> str:
    return f"window.ASSAY_GRAPH = {script_json(data(ix))};\n"


def json_download(ix: SiteIndex) -> str:
    return script_json(to_json(ix.graph), indent=1) + "\n"


def page() -> Output:
    """The page: its words, controls, canvas and legend do not depend on the knowledge base (the data does)."""
    html = render(
        "graph.html",
        relations=RELATIONS,
        heads=HEADS,
        shapes=SHAPES,
        kind_words=KIND_WORDS,
        statuses=list(vocabulary.CLAIM.values()),
        fills={k: schemes(KIND_FILL.get(k, "#9e9e9e")) for k in SHAPES},
        status_fills={n: schemes(s.colour) for n, s in vocabulary.CLAIM.items()},
    )
    return Output.page("graph.md", "Graph", html, True)
