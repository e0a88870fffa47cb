"""Rules across records: references resolve, ids are unique, depends_on has no cycle, ADR-011 holds,
every check has its verifier and every verifier its check, every quote is a passage of its source
(``assay.records.quotes``).

``run(kb)`` returns every diagnostic of the knowledge base, reading problems and the rules within each
record (``assay.records.within``, kept with its parse) included, sorted by file and line. The rules here read
what each record names (``Loaded.outline``), not the record: a record is thawed only to place a fault.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from assay import corpus, data_files
from assay.diagnostics import Diagnostic
from assay.model import series_of
from assay.records import quotes
from assay.records.document import Loaded
from assay.records.knowledge_base import KnowledgeBase, inside, named_first
from assay.records.verifiers import Index, Verifier, scan
from assay.records.within import suggest


def diagnostics(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """The diagnostics of ``kb``'s records: reading and the rules within each file (kept with its parse), the
    rules across records, and those between records and verifiers."""
    for f in kb.files:
        yield from f.diagnostics
        yield from f.rules
    yield from _identity(kb)
    yield from _references(kb)
    yield from _cycles(kb)
    yield from _compared_against(kb)
    yield from _verifiers(kb)
    yield from _uncited(kb)
    yield from _reads(kb)
    yield from quotes.diagnostics(kb)


def _identity(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """A second file with the id of a first (the id's shape, name and folder are ``assay.records.within``')."""
    first: dict[str, Loaded] = {}
    for f in named_first(kb.files):
        if not f.named:
            continue  # a malformed id is a bad-id where it is written; the file goes by its stem (Loaded.id)
        if f.id in first:
            yield f.diag(
                ("id",),
                "duplicate-id",
                f"id '{f.id}' is also used by {first[f.id].path}",
                "give this record the next free id (assay new)",
            )
        else:
            first[f.id] = f


def _ids_of(kb: KnowledgeBase, kind: str) -> set[str]:
    """Ids in use whose prefix names the series of ``kind`` (the record may be invalid)."""
    return {i for i in kb.by_id if (s := series_of(i)) is not None and s.kind == kind}


def _references(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    ids = set(kb.by_id)
    sources, decisions = _ids_of(kb, "source"), _ids_of(kb, "decision")
    for f in kb.files:
        outline = f.outline
        if outline is None:
            continue
        compared = [(("compared_against", n, "source"), source) for n, (source, _) in enumerate(outline.compared)]
        for loc, source in [*outline.sources, *compared]:
            if source not in sources:
                yield f.diag(loc, "unknown-source", f"'{source}' is not a source", suggest(source, sources))
        for n, (kind, target) in enumerate(outline.relations):
            if target not in ids and target != f.id:  # a link to itself is a self-relation (assay.records.within)
                yield f.diag(("relations", n, "target"), "unknown-record", f"'{target}' is not a record", suggest(target, ids))
        for n, (_, decision) in enumerate(outline.compared):
            if decision not in decisions:
                yield f.diag(
                    ("compared_against", n, "decision"),
                    "unknown-decision",
                    f"'{decision}' is not a decision",
                    suggest(decision, decisions),
                )


#: How many members of a depends_on knot its diagnostic names before it counts the rest.
KNOT_NAMES = 20


def _cycles(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """One diagnostic per knot of depends_on links (a strongly connected component of two or more claims).

    Listing every simple cycle instead grows exponentially: 10 claims that each rest on the other nine
    have over a million. The diagnostic names the knot's claims and its shortest cycle through the
    smallest id, and sits on that id's link which starts the cycle. A claim resting on itself alone is
    a self-relation, reported as such.
    """
    rests_on: dict[str, list[str]] = {cid: f.outline.depends_on() for cid, f in kb.claim_files.items()}
    for start, ring, members in _knots(rests_on):
        message = _knot_message("depends_on", ring, members, "claims that rest on one another")
        n = kb.claim_files[start].outline.relations.index(("depends_on", ring[1]))
        yield kb.by_id[start].diag(
            ("relations", n, "target"),
            "depends-on-cycle",
            message,
            "a claim cannot rest on itself; make one of these links 'supports'",
        )


def _knots(links: Mapping[str, list[str]]) -> Iterator[tuple[str, list[str], list[str]]]:
    """Each knot of the graph ``links`` draws (a strongly connected component of two or more; a link to an id
    that links nowhere is in none): its smallest id, the shortest cycle through it, and its members sorted."""
    for knot in strongly_connected(links):
        if len(knot) >= 2:
            start = min(knot)
            yield start, _shortest_cycle(start, links, knot), sorted(knot)


def strongly_connected(links: Mapping[str, list[str]]) -> Iterator[set[str]]:
    """The strongly connected components of the graph whose nodes are the keys of ``links`` and whose edges run
    from each key to those of its targets that are keys too: networkx's (iterative, so a chain of 50,000 claims is
    no recursion), as the site's graph layout finds them."""
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(links)
    graph.add_edges_from((source, t) for source, targets in links.items() for t in targets if t in links)
    return nx.strongly_connected_components(graph)


