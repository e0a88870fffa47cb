"""The graph of records and their computed status.

Nodes are records (invalid ones too, flagged, so one typo does not cascade into dangling links);
edges are typed: ``cites`` (claim -> source), the relation types (claim -> record) and
``compared_against`` (source -> source). An edge points from a record to what it rests on.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx

from assay import status as vocab
from assay.cache import CACHE_FROM, ParseCache
from assay.diagnostics import printable
from assay.inputs import Inputs
from assay.loader import KnowledgeBase, Loaded
from assay.model import Claim, Source, series_of
from assay.results import Ledger, read_ledger
from assay.status import CheckState, check_states


@dataclass(frozen=True)
class ClaimState:
    """A claim's computed status: its checks per device, its summary, its closure."""

    id: str
    status: str  # a key of assay.status.CLAIM
    closure: str  # a key of assay.status.CLOSURE
    checks: list[CheckState] = field(default_factory=list)
    assertions: list[vocab.AssertionState] = field(default_factory=list)
    counts: str = ""  # "cpu: 6 supported, 1 untested; cuda: not run" (claims cut into assertions)
    devices_run: list[str] = field(default_factory=list)

    @property
    def stale(self) -> list[CheckState]:
        return [c for c in self.checks if c.stale]


def node_kind(record_id: str) -> str:
    """The kind of a record's node: its series' kind, or ``record`` when its id names no series."""
    s = series_of(record_id)
    return s.kind if s else "record"


def claim_states(kb: KnowledgeBase, ledger: Ledger | None = None) -> dict[str, ClaimState]:
    """Status and closure of every valid claim, from the ledger (read from disk when not given)."""
    ledger = read_ledger(kb.root) if ledger is None else ledger
    inputs = Inputs(kb.root, cache=len(kb.files) >= CACHE_FROM)
    summary: dict[str, tuple[vocab.Verdict, list[CheckState]]] = {}
    for cid, claim in sorted(kb.claims.items()):
        loaded = kb.by_id.get(cid)
        known = loaded.record_parts if loaded is not None and loaded.record is claim else None
        states = check_states(inputs, claim, ledger, known)
        summary[cid] = (vocab.claim_verdict(claim, states), states)
    inputs.save()
    closed = closure(kb, {cid: verdict.status == "verified" for cid, (verdict, _) in summary.items()})
    return {cid: ClaimState(cid, verdict.status, "closed" if closed[cid] else "open", states, verdict.assertions,
                            verdict.counts, verdict.devices_run)
            for cid, (verdict, states) in summary.items()}


class States(Mapping[str, ClaimState]):
    """Every valid claim's state as ``claim_states`` gives it, made when looked at and not kept, so that a walk
    over 50,000 claims can hold one claim's record and results at a time (``release``); each closure, which
    needs every claim's status, comes from ``briefs``."""

    def __init__(self, kb: KnowledgeBase):
        cache = len(kb.files) >= CACHE_FROM
        self.kb, self.ledger, self.inputs = kb, read_ledger(kb.root, cache=cache), Inputs(kb.root, cache=cache)
        self.briefs = briefs(kb, cache, self.ledger)

    def __getitem__(self, cid: str) -> ClaimState:
        f = self.kb.claim_files[cid]
        claim = f.record
        states = check_states(self.inputs, claim, self.ledger, f.record_parts)
        verdict = vocab.claim_verdict(claim, states)
        return ClaimState(cid, verdict.status, self.briefs[cid].closure, states, verdict.assertions, verdict.counts,
                          verdict.devices_run)

    def __iter__(self) -> Iterator[str]:
        return iter(self.briefs)

    def __len__(self) -> int:
        return len(self.briefs)

    def release(self, cid: str) -> None:
        """Keep the claim's record and its results only as the bytes they were read from, until next looked at."""
        f = self.kb.claim_files[cid]
        f.freeze()
        for check in f.outline.checks:
            for device in check.devices:
                self.ledger.results.release((cid, check.id, device))


def closure(kb: KnowledgeBase, verified: dict[str, bool]) -> dict[str, bool]:
    """Whether each claim is verified together with everything it depends on, transitively.

    Linear: one depth-first pass over the depends_on links. A claim in a cycle is open, since it rests
    on itself: the first of a cycle to be finished meets a claim still on the path, and each after it a
    claim already open. So is one that rests on an invalid or missing claim, which is why those links
    are kept.
    """
    rests_on = {cid: [t for t in f.outline.depends_on() if (s := series_of(t)) is not None and s.model is Claim]
                for cid, f in kb.claim_files.items()}
    closed: dict[str, bool] = {}
    on_path: set[str] = set()
    for start in verified:
        if start in closed:
            continue
        stack = [(start, iter(rests_on.get(start, ())))]
        on_path.add(start)
        ok = {start: verified.get(start, False)}
        while stack:
            node, below = stack[-1]
            target = next(below, None)
            if target is None:
                stack.pop()
                on_path.discard(node)
                closed[node] = ok.pop(node)
                if stack:
                    ok[stack[-1][0]] &= closed[node]
            elif target in on_path:
                ok[node] = False  # a cycle
            elif target in closed:
                ok[node] &= closed[target]
            else:
                stack.append((target, iter(rests_on.get(target, ()))))
                on_path.add(target)
                ok[target] = verified.get(target, False)
    return {cid: closed[cid] for cid in verified}


@dataclass(frozen=True)
class Brief:
    """What ``assay status`` says of a claim: its status and closure, its assertions counted per device, and
    why each stale result is stale."""

    status: str  # a key of assay.status.CLAIM
    closure: str  # a key of assay.status.CLOSURE
    counts: str
    stale: tuple[tuple[str, str, tuple[str, ...]], ...]  # (check, device, reasons)


