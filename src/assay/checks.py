"""Rules across records: references resolve, ids are unique, depends_on has no cycle, ADR-011 holds,
every check has its verifier and every verifier its check.

``run(kb)`` returns every diagnostic of the knowledge base, reading problems included, sorted by
file and line.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterator

import networkx as nx

from assay.cache import CACHE_FROM
from assay.diagnostics import Diagnostic, capped
from assay.loader import KnowledgeBase, Loaded
from assay.model import SERIES, Claim, MetricSpec, Reported, Source, series, series_of
from assay.results import figure_problems, ledger_path, read_ledger
from assay.scaffold import placeholders
from assay.spans import fields, locate, uncovered
from assay.verifiers import Index, Verifier, scan


def run(kb: KnowledgeBase) -> list[Diagnostic]:
    """All diagnostics of ``kb``: per file, across records, and between records and verifiers.

    Sorted by file and line, at most ``PER_FILE`` of a file listed and the rest counted (``capped``).
    """
    found: list[Diagnostic] = [d for f in kb.files for d in f.diagnostics]
    found += list(_identity(kb))
    found += list(_references(kb))
    found += list(_cycles(kb))
    found += list(_compared_against(kb))
    found += list(_verifiers(kb))
    found += list(_uncited(kb))
    found += list(_assertions(kb))
    found += list(_metrics(kb))
    found += list(_placeholders(kb))
    found += list(_ledger(kb))
    return capped(set(found), {f.path: f.unlisted for f in kb.files if f.unlisted})


def _identity(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    first: dict[str, Loaded] = {}
    for f in kb.files:
        if f.data is None or not isinstance(f.data.get("id"), str):
            continue
        rid, stem = f.data["id"], f.path.rsplit("/", 1)[-1].removesuffix(".yaml")
        if series(rid) is None:
            continue  # a malformed id is a bad-id where it is written; the file goes by its stem (Loaded.id)
        if rid != stem:
            yield f.diag(("id",), "id-mismatch", f"id '{rid}' differs from the file name '{stem}.yaml'",
                         f"rename the file to {rid}.yaml or change the id")
        prefix = series(rid)
        if prefix and SERIES[prefix].folder != f.folder:
            yield f.diag(("id",), "wrong-folder", f"'{rid}' is a {prefix} record and belongs in {SERIES[prefix].folder}/")
        if rid in first:
            yield f.diag(("id",), "duplicate-id", f"id '{rid}' is also used by {first[rid].path}",
                         "give this record the next free id (assay new)")
        else:
            first[rid] = f


def _suggest(name: str, known: Collection[str]) -> str | None:
    """A 'did you mean' hint; it compares ``name`` with every known id, so only a fault may call it."""
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else None


def _ids_of(kb: KnowledgeBase, kind: str) -> set[str]:
    """Ids in use whose prefix names the series of ``kind`` (the record may be invalid)."""
    return {i for i in kb.by_id if (s := series_of(i)) is not None and s.kind == kind}


def _references(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    ids = set(kb.by_id)
    sources, decisions = _ids_of(kb, "source"), _ids_of(kb, "decision")
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


def _claim_references(f: Loaded, claim: Claim, ids: set[str], sources: set[str]) -> Iterator[Diagnostic]:
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


#: How many members of a depends_on knot its diagnostic names before it counts the rest.
KNOT_NAMES = 20


def _cycles(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """One diagnostic per knot of depends_on links (a strongly connected component of two or more claims).

    Listing every simple cycle instead grows exponentially: 10 claims that each rest on the other nine
    have over a million. The diagnostic names the knot's claims and its shortest cycle through the
    smallest id, and sits on that id's link which starts the cycle. A claim resting on itself alone is
    a self-relation, reported as such.
    """
    rests_on: dict[str, list[str]] = {
        cid: [r.target for r in claim.relations if r.type == "depends_on"] for cid, claim in kb.claims.items()
    }
    g = nx.DiGraph()
    g.add_nodes_from(rests_on)
    g.add_edges_from((cid, t) for cid, targets in rests_on.items() for t in targets if t in rests_on)
    for start, ring, members in _knots(g, rests_on):
        message = _knot_message("depends_on", ring, members, "claims that rest on one another")
        n = next(i for i, r in enumerate(kb.claims[start].relations) if r.type == "depends_on" and r.target == ring[1])
        yield kb.by_id[start].diag(("relations", n, "target"), "depends-on-cycle", message,
                                   "a claim cannot rest on itself; make one of these links 'supports'")


def _knots(g: nx.DiGraph, links: dict[str, list[str]]) -> Iterator[tuple[str, list[str], list[str]]]:
    """Each knot of ``g`` (a strongly connected component of two or more): its smallest id, the shortest
    cycle through it, and its members sorted."""
    for knot in nx.strongly_connected_components(g):
        if len(knot) >= 2:
            start = min(knot)
            yield start, _shortest_cycle(start, links, knot), sorted(knot)


def _knot_message(link: str, ring: list[str], members: list[str], what: str) -> str:
    """``<link> cycle: A -> B -> A``, and the knot's members when there are more than the cycle's."""
    message = f"{link} cycle: " + " -> ".join(ring)
    if len(members) > len(ring) - 1:
        more = f" and {len(members) - KNOT_NAMES} more" if len(members) > KNOT_NAMES else ""
        message += f", in a knot of {len(members)} {what}: " + ", ".join(members[:KNOT_NAMES]) + more
    return message


def _shortest_cycle(start: str, rests_on: dict[str, list[str]], knot: set[str]) -> list[str]:
    """The shortest cycle from ``start`` back to it within ``knot`` (breadth first, links in file order)."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        ahead = []
        for node in frontier:
            for target in rests_on[node]:
                if target == start and node != start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return path[::-1] + [start]
                if target in knot and target != start and target not in came_from:
                    came_from[target] = node
                    ahead.append(target)
        frontier = ahead
    raise AssertionError(f"{start} is in a knot but no cycle leads back to it")


