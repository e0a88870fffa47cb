"""Node positions for the graph page, computed at build time in O(n log n).

Force-directed layout of the whole graph is quadratic (networkx's spring layout takes minutes at
10,000 nodes), so each weakly connected component is laid out on its own: small ones with a seeded
spring layout, large ones in rings by breadth-first distance from their best-connected record, each
ring ordered by the angle of its parents. Components are then packed on shelves, largest first.
Deterministic: the same graph gives the same coordinates.
"""

from __future__ import annotations

import math

import networkx as nx

SPRING_MAX = 40  # components up to this size get a spring layout
SPACING = 1.0  # distance between neighbours on a ring


def layout(g: nx.MultiDiGraph) -> dict[str, tuple[float, float]]:
    """Position of every node; components packed left to right, top to bottom."""
    comps = sorted((sorted(c) for c in nx.weakly_connected_components(g)), key=lambda c: (-len(c), c[0]))
    placed = [_component(g, nodes) for nodes in comps]
    return _pack(placed)


def _component(g: nx.MultiDiGraph, nodes: list[str]) -> tuple[dict[str, tuple[float, float]], float]:
    """Positions centred on the origin, and the radius they span."""
    if len(nodes) == 1:
        return {nodes[0]: (0.0, 0.0)}, 0.5
    if len(nodes) <= SPRING_MAX:
        sub = nx.Graph(g.subgraph(nodes))
        scale = math.sqrt(len(nodes)) * SPACING
        pos = nx.spring_layout(sub, seed=7, iterations=60, scale=scale)
        return {n: (float(pos[n][0]), float(pos[n][1])) for n in nodes}, scale + 0.5
    return _rings(g, nodes)


def _rings(g: nx.MultiDiGraph, nodes: list[str]) -> tuple[dict[str, tuple[float, float]], float]:
    members = set(nodes)
    root = max(nodes, key=lambda n: (g.degree(n), _neg(n)))
    angle = {root: 0.0}
    pos = {root: (0.0, 0.0)}
    ring, radius = [root], 0.0
    seen = {root}
    while ring:
        nxt: dict[str, float] = {}
        for parent in ring:  # BFS over both directions, parents first in ring order
            for n in sorted(set(g.successors(parent)) | set(g.predecessors(parent))):
                if n in members and n not in seen:
                    seen.add(n)
                    nxt[n] = angle[parent]
        if not nxt:
            break
        order = sorted(nxt, key=lambda n: (nxt[n], n))
        radius = max(radius + 2 * SPACING, len(order) * SPACING / (2 * math.pi))
        for i, n in enumerate(order):
            a = 2 * math.pi * i / len(order)
            angle[n] = a
            pos[n] = (radius * math.cos(a), radius * math.sin(a))
        ring = order
    return pos, radius + 1.0


def _neg(n: str) -> tuple[int, ...]:
    """Tie-break for the root: the smallest id wins."""
    return tuple(-ord(c) for c in n)


def _pack(placed: list[tuple[dict[str, tuple[float, float]], float]]) -> dict[str, tuple[float, float]]:
    area = sum((2 * r) ** 2 for _, r in placed)
    width = max(math.sqrt(area) * 1.2, max((2 * r for _, r in placed), default=1.0))
    out: dict[str, tuple[float, float]] = {}
    x = y = shelf = 0.0
    for pos, r in placed:
        d = 2 * r
        if x + d > width and x > 0:
            x, y, shelf = 0.0, y + shelf, 0.0
        cx, cy = x + r, y + r
        for n, (px, py) in pos.items():
            out[n] = (round(cx + px, 3), round(-(cy + py), 3))
        x += d
        shelf = max(shelf, d)
    return out
