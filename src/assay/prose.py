"""Numbers in prose are read from the ledger: a record's prose (an assertion's `says:` and `refined`, the claim's
`refined`, a check's `note` and `known_failing`) writes a measured number as a reference, rendered with its value
wherever the text is shown, so that a rerun that changes the value changes the prose with it.

- ``{CHECK.METRIC}``: the metric as the check's result holds it (the cpu result first): its mean and, over several
  seeds, the 95 % interval of the mean and the number of seeds (``0.0059 [-0.014, 0.026; 5 seeds]``);
- ``{reported.ID}``: a number the claim's sources report, with its unit;
- ``{source: 0.76}``: a literal number from elsewhere (a source's figure the record does not keep as `reported`);
  ``{pilot: 0.23}``: one measured on pilot seeds (``pytest verify --measure``) before the expectations were fixed.

A reference to a check, metric or reported number the record does not hold, or to a metric a check's result lacks,
is an error (``unknown-reference``; a check with no result yet shows the reference as written); a literal decimal
that matches none of the claim's measured, reported or threshold values and is not marked is a warning
(``number-not-in-ledger``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator

from assay.diagnostics import Diagnostic
from assay.ledger.result import Result
from assay.model import Claim
from assay.records.outline import prose as fields
from assay.statistics import mean_interval

REFERENCE = re.compile(
    r"\{(?:reported\.(?P<reported>[a-z0-9-]+)|(?P<check>[a-z0-9-]+)\.(?P<metric>[a-z][a-z0-9_]*)|(?:source|pilot):\s*(?P<lit>[^{}]+))\}"
)
#: A literal decimal in prose (integers are counts of seeds, steps, layers: left alone; §3.1 is a section).
DECIMAL = re.compile(r"(?<![\w.{§])[-−]?\d+\.\d+(?!\w|\.\d)")  # "0.03." ends a sentence; "1.2.3" is a version


def render(text: str, claim: Claim, results: dict[str, Result]) -> str:
    """``text`` with each reference replaced by its value (``results``: the claim's results by check, one device)."""
    if "{" not in text:
        return text

    def one(m: re.Match) -> str:
        value = _value(m, claim, results)
        return value if value is not None else m.group(0)

    return REFERENCE.sub(one, text)


def rendered(text: str | None, claim: Claim, states: Iterable) -> str | None:
    """``render`` against a claim's check states (``assay.status.CheckState``: their cpu results first)."""
    if not text:
        return text
    results: dict[str, Result] = {}
    for st in sorted(states, key=lambda st: st.device != "cpu"):
        if st.result is not None and st.result.measured:
            results.setdefault(st.check, st.result)
    return render(text, claim, results)


def _value(m: re.Match, claim: Claim, results: dict[str, Result]) -> str | None:
    if m["lit"] is not None:
        return m["lit"].strip()
    if m["reported"] is not None:
        r = next((r for r in claim.reported if r.id == m["reported"]), None)
        return None if r is None else r.shown.replace(" %", " %")
    result = results.get(m["check"])
    metric = result.metrics.get(m["metric"]) if result is not None else None
    if metric is None:
        return None
    check = claim.check(m["check"])
    spec = check.metric(m["metric"]) if check is not None else None
    named = spec.unit if spec is not None else metric.unit
    unit = f" {named}" if named and named not in ("fraction", "ratio") else ""
    seeds = list(metric.seeds)
    if len(seeds) < 2:
        return f"{_num(metric.value)}{unit}"
    low, high = mean_interval(seeds, 0.95)
    return f"{_num(metric.value)}{unit} [{_num(low)}, {_num(high)}; {len(seeds)} seeds]"  # the mean, its 95 % interval


def _num(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


def by_check(claim: Claim, get) -> dict[str, Result]:
    """The claim's result per check, the cpu one first (``get``: the ledger's ``get``)."""
    out = {}
    for c in claim.checks:
        for d in sorted(c.devices, key=lambda d: d != "cpu"):
            r = get((claim.id, c.id, d))
            if r is not None and r.measured:
                out[c.id] = r
                break
    return out


def of_claim(cid: str, f, ledger) -> Iterator[Diagnostic]:
    """``unknown-reference`` and ``number-not-in-ledger`` in the prose of claim ``cid`` (its file ``f``)."""
    if not f.outline.prose:
        return  # neither the record nor a result is looked at
    claim = f.record
    results = by_check(claim, ledger.get)
    known = _known(claim, results.values())
    for at, text in fields(claim):
        for m in REFERENCE.finditer(text):
            unrun = m["check"] is not None and m["check"] not in results and not _undeclared(m, claim)
            if _value(m, claim, results) is None and not unrun:  # a check not run yet: shown as written till then
                yield f.diag(
                    at,
                    "unknown-reference",
                    f"{m.group(0)} names {_what(m)} that {'the record' if _undeclared(m, claim) else 'the ledger'} does not hold",
                    "write {CHECK.METRIC} for a metric a check's result holds, {reported.ID} for a reported number",
                )
        bare = REFERENCE.sub(" ", text)
        for m in DECIMAL.finditer(bare):
            if not _matches(m.group(0), known):
                yield f.diag(
                    at,
                    "number-not-in-ledger",
                    f"{m.group(0)} in the {at[-1].replace('_', ' ')} matches no value the ledger or the record holds "
                    "for this claim: a number typed by hand drifts from the measurement",
                    "write it as a reference ({CHECK.METRIC}, {reported.ID}), or mark a number from elsewhere as {source: N}",
                )
                break  # one a field: the rest are of the same text


def _what(m: re.Match) -> str:
    return f"reported number '{m['reported']}'" if m["reported"] else f"metric '{m['metric']}' of check '{m['check']}'"


def _undeclared(m: re.Match, claim: Claim) -> bool:
    if m["reported"]:
        return True
    check = claim.check(m["check"])
    return check is None or (check.metrics and check.metric(m["metric"]) is None)


def _known(claim: Claim, results: Iterable[Result]) -> list[float]:
    """Every number a prose literal may be a rounding of: measured (values, seeds, intervals), reported, thresholds."""
    out = [r.value for r in claim.reported]
    for c in claim.checks:
        for e in c.expect:
            out += [e.value, *([e.tol] if e.tol is not None else []), *([e.source_value.value] if e.source_value else [])]
    for r in results:
        for m in r.metrics.values():
            out += [m.value, *m.seeds]
            if len(m.seeds) >= 2:
                out += list(mean_interval(list(m.seeds), 0.95))
        for e in r.expectation:
            out += [e.measured, *(e.interval or ())]
    return [x for x in out if math.isfinite(x)]


def _matches(literal: str, known: list[float]) -> bool:
    """Whether ``literal`` is one of ``known`` rounded to its written places (or a fraction written as a percentage)."""
    text = literal.replace("−", "-")
    places = len(text.split(".")[1])
    x, half = float(text), 0.5 * 10.0**-places + 1e-12
    return any(abs(abs(k) - abs(x)) <= half or abs(abs(100 * k) - abs(x)) <= half for k in known)
