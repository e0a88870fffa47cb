"""The graph of records: a node per record file, an edge per typed link, and its drawings (JSON, DOT, Mermaid).

Nodes are records (invalid ones too, flagged, so one typo does not cascade into dangling links); edges are
typed: ``cites`` (claim -> source), the relation types (claim -> record) and ``compared_against`` (source ->
source). An edge points from a record to what it rests on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import networkx as nx

from assay import vocabulary
from assay.diagnostics import printable
from assay.model import Claim, Source, series_of
from assay.records.knowledge_base import KnowledgeBase


def node_kind(record_id: str) -> str:
    """The kind of a record's node: its series' kind, or ``record`` when its id names no series."""
    s = series_of(record_id)
    return s.kind if s else "record"


def build(kb: KnowledgeBase, states: Mapping[str, Any]) -> nx.MultiDiGraph:
    """A node per record file (valid or not) and an edge per resolvable link; from each record's outline, so
    no record is thawed (``states``: anything with a ``status`` and a ``closure`` per claim, as
    ``assay.overview`` computes them)."""
    g = nx.MultiDiGraph()
    for rid, loaded in sorted(kb.by_id.items()):
        outline = loaded.outline
        attrs: dict[str, Any] = {
            "kind": node_kind(rid),
            "title": outline.title if outline else rid,
            "path": loaded.path,
            "invalid": outline is None,
        }
        if rid in states:
            attrs.update(status=states[rid].status, closure=states[rid].closure)
        elif loaded.model is Claim or node_kind(rid) in ("claim", "theory"):
            attrs.update(status="not-run", closure="open")
        g.add_node(rid, **attrs)
    for rid, loaded in sorted(kb.by_id.items()):
        outline = loaded.outline
        if loaded.model is Claim:
            for source in sorted({source for (field, *_), source in outline.sources if field == "citations"}):
                _edge(g, rid, source, "cites")
            for kind, target in outline.relations:
                _edge(g, rid, target, kind)
        elif loaded.model is Source:
            for source, _ in outline.compared:
                _edge(g, rid, source, "compared_against")
    return g


def _edge(g: nx.MultiDiGraph, a: str, b: str, kind: str) -> None:
    if b in g and not g.has_edge(a, b, key=kind):
        g.add_edge(a, b, key=kind, type=kind)


def focus(g: nx.MultiDiGraph, rid: str, depth: int) -> nx.MultiDiGraph:
    """The records within ``depth`` links of ``rid``: what it rests on and what rests on it."""
    down = nx.single_source_shortest_path_length(g, rid, cutoff=depth)  # rid itself at 0
    up = nx.single_source_shortest_path_length(g.reverse(copy=False), rid, cutoff=depth)
    return g.subgraph(sorted(set(down) | set(up))).copy()


def to_json(g: nx.MultiDiGraph) -> dict[str, Any]:
    """Nodes and edges as plain data, in a stable order."""
    nodes = [{"id": n, **{k: v for k, v in sorted(a.items())}} for n, a in sorted(g.nodes(data=True))]
    edges = sorted(
        ({"source": a, "target": b, "type": d["type"]} for a, b, d in g.edges(data=True)),
        key=lambda e: (e["source"], e["target"], e["type"]),
    )
    return {"nodes": nodes, "edges": edges}


def to_dot(g: nx.MultiDiGraph) -> str:
    lines = ["digraph assay {", "  rankdir=LR;"]
    for n, a in sorted(g.nodes(data=True)):
        shape = {"source": "box", "decision": "note", "theory": "diamond"}.get(a["kind"], "ellipse")
        colour = vocabulary.CLAIM[a["status"]].colour if "status" in a else "#5d4037"
        label = f"{_dot_string(n)}\\n{_dot_string(a['title'])}"
        lines.append(f'  "{_dot_string(n)}" [label="{label}", shape={shape}, color="{colour}"];')
    for e in to_json(g)["edges"]:
        lines.append(f'  "{_dot_string(e["source"])}" -> "{_dot_string(e["target"])}" [label="{e["type"]}"];')
    return "\n".join(lines + ["}"]) + "\n"


def _dot_string(text: str) -> str:
    """Text for a DOT double-quoted string: backslash first, then quote, escaped; a line break as DOT's ``\\n``."""
    return printable(text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n"))


def to_mermaid(g: nx.MultiDiGraph) -> str:
    def nid(n: str) -> str:
        return re.sub(r"[^A-Za-z0-9_]", "_", n)  # an id from a file name may hold anything

    lines = ["graph LR"]
    for n, a in sorted(g.nodes(data=True)):
        text = printable(f"{n}: {a['title']}".replace("\n", " ")).replace('"', "#quot;")
        lines.append(f'  {nid(n)}["{text}"]' if a["kind"] != "source" else f'  {nid(n)}[("{text}")]')
    for e in to_json(g)["edges"]:
        lines.append(f"  {nid(e['source'])} -->|{e['type']}| {nid(e['target'])}")
    return "\n".join(lines) + "\n"