def _knot_message(link: str, ring: list[str], members: list[str], what: str) -> str:
    """``<link> cycle: A -> B -> A``, and the knot's members when there are more than the cycle's."""
    message = f"{link} cycle: " + " -> ".join(ring)
    if len(members) > len(ring) - 1:
        more = f" and {len(members) - KNOT_NAMES} more" if len(members) > KNOT_NAMES else ""
        message += f", in a knot of {len(members)} {what}: " + ", ".join(members[:KNOT_NAMES]) + more
    return message


def _shortest_cycle(start: str, rests_on: Mapping[str, list[str]], knot: set[str]) -> list[str]:
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
    sources = {sid: f.outline for sid, f in kb.source_files.items()}
    earlier: dict[str, list[str]] = {}  # the links left once later and self links are reported
    for sid, links in sources.items():
        earlier[sid] = []
        for n, (other, _) in enumerate(links.compared):
            target = sources.get(other)
            if other == sid:
                yield kb.by_id[sid].diag(
                    ("compared_against", n, "source"),
                    "compared-against-self",
                    f"{sid} is compared against itself",
                    "remove the link; a source lists the other sources it compares itself with (ADR-011)",
                )
            elif target is not None and _later(target.order, links.order):
                yield kb.by_id[sid].diag(
                    ("compared_against", n, "source"),
                    "compared-against-later",
                    f"{sid} ({links.order}) cannot have compared itself against the later {other} ({target.order})",
                    f"file the link on {other} instead, if it runs the comparison (ADR-011)",
                )
            elif target is not None:
                earlier[sid].append(other)
    yield from _comparison_cycles(kb, earlier)


def _comparison_cycles(kb: KnowledgeBase, earlier: dict[str, list[str]]) -> Iterator[Diagnostic]:
    for start, ring, members in _knots(earlier):
        message = _knot_message("compared_against", ring, members, "sources compared against one another")
        dates = sorted({kb.source_files[s].outline.order for s in members})
        n = next(i for i, (other, _) in enumerate(kb.source_files[start].outline.compared) if other == ring[1])
        yield kb.by_id[start].diag(
            ("compared_against", n, "source"),
            "compared-against-cycle",
            f"{message}; their dates ({', '.join(dates)}) do not order them",
            "give each source its date (YYYY-MM-DD) and keep each link only on the later source (ADR-011)",
        )


