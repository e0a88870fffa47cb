"""Exports of the whole knowledge base: BibTeX and CSL-JSON for every source (as ``assay.citation`` cites one), JSON for
every record with status."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import nullcontext
from typing import Any, TextIO

import msgspec

from assay.citation import bibtex, csl, csl_json
from assay.graph import build, to_json
from assay.ledger.messages import clean_message
from assay.ledger.result import RunError
from assay.model import Claim
from assay.records.knowledge_base import KnowledgeBase
from assay.status import ClaimState
from assay.timeline import registration_json, versions


def bibtex_all(kb: KnowledgeBase) -> str:
    return "\n".join(bibtex(s) for _, s in sorted(kb.sources.items()))


def csl_all(kb: KnowledgeBase) -> str:
    """Every source as one CSL-JSON array, in id order."""
    return csl_json([csl(s) for _, s in sorted(kb.sources.items())])


def as_json(kb: KnowledgeBase, states: Mapping[str, ClaimState]) -> dict[str, Any]:
    """Every valid record as the YAML says it, claims with their computed status and each check's history, and the graph."""
    parts = {key: value() if callable(value) else value for key, value in _parts(kb, states).items()}
    return {key: value if isinstance(value, dict) else list(value) for key, value in parts.items()}


def write_json(kb: KnowledgeBase, states: Mapping[str, ClaimState], out: TextIO) -> None:
    """``as_json`` written to ``out`` a record at a time, never whole in memory, down to depth 2 a value per line."""
    _write(_parts(kb, states), out, 0)
    out.write("\n")


def _parts(kb: KnowledgeBase, states: Mapping[str, ClaimState]) -> dict[str, Any]:
    """``states``: a dict, or ``States``, whose claims are computed as the writer reaches them and let go after. The
    graph is made when the writer reaches it, after the claims: by then ``States`` knows every claim's status."""
    return {
        "claims": _claims(kb, states),
        "sources": (s.model_dump(mode="json") for _, s in sorted(kb.sources.items())),
        "decisions": (d.model_dump(mode="json") for _, d in sorted(kb.decisions.items())),
        "graph": lambda: to_json(build(kb, states.briefs() if hasattr(states, "briefs") else states)),
    }


def _claims(kb: KnowledgeBase, states: Mapping[str, ClaimState]) -> Iterator[dict[str, Any]]:
    registry = getattr(states, "registry", None)  # overview.States: the repository's history, read once
    past = registry.history if registry is not None and registry.history.available else None
    for cid in sorted(kb.claim_files):
        using = getattr(states, "using", None)  # overview.States: one claim's record and results at a time
        with using(cid) if using is not None else nullcontext():
            claim = kb.claims[cid]
            yield {
                **_claim(claim, states[cid]),
                "history": {c.id: versions(past, cid, c.id) for c in claim.checks} if past is not None else None,
            }


#: The fields of each evaluated expectation (``assay.ledger.result.Evaluated``) that the export gives.
EXPECTATION = set("metric op value measured unit outcome seeds seeds_holding seeds_total control against discriminates".split())


def _claim(claim: Claim, st: ClaimState) -> dict[str, Any]:
    return {
        **claim.model_dump(mode="json"),
        "status": st.status,
        "closure": st.closure,
        "assertion_counts": st.counts,
        "assertion_status": {a.id: a.by_device for a in st.assertions},
        "assertion_why": {a.id: a.why for a in st.assertions},
        "results": [
            {
                "check": c.check,
                "device": c.device,
                "status": c.status,
                "stale": c.stale,
                "flags": c.flags,
                "off_lock": c.off_lock,
                "metrics": {k: m.value for k, m in c.result.metrics.items()} if c.result else {},
                "expectation": [e.model_dump(include=EXPECTATION) for e in c.result.expectation] if c.result else [],
                "registration": [registration_json(r) for r in c.registration],
                "last_error": _error(c.result.last_error) if c.result and c.result.last_error else None,
            }
            for c in st.checks
        ],
    }


def _error(error: RunError) -> dict[str, Any]:
    """The last error as a reader may see it: no engine frames, no machine paths (``clean_message``)."""
    return {**error.model_dump(mode="json"), "message": clean_message(error.message)}


#: The encoder of ``_write``, made once: msgspec's, keys sorted, compact (the 200,000 values of the claims' fields at
#: 10,000 claims, 62 MB written: 0.18 CPU s against 1.07 for the standard library's encoder with the same options).
_ENCODE = msgspec.json.Encoder(order="sorted").encode


def _json(value: Any) -> str:
    return _ENCODE(value).decode()


def _write(value: Any, out: TextIO, depth: int) -> None:
    """JSON of ``value``: mappings and lists (or iterators) down to depth 2 spread a value per line, deeper ones compact;
    a mapping at depth 2 (a record) written at once, what holds it a value at a time."""
    pad = "\n" + " " * (depth + 1)
    value = value() if callable(value) else value  # a value made when the writer reaches it
    if depth <= 1 and isinstance(value, dict):
        out.write("{")
        for n, (key, item) in enumerate(sorted(value.items())):
            out.write(("," if n else "") + pad + _json(key) + ": ")
            _write(item, out, depth + 1)
        out.write("\n" + " " * depth + "}" if value else "}")
    elif depth <= 2 and isinstance(value, (list, Iterator)):
        out.write("[")
        n = 0
        for n, item in enumerate(value, 1):
            out.write(("," if n > 1 else "") + pad)
            _write(item, out, depth + 1)
        out.write("\n" + " " * depth + "]" if n else "]")
    elif depth == 2 and isinstance(value, dict) and value:
        lines = [pad + _json(key) + ": " + _json(item) for key, item in sorted(value.items())]
        out.write("{" + ",".join(lines) + "\n" + " " * depth + "}")
    else:
        out.write(_json(value))
