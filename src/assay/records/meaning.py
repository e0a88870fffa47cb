"""The rules that let a verdict mean what it says, within one claim record: an assertion is judged from its own
sentence, a report of what a paper says rests on its quote, and a threshold under words that state a size carries
that size. The status applies the same reading (``assay.status.vote``); the ledger's own rules (a counterpart that
is a constant, a seeded value with no spread) are in ``assay.ledger.challenges``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from assay.diagnostics import Diagnostic
from assay.model import Claim
from assay.records.document import Loaded

#: A size in words or figures: a percentage, a decimal, a multiple, an order of magnitude. Numbers that name a place
#: (Table 3, Figure 2, §3.3, Eq. 1, a year) are not sizes.
SIZE = re.compile(
    r"(?<![\w.§])(?<!Table )(?<!Figure )(?<!Fig\. )(?<!Section )(?<!Eq\. )(?<!Appendix )(?<!arXiv:)"
    r"(\d+(?:\.\d+)?\s*(?:%|x\b|×|times\b|-fold\b|points?\b|percentage points\b)|\d*\.\d+|\d+(?:\.\d+)?\s*(?:nats|bits)\b)"
    r"|\b(order of magnitude|orders of magnitude|twice|halve[sd]?|doubl(?:e|es|ed|ing))\b",
    re.IGNORECASE,
)


def states_size(text: str) -> str:
    """The first size ``text`` states (``'0.76'``, ``'an order of magnitude'``), or ''."""
    m = SIZE.search(text)
    return (m.group(1) or m.group(2)).strip() if m else ""


def diagnostics(f: Loaded, claim: Claim) -> Iterator[Diagnostic]:
    """Every diagnostic of these rules in the claim file ``f``."""
    yield from _reports(f, claim)
    yield from _other_sentences(f, claim)
    yield from _sizes(f, claim)


def _reports(f: Loaded, claim: Claim) -> Iterator[Diagnostic]:
    for i, a in enumerate(claim.assertions):
        if a.source.kind == "reported" and a.evidence:
            yield f.diag(
                ("assertions", i, "evidence"),
                "reported-with-evidence",
                f"assertion '{a.id}' reports what a source says, yet names check(s) "
                f"{', '.join(e.check for e in a.evidence)} as its evidence: a run cannot contradict a quotation",
                "rest it on its quote (cited_only: reports what the source says), or file what the world does as its own "
                "assertion with its source kind (quoted, paraphrased, not-in-source) and the checks",
            )


def _other_sentences(f: Loaded, claim: Claim) -> Iterator[Diagnostic]:
    named: dict[str, dict[str, str]] = {}  # check -> metric -> the assertion that names it as testing its sentence
    for a in claim.assertions:
        for e in a.evidence:
            for m in e.metrics:
                named.setdefault(e.check, {}).setdefault(m, a.id)
    for i, a in enumerate(claim.assertions):
        for j, e in enumerate(a.evidence):
            others = {m: owner for m, owner in named.get(e.check, {}).items() if owner != a.id}
            if not e.metrics and others:
                yield f.diag(
                    ("assertions", i, "evidence", j),
                    "reads-other-sentence",
                    f"assertion '{a.id}' reads all of check '{e.check}', whose expectations "
                    f"{', '.join(sorted(others))} test the sentence of {', '.join(sorted(set(others.values())))}: it is "
                    "not judged by those",
                    "name under metrics: the expectations that test its own says: (and because: why only those)",
                )


def _sizes(f: Loaded, claim: Claim) -> Iterator[Diagnostic]:
    quotes = {n: c.quote for n, c in enumerate(claim.citations, 1)}
    for n, check in enumerate(claim.checks):
        if check.role == "apparatus":
            continue
        readers = [(a, e) for a in claim.assertions for e in a.evidence if e.check == check.id]
        for k, exp in enumerate(check.expect):
            if exp.source_value is not None or exp.no_size_because or exp.control or exp.regime or exp.identity:
                continue
            for a, e in readers:
                if e.metrics and exp.metric not in e.metrics:
                    continue
                words = " ".join([*a.filed, a.says or "", *(quotes.get(c, "") for c in a.source.citations)])
                size = states_size(words)
                if size:
                    yield f.diag(
                        ("checks", n, "expect", k),
                        "size-unstated",
                        f"check '{check.id}': '{exp}' is read by assertion '{a.id}', whose words or citation state a "
                        f"size ({size!r}), but it carries no source_value",
                        "hold it to the source's size with source_value: {says, value, citation} (a weaker threshold "
                        "reads direction-only), or say why not with no_size_because:",
                    )
                    break
