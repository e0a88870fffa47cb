"""Rules within one record: its id matches its name and folder, no placeholder text is left, its references
within itself resolve, its assertions cover its text and name its checks, its metrics are declared.

A rule here needs the record file alone, so its diagnostics are made once per change of the file and kept with
its parse (``assay.corpus``).
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable, Iterator

from assay.diagnostics import Diagnostic
from assay.model import SERIES, Claim, series
from assay.records import challenge, meaning
from assay.records.document import Loaded
from assay.records.formula_limits import BOUNDED_HINT, unbounded
from assay.records.placeholders import placeholders, scaffolded
from assay.records.spans import fields, locate, normalise, overlap, uncovered


def suggest(name: str, known: Collection[str]) -> str | None:
    """A 'did you mean' hint; it compares ``name`` with every known id, so only a fault may call it."""
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else None


def local(f: Loaded) -> list[Diagnostic]:
    """Every diagnostic of the rules within the record file ``f``."""
    found = [*_identity(f), *_placeholders(f), *_formulas(f.data, (), f)]
    if isinstance(f.record, Claim):
        for rules in (_claim_references, _assertions, _metrics, _scaffold_thresholds, _tested_words):
            found += rules(f, f.record)
        found += [*challenge.diagnostics(f, f.record), *meaning.diagnostics(f, f.record)]
    return found


def _identity(f: Loaded) -> Iterator[Diagnostic]:
    if f.data is None or not isinstance(f.data.get("id"), str):
        return
    rid, stem = f.data["id"], f.path.rsplit("/", 1)[-1].removesuffix(".yaml")
    prefix = series(rid)
    if prefix is None:
        return  # a malformed id is a bad-id where it is written; the file goes by its stem (Loaded.id)
    if rid != stem:
        yield f.diag(
            ("id",),
            "id-mismatch",
            f"id '{rid}' differs from the file name '{stem}.yaml'",
            f"rename the file to {rid}.yaml or change the id",
        )
    if SERIES[prefix].folder != f.folder:
        yield f.diag(("id",), "wrong-folder", f"'{rid}' is a {prefix} record and belongs in {SERIES[prefix].folder}/")


def _formulas(node: object, loc: tuple, f: Loaded) -> Iterator[Diagnostic]:
    """Each formula of the record's text that asks KaTeX for more than its place on the page
    (``assay.records.formula_limits``)."""
    if isinstance(node, str):
        for problem in unbounded(node) if "\\" in node else ():
            yield f.diag(loc, "unbounded-formula", f"{dotted(loc)}: {problem}", BOUNDED_HINT)
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _formulas(value, (*loc, key), f)
    elif isinstance(node, list):
        for n, value in enumerate(node):
            yield from _formulas(value, (*loc, n), f)


def _claim_references(f: Loaded, claim: Claim) -> Iterator[Diagnostic]:
    """The references a claim makes within itself (those to other records are ``assay.records.across``')."""
    for n, rel in enumerate(claim.relations):
        if rel.target == claim.id:
            yield f.diag(("relations", n, "target"), "self-relation", f"{claim.id} {rel.type} itself")
    reported = [r.id for r in claim.reported]
    for n, dup in duplicates(reported):
        yield f.diag(("reported", n, "id"), "duplicate-reported", f"reported number '{dup}' is listed twice")
    for n, dup in duplicates([c.id for c in claim.checks]):
        yield f.diag(("checks", n, "id"), "duplicate-check", f"check '{dup}' is listed twice")
    for n, check in enumerate(claim.checks):
        for k, exp in enumerate(check.expect):
            if exp.reported and exp.reported not in reported:
                yield f.diag(
                    ("checks", n, "expect", k, "reported"),
                    "unknown-reported",
                    f"'{exp.reported}' is not a reported number of {claim.id}",
                    suggest(exp.reported, reported),
                )


def duplicates(values: list[str]) -> Iterator[tuple[int, str]]:
    seen: set[str] = set()
    for n, v in enumerate(values):
        if v in seen:
            yield n, v
        seen.add(v)


def _assertions(f: Loaded, claim: Claim) -> Iterator[Diagnostic]:
    """Every sentence in an assertion, every span in the text, every check and citation an assertion names real."""
    cid = claim.id
    if not claim.assertions:
        return  # not cut yet: its status summarises its checks (assay.status.claim_verdict)
    yield from _assertion_fields(f, claim)
    for sentence in uncovered(claim):
        loc = ("statement",) if sentence.field == "statement" else ("conditions", int(sentence.field[11:-1]))
        yield f.diag(
            loc,
            "uncovered-sentence",
            f"no assertion of {cid} covers: {sentence.text!r}",
            "quote it in an assertion's filed: list",
        )
    for n, check in enumerate(claim.checks):
        if check.tier != "analytic" and not any(e.control for e in check.expect):
            yield f.diag(
                ("checks", n, "expect"),
                "no-control",
                f"check '{check.id}' of {cid} marks no control",
                "mark the expectation that must hold for a model without the effect: control: true",
            )
    used = {e.check for a in claim.assertions for e in a.evidence}
    for n, check in enumerate(claim.checks):
        if check.id not in used and check.role != "apparatus":  # apparatus is evidence for nothing, by design
            yield f.diag(
                ("checks", n, "id"),
                "unused-check",
                f"check '{check.id}' is evidence for no assertion of {cid}",
                "add it to an assertion's evidence with its stance (supports or refutes)",
            )


def _assertion_fields(f: Loaded, claim: Claim) -> Iterator[Diagnostic]:
    checks = [c.id for c in claim.checks]
    for n, dup in duplicates([a.id for a in claim.assertions]):
        yield f.diag(("assertions", n, "id"), "duplicate-assertion", f"assertion '{dup}' is listed twice")
    text = fields(claim)
    for n, a in enumerate(claim.assertions):
        for k, span in enumerate(a.filed):
            if locate(claim, span, text) is None:
                yield f.diag(
                    ("assertions", n, "filed", k),
                    "span-not-in-text",
                    f"assertion '{a.id}': {span!r} is not in the statement or a condition of {claim.id}",
                    "copy the words exactly; an assertion quotes the filed text",
                )
        for k, e in enumerate(a.evidence):
            if e.check not in checks:
                yield f.diag(
                    ("assertions", n, "evidence", k, "check"),
                    "unknown-check",
                    f"assertion '{a.id}' names check '{e.check}', which {claim.id} does not have",
                    suggest(e.check, checks),
                )
                continue
            expected = [x.metric for x in claim.check(e.check).expect]
            for j, metric in enumerate(e.metrics):
                if metric not in expected:
                    yield f.diag(
                        ("assertions", n, "evidence", k, "metrics", j),
                        "unknown-metric",
                        f"assertion '{a.id}' reads metric '{metric}', which no expectation of check '{e.check}' names",
                        suggest(metric, expected) or f"its expectations name: {', '.join(expected)}",
                    )
        for k, number in enumerate(a.source.citations):
            if number > len(claim.citations):
                yield f.diag(
                    ("assertions", n, "source", "citations", k),
                    "unknown-citation",
                    f"assertion '{a.id}' names citation {number}; {claim.id} has {len(claim.citations)}",
                )


def _metrics(f: Loaded, claim: Claim) -> Iterator[Diagnostic]:
    """Every metric an expectation names is declared; a reported number stands beside one of its own kind only."""
    cid = claim.id
    reported = {r.id: r for r in claim.reported}
    for n, check in enumerate(claim.checks):
        declared = [m.name for m in check.metrics]
        for k, exp in enumerate(check.expect):
            spec = check.metric(exp.metric)
            if spec is None:
                yield f.diag(
                    ("checks", n, "expect", k, "metric"),
                    "undeclared-metric",
                    f"check '{check.id}' of {cid} does not declare metric '{exp.metric}'",
                    "add it under the check's metrics: with its unit and what it measures"
                    + (f" (declared: {', '.join(declared)})" if declared else ""),
                )
            elif (r := reported.get(exp.reported)) is not None and not r.measured_by(spec):
                yield f.diag(
                    ("checks", n, "expect", k, "reported"),
                    "incomparable-reported",
                    f"check '{check.id}': '{exp.metric}' ({_kind(spec.quantity, spec.unit)}) cannot stand beside "
                    f"reported '{r.id}' ({_kind(r.quantity, r.unit)})",
                    "link only a number of the same quantity in the same unit; otherwise drop reported: and the "
                    "paper's number stays on the page as context",
                )


def _scaffold_thresholds(f: Loaded, claim: Claim) -> Iterator[Diagnostic]:
    """An expectation still comparing what ``assay new`` wrote: its metric name, or its threshold, which is the value
    the scaffold wrote on a line that still carries its mark (``placeholders.THRESHOLD_MARK``). Provenance, not the
    shape: a comparison turned round, made a control or a regime, given other counterparts is still the stand-in,
    and a 0.5 an author measured and wrote without the mark is not."""
    stand_ins = scaffolded()
    for n, check in enumerate(claim.checks):
        for k, exp in enumerate(check.expect):
            left = [f"the metric name '{exp.metric}'"] if exp.metric in stand_ins.metrics else []
            if exp.value in stand_ins.values and f.marked:  # where it is written is looked up only then
                line, col = f.where(("checks", n, "expect", k, "value"))
                if f.marked.get(line, 0) > col:
                    left.append(f"the threshold {exp.value:g}")
            if left:
                yield f.diag(
                    ("checks", n, "expect", k, "value" if len(left) > 1 or "threshold" in left[0] else "metric"),
                    "scaffold-threshold",
                    f"check '{check.id}': '{exp}' keeps {' and '.join(left)} as assay new wrote it",
                    f"measure on pilot seeds (pytest verify --measure --claim {claim.id} --check {check.id}), name the "
                    "metric for what it measures, set the threshold from the spread and the source's size, and delete "
                    "the line's '# assay new:' mark",
                )


def _tested_words(f: Loaded, claim: Claim) -> Iterator[Diagnostic]:
    """A check's ``tests:`` that quotes the claim's words (or an assertion's ``says:``) that no assertion reading the
    check quotes (or says). A ``tests:`` in words of its own is not compared: it restates, it does not point."""
    text = fields(claim)
    says = {normalise(a.says): a.id for a in claim.assertions if a.says}
    for n, check in enumerate(claim.checks):
        readers = [a for a in claim.assertions if any(e.check == check.id for e in a.evidence)]
        words = normalise(check.tests)
        where, sayer = locate(claim, words, text), says.get(words)
        if not readers or (where is None and sayer is None) or sayer in {a.id for a in readers}:
            continue
        spans = [locate(claim, span, text) for a in readers for span in a.filed]
        if where is not None and any(s and overlap(s, where) for s in spans):
            continue
        owner = f"the says: of assertion '{sayer}'" if sayer else f"words of {claim.id}'s text"
        yield f.diag(
            ("checks", n, "tests"),
            "tests-not-read",
            f"check '{check.id}' tests {words!r}, {owner}, but no assertion that reads the check "
            f"({', '.join(a.id for a in readers)}) quotes or says them",
            "make tests: the words (of filed:, or the says:) of an assertion that names the check as evidence, or name "
            "the check in the evidence of the assertion these words belong to",
        )


def _kind(quantity: str | None, unit: str) -> str:
    return f"{quantity or 'no quantity declared'}, in {unit}"


def _placeholders(f: Loaded) -> Iterator[Diagnostic]:
    """Texts that `assay new` wrote and nobody replaced, looked for in the fields it writes them to."""
    where = placeholders()
    found: list[tuple[int, tuple, str]] = []
    _find(f.data, where.tries.get(f.folder, {}), (), where.texts, found)
    for _, loc, value in sorted(found, key=lambda x: x[0]):  # field by field, as the fields are listed
        yield f.diag(
            loc,
            "placeholder",
            f"'{dotted(loc)}' still holds the text assay new wrote: {value!r}",
            "replace it with what the check measures" if loc[0] == "checks" else "replace it with what the source says",
        )


def _find(node: object, trie: dict, loc: tuple, texts: frozenset[str], out: list[tuple[int, tuple, str]]) -> None:
    """Each string at a field of ``trie`` (``Placeholders.tries``) below ``node`` whose words are one of ``texts``,
    with the field's number and its place: one walk over the fields that share a beginning (``checks[*]``)."""
    for part, below in trie.items():
        if part is None:
            continue
        if part == "*":
            children: Iterable[tuple[object, object]] = enumerate(node) if isinstance(node, list) else ()
        elif isinstance(node, dict) and part in node:
            children = ((part, node[part]),)
        else:
            continue
        end = below.get(None)
        for key, child in children:
            if isinstance(child, str):
                if end is not None and " ".join(child.split()) in texts:
                    out.append((end, loc + (key,), child))
            elif isinstance(child, (dict, list)):
                _find(child, below, loc + (key,), texts, out)


def dotted(loc: tuple) -> str:
    """A field path as a reader writes it: ``checks[0].expect[1].value``."""
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(loc))