def _order_key(source: Source) -> str:
    return source.date or str(source.year)


def _later(a: str, b: str) -> bool:
    """Whether date ``a`` is later than ``b``, compared at the precision both have ('2020' vs '2020-02': no)."""
    n = min(len(a), len(b))
    return a[:n] > b[:n]


def _compared_against(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """ADR-011: a source lists only comparisons it could have run, so the target is not later, not itself,
    and the comparison graph is acyclic.

    A link to a later source or to itself is reported where it is; what remains can still form a cycle
    among sources whose dates do not order them (the same year, or a year against a date in it): one
    diagnostic per strongly connected component, found in linear time.
    """
    sources = kb.sources
    earlier: dict[str, list[str]] = {}  # the links left once later and self links are reported
    for sid, source in sources.items():
        earlier[sid] = []
        for n, comp in enumerate(source.compared_against):
            target = sources.get(comp.source)
            if comp.source == sid:
                yield kb.by_id[sid].diag(("compared_against", n, "source"), "compared-against-self",
                                         f"{sid} is compared against itself",
                                         "remove the link; a source lists the other sources it compares itself with (ADR-011)")
            elif target is not None and _later(_order_key(target), _order_key(source)):
                yield kb.by_id[sid].diag(
                    ("compared_against", n, "source"), "compared-against-later",
                    f"{sid} ({_order_key(source)}) cannot have compared itself against the later "
                    f"{comp.source} ({_order_key(target)})",
                    f"file the link on {comp.source} instead, if it runs the comparison (ADR-011)",
                )
            elif target is not None:
                earlier[sid].append(comp.source)
    yield from _comparison_cycles(kb, earlier)


def _comparison_cycles(kb: KnowledgeBase, earlier: dict[str, list[str]]) -> Iterator[Diagnostic]:
    g = nx.DiGraph()
    g.add_edges_from((sid, t) for sid, targets in earlier.items() for t in targets)
    for start, ring, members in _knots(g, earlier):
        message = _knot_message("compared_against", ring, members, "sources compared against one another")
        dates = sorted({_order_key(kb.sources[s]) for s in members})
        n = next(i for i, c in enumerate(kb.sources[start].compared_against) if c.source == ring[1])
        yield kb.by_id[start].diag(
            ("compared_against", n, "source"), "compared-against-cycle",
            f"{message}; their dates ({', '.join(dates)}) do not order them",
            "give each source its date (YYYY-MM-DD) and keep each link only on the later source (ADR-011)",
        )


def _verifiers(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    tests = scan(kb.root, cache=len(kb.files) >= CACHE_FROM)
    for path, why in tests.unreadable.items():
        yield Diagnostic(path, 1, 1, "unreadable-file", f"{path} {why}",
                         "verifiers are regular files inside the knowledge base")
    claims = kb.claims
    yield from _duplicate_verifiers(tests, {check.verifier for claim in claims.values() for check in claim.checks})
    for cid, claim in claims.items():
        f = kb.by_id[cid]
        for n, check in enumerate(claim.checks):
            v = tests.get(check.verifier)
            if v is None and check.verifier.split("::")[0] in tests.unreadable:
                continue  # reported as unreadable-file, where the module is
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


def _duplicate_verifiers(tests: Index, named: set[str]) -> Iterator[Diagnostic]:
    """A check has one verifier: a second test marked for the same claim and check makes its result ambiguous.

    Reported at the test the check does not name (``named``: the verifiers the records name), else the later one.
    """
    first: dict[tuple[str, str], Verifier] = {}
    for v in sorted(tests.values(), key=lambda v: v.nodeid not in named):  # stable: file order otherwise
        if v.claim is None or v.check is None:
            continue
        other = first.setdefault((v.claim, v.check), v)
        if other is not v:
            yield Diagnostic(v.nodeid.split("::")[0], v.line, 1, "duplicate-verifier",
                             f"'{v.nodeid}' and '{other.nodeid}' are both marked claim({v.claim!r}, {v.check!r})",
                             "a check has one verifier: tie each test to its own check, or remove one")


def _uncited(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    cited = {c.source for claim in kb.claims.values() for c in claim.citations}
    cited |= {r.source for claim in kb.claims.values() for r in claim.reported}
    cited |= {c.source for s in kb.sources.values() for c in s.compared_against}
    for sid in kb.sources:
        if sid not in cited:
            yield kb.by_id[sid].diag(("id",), "uncited-source", f"no claim cites {sid}")


def _assertions(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """Every sentence in an assertion, every span in the text, every check and citation an assertion names real."""
    for cid, claim in kb.claims.items():
        f = kb.by_id[cid]
        if not claim.assertions:
            continue  # not cut yet: its status summarises its checks (assay.status.claim_verdict)
        yield from _assertion_fields(f, claim)
        for sentence in uncovered(claim):
            loc = ("statement",) if sentence.field == "statement" else ("conditions", int(sentence.field[11:-1]))
            yield f.diag(loc, "uncovered-sentence", f"no assertion of {cid} covers: {sentence.text!r}",
                         "quote it in an assertion's filed: list")
        for n, check in enumerate(claim.checks):
            if check.tier != "analytic" and not any(e.control for e in check.expect):
                yield f.diag(("checks", n, "expect"), "no-control", f"check '{check.id}' of {cid} marks no control",
                             "mark the expectation that must hold for a model without the effect: control: true")
        used = {e.check for a in claim.assertions for e in a.evidence}
        for n, check in enumerate(claim.checks):
            if check.id not in used:
                yield f.diag(("checks", n, "id"), "unused-check", f"check '{check.id}' is evidence for no assertion of {cid}",
                             "add it to an assertion's evidence with its stance (supports or refutes)")


def _assertion_fields(f: Loaded, claim: Claim) -> Iterator[Diagnostic]:
    checks = [c.id for c in claim.checks]
    for n, dup in _duplicates([a.id for a in claim.assertions]):
        yield f.diag(("assertions", n, "id"), "duplicate-assertion", f"assertion '{dup}' is listed twice")
    text = fields(claim)
    for n, a in enumerate(claim.assertions):
        for k, span in enumerate(a.filed):
            if locate(claim, span, text) is None:
                yield f.diag(("assertions", n, "filed", k), "span-not-in-text",
                             f"assertion '{a.id}': {span!r} is not in the statement or a condition of {claim.id}",
                             "copy the words exactly; an assertion quotes the filed text")
        for k, e in enumerate(a.evidence):
            if e.check not in checks:
                yield f.diag(("assertions", n, "evidence", k, "check"), "unknown-check",
                             f"assertion '{a.id}' names check '{e.check}', which {claim.id} does not have",
                             _suggest(e.check, checks))
                continue
            expected = [x.metric for x in claim.check(e.check).expect]
            for j, metric in enumerate(e.metrics):
                if metric not in expected:
                    yield f.diag(("assertions", n, "evidence", k, "metrics", j), "unknown-metric",
                                 f"assertion '{a.id}' reads metric '{metric}', which no expectation of check '{e.check}' names",
                                 _suggest(metric, expected) or f"its expectations name: {', '.join(expected)}")
        for k, number in enumerate(a.source.citations):
            if number > len(claim.citations):
                yield f.diag(("assertions", n, "source", "citations", k), "unknown-citation",
                             f"assertion '{a.id}' names citation {number}; {claim.id} has {len(claim.citations)}")


def _metrics(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """Every metric an expectation names is declared; a reported number stands beside one of its own kind only."""
    for cid, claim in kb.claims.items():
        f = kb.by_id[cid]
        reported = {r.id: r for r in claim.reported}
        for n, check in enumerate(claim.checks):
            declared = [m.name for m in check.metrics]
            for k, exp in enumerate(check.expect):
                spec = check.metric(exp.metric)
                if spec is None:
                    yield f.diag(("checks", n, "expect", k, "metric"), "undeclared-metric",
                                 f"check '{check.id}' of {cid} does not declare metric '{exp.metric}'",
                                 "add it under the check's metrics: with its unit and what it measures"
                                 + (f" (declared: {', '.join(declared)})" if declared else ""))
                elif exp.reported in reported and not comparable(spec, reported[exp.reported]):
                    r = reported[exp.reported]
                    yield f.diag(("checks", n, "expect", k, "reported"), "incomparable-reported",
                                 f"check '{check.id}': '{exp.metric}' ({_kind(spec.quantity, spec.unit)}) cannot stand beside "
                                 f"reported '{r.id}' ({_kind(r.quantity, r.unit)})",
                                 "link only a number of the same quantity in the same unit; otherwise drop reported: and the "
                                 "paper's number stays on the page as context")


def comparable(spec: MetricSpec, r: Reported) -> bool:
    """Whether our metric and a reported number measure the same quantity in the same unit."""
    return bool(spec.quantity) and spec.quantity == r.quantity and _unit_key(spec.unit) == _unit_key(r.unit)


def _unit_key(unit: str) -> str:
    return " ".join(unit.lower().split())


def _kind(quantity: str | None, unit: str) -> str:
    return f"{quantity or 'no quantity declared'}, in {unit}"


def _placeholders(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """Texts that `assay new` wrote and nobody replaced, looked for in the fields it writes them to."""
    where = placeholders()
    for f in kb.files:
        for loc, value in _at(f.data, where.fields.get(f.folder, ())):
            if " ".join(value.split()) in where.texts:
                yield f.diag(loc, "placeholder", f"'{_dotted(loc)}' still holds the text assay new wrote: {value!r}",
                             "replace it with what the source says")


def _at(data: object, paths: tuple[tuple, ...]) -> Iterator[tuple[tuple, str]]:
    """The string values at ``paths`` in ``data`` (``"*"`` in a path stands for every list index)."""
    for path in paths:
        todo: list[tuple[tuple, object]] = [((), data)]
        for part in path:
            nxt: list[tuple[tuple, object]] = []
            for loc, node in todo:
                if part == "*" and isinstance(node, list):
                    nxt += [(loc + (i,), v) for i, v in enumerate(node)]
                elif isinstance(node, dict) and part in node:
                    nxt.append((loc + (part,), node[part]))
            todo = nxt
        yield from ((loc, v) for loc, v in todo if isinstance(v, str))


def _dotted(loc: tuple) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(loc))


def _ledger(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """Ledger files that cannot be trusted (they count as errors), and results whose figures do not match."""
    ledger = read_ledger(kb.root)
    yield from ledger.diagnostics
    for key, result in ledger.results.items():
        if result.figures:
            for problem in figure_problems(kb.root, result):
                path = ledger_path(kb.root, *key).relative_to(kb.root).as_posix()
                yield Diagnostic(path, 1, 1, "ledger-figure", problem, "rerun the check; the page shows no figure until then")