def briefs(kb: KnowledgeBase, cache: bool | None = None, ledger: Ledger | None = None) -> dict[str, Brief]:
    """The ``Brief`` of every valid claim: ``claim_states`` in short, for a listing of them all.

    A large knowledge base keeps each claim's status between runs (``assay.cache``) under what it was
    computed from: the stamp of the claim's file, the stamps of its ledger files, the hashes of its checks'
    other inputs (verifier code, data, pins) and the lock's pins; every module of Assay keys the cache
    too. A claim whose inputs all stand as they were is not thawed, nor are its results read; any other
    is computed as ``claim_states`` computes it. ``cache``: by default from ``CACHE_FROM`` files on;
    ``ledger``: as ``read_ledger`` reads it with ``cache``, if the caller has it.
    """
    if not (len(kb.files) >= CACHE_FROM if cache is None else cache):
        return {cid: Brief(st.status, st.closure, st.counts, tuple((c.check, c.device, tuple(c.stale)) for c in st.stale))
                for cid, st in claim_states(kb, ledger).items()}
    ledger = read_ledger(kb.root, cache=True) if ledger is None else ledger
    inputs = Inputs(kb.root, cache=True)
    memo = ParseCache(kb.root, "status", also=("*",))
    pins = repr(sorted(inputs.pins.items())).encode()  # every pin: a result's off-lock note reads them all
    made: dict[str, tuple[str, str, tuple]] = {}  # cid -> (status, counts, stale)
    code: dict[str, bytes] = {}
    for cid, f in sorted(kb.claim_files.items()):
        key = _memo_key(cid, f, ledger, inputs, pins, code)
        kept = memo.get(cid, f.stamp) if key is not None else None
        if kept is not None and kept[0] == key:
            made[cid] = kept[1]
            continue
        claim = f.record
        states = check_states(inputs, claim, ledger, f.record_parts)
        verdict = vocab.claim_verdict(claim, states)
        made[cid] = (verdict.status, verdict.counts, tuple((c.check, c.device, tuple(c.stale)) for c in states if c.stale))
        if key is not None:
            memo.put(cid, f.stamp, (key, made[cid]))
        f.freeze()  # one claim and its results in memory at a time
        for c in states:
            ledger.results.release((cid, c.check, c.device))
    inputs.save()
    memo.save()
    closed = closure(kb, {cid: status == "verified" for cid, (status, _, _) in made.items()})
    return {cid: Brief(status, "closed" if closed[cid] else "open", counts, stale)
            for cid, (status, counts, stale) in made.items()}


def _memo_key(cid: str, f: Loaded, ledger: Ledger, inputs: Inputs, pins: bytes, code: dict[str, bytes]) -> str | None:
    """A hash of what a claim's status is computed from besides its file, or None when something cannot be
    known unchanged (a ledger file whose stamp the cache does not keep, a check whose record parts it lacks).

    ``code``: the verifier modules' code parts as bytes, made once per module and kept here between claims."""
    if f.stamp is None or f.outline is None:
        return None
    h = hashlib.sha256(pins)
    for check in f.outline.checks:
        record = f.record_parts.get(check.id)
        if not record:
            return None
        module = check.verifier.split("::")[0]
        if module not in code:
            code[module] = repr(sorted(inputs.code_parts(module).items())).encode()
        data = [inputs.file_digest(inputs.root / name) for name in check.reads]
        for device in check.devices:
            key = (cid, check.id, device)
            if key in ledger.stamps and ledger.stamps[key] is None:
                return None
            h.update(repr((check.id, device, ledger.stamps.get(key), record, data)).encode())
            h.update(code[module])
    return h.hexdigest()



def build(kb: KnowledgeBase, states: Mapping[str, ClaimState | Brief] | None = None) -> nx.MultiDiGraph:
    """A node per record file (valid or not) and an edge per resolvable link; from each record's outline, so
    no record is thawed (``states``: anything with a status and a closure per claim)."""
    states = claim_states(kb) if states is None else states
    g = nx.MultiDiGraph()
    for rid, loaded in sorted(kb.by_id.items()):
        outline = loaded.outline
        attrs: dict[str, Any] = {"kind": node_kind(rid), "title": outline.title if outline else rid, "path": loaded.path,
                                 "invalid": outline is None}
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
    keep = {rid}
    down = nx.single_source_shortest_path_length(g, rid, cutoff=depth)
    up = nx.single_source_shortest_path_length(g.reverse(copy=False), rid, cutoff=depth)
    keep |= set(down) | set(up)
    return g.subgraph(sorted(keep)).copy()


def to_json(g: nx.MultiDiGraph) -> dict[str, Any]:
    """Nodes and edges as plain data, in a stable order."""
    nodes = [{"id": n, **{k: v for k, v in sorted(a.items())}} for n, a in sorted(g.nodes(data=True))]
    edges = sorted(({"source": a, "target": b, "type": d["type"]} for a, b, d in g.edges(data=True)),
                   key=lambda e: (e["source"], e["target"], e["type"]))
    return {"nodes": nodes, "edges": edges}


def to_dot(g: nx.MultiDiGraph) -> str:
    lines = ["digraph assay {", "  rankdir=LR;"]
    for n, a in sorted(g.nodes(data=True)):
        shape = {"source": "box", "decision": "note", "theory": "diamond"}.get(a["kind"], "ellipse")
        colour = vocab.CLAIM[a["status"]].colour if "status" in a else "#5d4037"
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


def load_states(root: Path) -> tuple[KnowledgeBase, dict[str, ClaimState]]:
    """Load the knowledge base under ``root`` and compute its claims' states."""
    from assay.loader import load

    kb = load(root)
    return kb, claim_states(kb)
