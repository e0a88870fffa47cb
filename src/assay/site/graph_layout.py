"""Node positions for the graph page: a layered (dependency-first) layout, computed at build time.

An edge points from a record to what it rests on. A record's layer is the length of the longest chain
of what it rests on (records in a cycle share a layer), so layer 0, at the left, holds what rests on
nothing (the sources, mostly) and every arrow points left, to an earlier layer. Within a layer, records
are ordered by the mean position of their neighbours in the layers before and after (two barycentre
sweeps), which keeps most edges short and uncrossed. A layer taller than the page would be is wrapped
into several sub-columns, so 10,000 records still form a block of about the canvas's shape.

Positions are on a lattice: ``col`` (an integer, the sub-column) and ``row`` (a multiple of one half, so
a short layer sits centred). The page spaces columns for a label and rows for a line or two of text.
Linear in the records and edges, apart from sorting each layer; deterministic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import networkx as nx

#: Screen width of a column over the height of a row, and the canvas's width over its height, that the
#: number of rows is chosen for (the page fits the block into its canvas whatever they turn out to be).
CELL_ASPECT = 4.5
CANVAS_ASPECT = 1.25
MIN_ROWS = 6


@dataclass(frozen=True)
class Layout:
    """Where each record sits: ``cols[n]``, ``rows[n]``, ``layers[n]``; ``width`` columns by ``height`` rows."""

    cols: dict[str, int]
    rows: dict[str, float]
    layers: dict[str, int]
    width: int
    height: int


def rows_for(n: int, tallest: int) -> int:
    """Rows of the block: about the canvas's shape; a layer up to half again as tall is not wrapped."""
    target = max(MIN_ROWS, math.ceil(math.sqrt(n * CELL_ASPECT / CANVAS_ASPECT)))
    return tallest if tallest <= 1.5 * target else target


def layers(g: nx.MultiDiGraph) -> dict[str, int]:
    """Longest chain of what each record rests on; the members of a cycle share one layer.

    Tarjan's algorithm (networkx's) hands out the strongly connected components with every component
    after those it reaches, so one pass over them in that order sees each successor's layer first."""
    comp: dict[str, int] = {}
    depth: list[int] = []
    for k, members in enumerate(nx.strongly_connected_components(g)):
        below = [depth[comp[s]] for n in members for s in g.successors(n) if s not in members]
        depth.append(1 + max(below, default=-1))
        for n in members:
            comp[n] = k
    return {n: depth[comp[n]] for n in g.nodes}


def order(g: nx.MultiDiGraph, layer: dict[str, int]) -> list[list[str]]:
    """The records of each layer, ordered to keep edges short: by id, then a barycentre sweep down the
    layers (by what a record rests on) and one back up (by what rests on it)."""
    by_layer: list[list[str]] = [[] for _ in range(1 + max(layer.values(), default=-1))]
    for n in sorted(layer):
        by_layer[layer[n]].append(n)
    where: dict[str, float] = {}

    def place(nodes: list[str]) -> None:
        for i, n in enumerate(nodes):
            where[n] = (i + 0.5) / len(nodes)

    for nodes in by_layer:
        place(nodes)

    def sweep(indices: range, neighbours, before) -> None:  # noqa: ANN001 - networkx's bound methods
        for k in indices:
            keys = {}
            for n in by_layer[k]:
                near = [where[m] for m in neighbours(n) if before(layer[m], k)]
                keys[n] = (sum(near) / len(near) if near else where[n], where[n])
            by_layer[k].sort(key=lambda n: keys[n])
            place(by_layer[k])

    sweep(range(1, len(by_layer)), g.successors, lambda lm, k: lm < k)
    sweep(range(len(by_layer) - 2, -1, -1), g.predecessors, lambda lm, k: lm > k)
    return by_layer


def layout(g: nx.MultiDiGraph) -> Layout:
    """Every record's column, row and layer."""
    layer = layers(g)
    ordered = order(g, layer)
    n = g.number_of_nodes()
    height = rows_for(n, max((len(v) for v in ordered), default=1))
    cols: dict[str, int] = {}
    rows: dict[str, float] = {}
    col = 0
    for nodes in ordered:
        k = max(1, math.ceil(len(nodes) / height))  # sub-columns of this layer
        per = math.ceil(len(nodes) / k)
        for j in range(k):
            chunk = nodes[j * per : (j + 1) * per]
            top = (height - len(chunk)) / 2
            for i, node in enumerate(chunk):
                cols[node] = col + j
                rows[node] = math.floor(2 * (top + i)) / 2
        col += k
    return Layout(cols, rows, layer, col, height)
