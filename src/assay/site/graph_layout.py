"""The graph page's layers, computed at build time: which layer each record is in, and its place in the layer.

An edge points from a record to what it rests on. A record's layer is the length of the longest chain
of what it rests on (records in a cycle share a layer), so layer 0, at the left, holds what rests on
nothing (the sources, mostly) and every arrow points left, to an earlier layer. Within a layer, records
are ordered by the mean position of their neighbours in the layers before and after (two barycentre
sweeps), which keeps most edges short and uncrossed. Both need the whole graph: made once here, with
networkx's Tarjan, rather than on each page load.

Where a record then sits on the canvas is the page's own rule (``assets/graph.js``, ``block``): it lays out a
focus's records in a block of their own as the reader picks them, and lays out the whole graph by the same rule.
Linear in the records and edges, apart from sorting each layer; deterministic.
"""

from __future__ import annotations

import networkx as nx


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


def ranked(g: nx.MultiDiGraph) -> dict[str, tuple[int, int]]:
    """Every record's layer and its place in the layer (``order``)."""
    return {n: (k, i) for k, nodes in enumerate(order(g, layers(g))) for i, n in enumerate(nodes)}
