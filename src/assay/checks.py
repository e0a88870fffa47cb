"""Rules across records: references resolve, ids are unique, depends_on has no cycle, ADR-011 holds,
every check has its verifier and every verifier its check.

``run(kb)`` returns every diagnostic of the knowledge base, reading problems included, sorted by
file and line.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

import networkx as nx

from assay.diagnostics import Diagnostic
from assay.loader import KnowledgeBase, Loaded
from assay.model import SERIES, Claim, Source, series
from assay.results import FORMAT, read_ledger
from assay.verifiers import scan


def run(kb: KnowledgeBase) -> list[Diagnostic]:
    """All diagnostics of ``kb``: per file, across records, and between records and verifiers."""
    found: list[Diagnostic] = [d for f in kb.files for d in f.diagnostics]
    found += list(_identity(kb))
    found += list(_references(kb))
    found += list(_cycles(kb))
    found += list(_compared_against(kb))
    found += list(_verifiers(kb))
    found += list(_uncited(kb))
    found += list(_ledger(kb))
    return sorted(set(found))


def _identity(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    first: dict[str, Loaded] = {}
    for f in kb.files:
        if f.data is None or not isinstance(f.data.get("id"), str):
            continue
        rid, stem = f.data["id"], f.path.rsplit("/", 1)[-1].removesuffix(".yaml")
        if rid != stem:
            yield f.diag(("id",), "id-mismatch", f"id '{rid}' differs from the file name '{stem}.yaml'",
                         f"rename the file to {rid}.yaml or change the id")
        prefix = series(rid)
        if prefix and SERIES[prefix] != f.folder:
            yield f.diag(("id",), "wrong-folder", f"'{rid}' is a {prefix} record and belongs in {SERIES[prefix]}/")
        if rid in first:
            yield f.diag(("id",), "duplicate-id", f"id '{rid}' is also used by {first[rid].path}",
                         "give this record the next free id (assay new)")
        else:
            first[rid] = f


def _suggest(name: str, known: list[str]) -> str | None:
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else None


def _references(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    ids = list(kb.by_id)
    sources = [i for i in ids if i.startswith("LIT-")]
    decisions = [i for i in ids if i.startswith("ADR-")]
    for f in kb.files:
        record = f.record
        if isinstance(record, Claim):
            yield from _claim_references(f, record, ids, sources)
        elif isinstance(record, Source):
            for n, comp in enumerate(record.compared_against):
                if comp.source not in sources:
                    yield f.diag(("compared_against", n, "source"), "unknown-source",
                                 f"'{comp.source}' is not a source", _suggest(comp.source, sources))
                if comp.decision not in decisions:
                    yield f.diag(("compared_against", n, "decision"), "unknown-decision",
                                 f"'{comp.decision}' is not a decision", _suggest(comp.decision, decisions))


def _claim_references(f: Loaded, claim: Claim, ids: list[str], sources: list[str]) -> Iterator[Diagnostic]:
    for field in ("citations", "reported", "discrepancies"):
        for n, item in enumerate(getattr(claim, field)):
            if item.source not in sources:
                yield f.diag((field, n, "source"), "unknown-source", f"'{item.source}' is not a source",
                             _suggest(item.source, sources))
    for n, rel in enumerate(claim.relations):
        if rel.target == claim.id:
            yield f.diag(("relations", n, "target"), "self-relation", f"{claim.id} {rel.type} itself")
        elif rel.target not in ids:
            yield f.diag(("relations", n, "target"), "unknown-record", f"'{rel.target}' is not a record",
                         _suggest(rel.target, ids))
    reported = [r.id for r in claim.reported]
    for n, dup in _duplicates(reported):
        yield f.diag(("reported", n, "id"), "duplicate-reported", f"reported number '{dup}' is listed twice")
    for n, dup in _duplicates([c.id for c in claim.checks]):
        yield f.diag(("checks", n, "id"), "duplicate-check", f"check '{dup}' is listed twice")
    for n, check in enumerate(claim.checks):
        for k, exp in enumerate(check.expect):
            if exp.reported and exp.reported not in reported:
                yield f.diag(("checks", n, "expect", k, "reported"), "unknown-reported",
                             f"'{exp.reported}' is not a reported number of {claim.id}", _suggest(exp.reported, reported))


def _duplicates(values: list[str]) -> Iterator[tuple[int, str]]:
    seen: set[str] = set()
    for n, v in enumerate(values):
        if v in seen:
            yield n, v
        seen.add(v)


def _cycles(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    g = nx.DiGraph()
    for cid, claim in kb.claims.items():
        for rel in claim.relations:
            if rel.type == "depends_on":
                g.add_edge(cid, rel.target)
    for cycle in nx.simple_cycles(g):
        start = min(cycle)
        f = kb.by_id[start]
        ring = cycle[cycle.index(start):] + cycle[: cycle.index(start)] + [start]
        n = next(i for i, r in enumerate(kb.claims[start].relations) if r.type == "depends_on" and r.target == ring[1])
        yield f.diag(("relations", n, "target"), "depends-on-cycle", "depends_on cycle: " + " -> ".join(ring),
                     "a claim cannot rest on itself; make one of these links 'supports'")


def _order_key(source: Source) -> str:
    return source.date or str(source.year)


def _later(a: str, b: str) -> bool:
    """Whether date ``a`` is later than ``b``, compared at the precision both have ('2020' vs '2020-02': no)."""
    n = min(len(a), len(b))
    return a[:n] > b[:n]


def _compared_against(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """ADR-011: a source lists only comparisons it could have run, so the target is not later."""
    sources = kb.sources
    for sid, source in sources.items():
        for n, comp in enumerate(source.compared_against):
            target = sources.get(comp.source)
            if target is not None and _later(_order_key(target), _order_key(source)):
                yield kb.by_id[sid].diag(
                    ("compared_against", n, "source"), "compared-against-later",
                    f"{sid} ({_order_key(source)}) cannot have compared itself against the later "
                    f"{comp.source} ({_order_key(target)})",
                    f"file the link on {comp.source} instead, if it runs the comparison (ADR-011)",
                )


def _verifiers(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    tests = scan(kb.root)
    claims = kb.claims
    for cid, claim in claims.items():
        f = kb.by_id[cid]
        for n, check in enumerate(claim.checks):
            v = tests.get(check.verifier)
            if v is None:
                yield f.diag(("checks", n, "verifier"), "unknown-verifier", f"verifier '{check.verifier}' does not exist",
                             _suggest(check.verifier, list(tests)) or "write the test, or fix the path")
            elif (v.claim, v.check) != (cid, check.id):
                yield f.diag(("checks", n, "verifier"), "verifier-mismatch",
                             f"'{check.verifier}' is marked claim({v.claim!r}, {v.check!r}), not ({cid!r}, {check.id!r})")
    for v in tests.values():
        path = v.nodeid.split("::")[0]
        if v.claim is None:
            yield Diagnostic(path, v.line, 1, "untied-verifier", f"'{v.nodeid}' has no claim marker",
                             "add @pytest.mark.claim('SOTA-NNN', 'check-id')")
        elif v.claim not in claims:
            if v.claim not in kb.by_id:  # an invalid claim is reported where it is
                yield Diagnostic(path, v.line, 1, "orphan-verifier", f"'{v.nodeid}' is tied to '{v.claim}', which is not a claim",
                                 _suggest(v.claim, list(claims)))
        elif claims[v.claim].check(v.check or "") is None:
            yield Diagnostic(path, v.line, 1, "orphan-verifier",
                             f"'{v.nodeid}' is tied to check '{v.check}', which {v.claim} does not have",
                             _suggest(v.check or "", [c.id for c in claims[v.claim].checks]))


def _uncited(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    cited = {c.source for claim in kb.claims.values() for c in claim.citations}
    cited |= {r.source for claim in kb.claims.values() for r in claim.reported}
    cited |= {c.source for s in kb.sources.values() for c in s.compared_against}
    for sid in kb.sources:
        if sid not in cited:
            yield kb.by_id[sid].diag(("id",), "uncited-source", f"no claim cites {sid}")


def _ledger(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """Ledger files that cannot be read would otherwise pass silently as 'not run'."""
    for path in read_ledger(kb.root)[1]:
        yield Diagnostic(path, 1, 1, "bad-ledger", f"not a format-{FORMAT} result with claim, check, device and verdict",
                         "rerun the check with pytest verify, or delete the file")