def _verifiers(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    tests = scan(kb.root, cache=corpus.large(len(kb.files)))
    for path, why in tests.unreadable.items():
        yield Diagnostic(path, 1, 1, "unreadable-file", f"{path} {why}", "verifiers are regular files inside the knowledge base")
    yield from tests.problems
    claims = {cid: [(c.id, c.verifier) for c in f.outline.checks] for cid, f in kb.claim_files.items()}
    refused = not inside(kb.root, "verify")  # one diagnostic says so where verify/ is (``knowledge_base.linked_out``)
    yield from _duplicate_verifiers(tests, {verifier for checks in claims.values() for _, verifier in checks})
    for cid, checks in claims.items():
        f = kb.by_id[cid]
        for n, (check, verifier) in enumerate(checks):
            v = tests.get(verifier)
            if v is None and (refused or verifier.split("::")[0] in tests.unreadable):
                continue  # reported as unreadable-file, where the module or its folder is
            if v is None:
                yield f.diag(
                    ("checks", n, "verifier"),
                    "unknown-verifier",
                    f"verifier '{verifier}' does not exist",
                    suggest(verifier, list(tests)) or "write the test, or fix the path",
                )
            elif (v.claim, v.check) != (cid, check):
                yield f.diag(
                    ("checks", n, "verifier"),
                    "verifier-mismatch",
                    f"'{verifier}' is marked claim({v.claim!r}, {v.check!r}), not ({cid!r}, {check!r})",
                )
    for v in tests.values():
        if v.parametrized and v.claim is not None:
            yield v.diag(
                "parametrized-verifier",
                f"'{v.nodeid}' is parametrized, so pytest would run it several times for the one check {v.claim}/{v.check}",
                "a check has one test: give the values to the verifier as its seeds (seeds: in the record), or make each "
                "its own check with its own test",
            )
        if v.claim is None:
            yield v.diag("untied-verifier", f"'{v.nodeid}' has no claim marker", "add @pytest.mark.claim('SOTA-NNN', 'check-id')")
        elif v.claim not in claims:
            if v.claim not in kb.by_id:  # an invalid claim is reported where it is
                yield v.diag(
                    "orphan-verifier",
                    f"'{v.nodeid}' is tied to '{v.claim}', which is not a claim",
                    suggest(v.claim, list(claims)),
                )
        elif all(check != (v.check or "") for check, _ in claims[v.claim]):
            yield v.diag(
                "orphan-verifier",
                f"'{v.nodeid}' is tied to check '{v.check}', which {v.claim} does not have",
                suggest(v.check or "", [check for check, _ in claims[v.claim]]),
            )


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
            yield v.diag(
                "duplicate-verifier",
                f"'{v.nodeid}' and '{other.nodeid}' are both marked claim({v.claim!r}, {v.check!r})",
                "a check has one verifier: tie each test to its own check, or remove one",
            )


def _reads(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """Every file a check ``reads`` is a regular file inside the knowledge base, or inside the installed package it
    names (``assay.data_files``): an input that cannot be read would be hashed as the same words on every run, and its
    results would never go stale (``pytest verify`` does not run the check)."""
    for cid, f in kb.claim_files.items():
        for n, check in enumerate(f.outline.checks if f.outline else ()):
            for k, name in enumerate(check.reads):
                why = data_files.problem(kb.root, name)
                if why is not None:
                    yield f.diag(
                        ("checks", n, "reads", k),
                        "unreadable-input",
                        f"check '{check.id}' of {cid} reads '{name}', which {why}",
                        _READS_HINT if data_files.package_of(name) is None else _PACKAGE_HINT,
                    )


_READS_HINT = "list under reads: the data files the verifier opens, relative to the root"
_PACKAGE_HINT = (
    "name a file the installed package holds, package:NAME/PATH (NAME as it is imported, PATH inside its folder), and "
    "install the package at the version requirements.lock pins"
)


def _uncited(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    cited = {
        source for f in kb.claim_files.values() for (field, *_), source in f.outline.sources if field in ("citations", "reported")
    }
    cited |= {source for f in kb.source_files.values() for source, _ in f.outline.compared}
    for sid in kb.source_files:
        if sid not in cited:
            yield kb.by_id[sid].diag(("id",), "uncited-source", f"no claim cites {sid}")
