"""The rules that let evidence fail, within one claim record: what the engine needs to compute whether a vote
could have gone the other way.

Counterparts are declared metrics of the check in the expectation's unit, and a supporting expectation names
one; a threshold weaker than the size the source states says why; apparatus (our own machinery) is never
evidence, and ``uses`` names apparatus; an assertion that reads part of a check argues it. The status applies
the same marks (``assay.status.vote``).
"""

from __future__ import annotations

from collections.abc import Iterator

from assay.diagnostics import Diagnostic
from assay.model import Claim
from assay.records.document import Loaded


def diagnostics(f: Loaded, claim: Claim) -> Iterator[Diagnostic]:
    """Every diagnostic of these rules in the claim file ``f``."""
    yield from _counterparts(f, claim)
    yield from _apparatus(f, claim)
    yield from _readings(f, claim)


def _counterparts(f: Loaded, claim: Claim) -> Iterator[Diagnostic]:
    read: dict[str, set[str] | None] = {}  # check -> the metrics supporting assertions read (None: all)
    for a in claim.assertions:
        for e in a.evidence:
            if e.stance == "supports":
                before = read.get(e.check, set())
                read[e.check] = None if before is None or not e.metrics else before | set(e.metrics)
    for n, check in enumerate(claim.checks):
        for k, exp in enumerate(check.expect):
            at = ("checks", n, "expect", k)
            spec = check.metric(exp.metric)
            for name in exp.against:
                other = check.metric(name)
                if name == exp.metric:
                    why = "is its own metric"
                elif other is None:
                    why = "is not declared"
                elif spec is not None and other.unit != spec.unit:
                    why = f"is in {other.unit!r}, not {spec.unit!r}"
                else:
                    continue
                yield f.diag(
                    (*at, "against"),
                    "unknown-counterpart",
                    f"check '{check.id}': counterpart '{name}' of '{exp.metric}' {why}",
                    "a counterpart is the same statistic, in the same unit, measured in the same run on a condition "
                    "where the comparison must not hold; declare it under the check's metrics:",
                )
            reads = read.get(check.id, set())
            voting = check.tier != "analytic" and check.role != "apparatus" and not exp.against
            voting = voting and not (exp.identity or exp.regime)  # neither votes (assay.votes)
            if voting and exp.control and check.id in read:
                yield f.diag(
                    at,
                    "uncountered-control",
                    f"check '{check.id}': control '{exp}' names no counterpart, so nothing shows that the model with "
                    "the effect would fail it",
                    "name under against: the same statistic measured on the model with the effect, recorded in the same run",
                )
            elif voting and (reads is None or exp.metric in reads):
                yield f.diag(
                    at,
                    "unchallenged",
                    f"check '{check.id}': '{exp}' names no counterpart, so it votes for nothing",
                    "name under against: the metric of the model without the effect (for a control: with it), "
                    "recorded in the same run",
                )
            if exp.source_value is not None:
                if exp.weaker_than_source() and not exp.source_value.weaker_because:
                    yield f.diag(
                        (*at, "source_value"),
                        "weaker-than-source",
                        f"check '{check.id}': '{exp}' asks less than the source's "
                        f"{exp.source_value.value:g} ({exp.source_value.says})",
                        "hold the threshold to the source's size, or say why it is weaker under weaker_because: "
                        "(the assertion then reads at best direction-only)",
                    )
                if exp.source_value.citation > len(claim.citations):
                    yield f.diag(
                        (*at, "source_value", "citation"),
                        "bad-value",
                        f"check '{check.id}': source_value cites citation {exp.source_value.citation}, but {claim.id} "
                        f"has {len(claim.citations)}",
                        "number the citation that states the size (1 is the first)",
                    )


def _apparatus(f: Loaded, claim: Claim) -> Iterator[Diagnostic]:
    roles = {c.id: c.role for c in claim.checks}
    for n, check in enumerate(claim.checks):
        for k, used in enumerate(check.uses):
            if roles.get(used) != "apparatus":
                yield f.diag(
                    ("checks", n, "uses", k),
                    "unknown-apparatus",
                    f"check '{check.id}' uses '{used}', which is "
                    + ("not a check of " + claim.id if used not in roles else "not marked role: apparatus"),
                    "uses: names the apparatus checks (role: apparatus) whose machinery this check runs on",
                )
    for i, a in enumerate(claim.assertions):
        for j, e in enumerate(a.evidence):
            if roles.get(e.check) == "apparatus":
                yield f.diag(
                    ("assertions", i, "evidence", j, "check"),
                    "apparatus-evidence",
                    f"assertion '{a.id}' names '{e.check}' as evidence, but it is apparatus (our own machinery)",
                    "cite the checks that use the machinery (uses:); apparatus votes for no assertion",
                )


def _readings(f: Loaded, claim: Claim) -> Iterator[Diagnostic]:
    expected = {c.id: {e.metric for e in c.expect} for c in claim.checks}
    for i, a in enumerate(claim.assertions):
        for j, e in enumerate(a.evidence):
            named = expected.get(e.check, set())
            unread = named - set(e.metrics)
            if e.metrics and unread and set(e.metrics) <= named and not e.because:  # an unknown metric is its own fault
                yield f.diag(
                    ("assertions", i, "evidence", j, "metrics"),
                    "unargued-subset",
                    f"assertion '{a.id}' reads only {', '.join(e.metrics)} of check '{e.check}', not {', '.join(sorted(unread))}",
                    "say why under because:; the page lists the unread expectations beside it with their outcome",
                )
