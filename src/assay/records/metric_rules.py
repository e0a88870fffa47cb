"""The metrics each check declares against those its verifier records, before anything runs.

What a verifier records is read statically (``assay.records.metric_calls``), and only what that reading proves is
an error:

- a metric recorded with a ``unit=`` other than the one its check declares (``unit-mismatch``, at the unit);
- a declared metric that no name the verifier records can be: none read is it, and no name built at run time could
  be it (``unrecorded-metric``, at the declaration, naming the verifier's line and the recorded name nearest to it);

and two warnings say what it cannot prove: the recorded name nearest to such a missing metric, which the check
does not declare (``undeclared-recording``, at the call: a rename on one side, most likely), and, once per verifier,
declared metrics that only a name built at run time could be (``unread-metric-names``). A recorded metric that no
declaration names and that stands for no missing one is not reported: a check declares the metrics its expectations
read (``Check.metrics``), and a verifier may record more (a chance level, a spread) for the ledger and the notes.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from pathlib import Path

from assay import corpus
from assay.diagnostics import Diagnostic
from assay.records import verifiers
from assay.records.document import Loaded
from assay.records.knowledge_base import KnowledgeBase
from assay.records.metric_calls import Recorded
from assay.records.outline import CheckOutline

#: The claim and check a verifier test's marker ties it to, and the line of its ``def`` (plain, to load fast).
Tie = tuple[str | None, str | None, int]

#: How close (``difflib`` ratio) a recorded name must be to a missing declared one to be taken for it renamed.
RENAMED = 0.6


def recorded(root: Path, cache: bool = False) -> dict[str, tuple[Tie, Recorded]]:
    """Each ``test*`` function of ``verify/test_*.py`` under ``root`` by node id: the claim and check its marker ties
    it to (``assay.records.verifiers``) and its line, and what it records.

    Modules are read by the rule of ``assay.records.verifiers.scan``, which reports one it cannot read; a module that
    does not parse records nothing here (pytest reports it). ``cache``: take each module's reading from the cache
    that ``scan`` keeps (one parse of a module gives both), reading there those it lacks (``assay.corpus``).
    """
    out: dict[str, tuple[Tie, Recorded]] = {}
    for reading in verifiers.readings(root, cache).values():
        if isinstance(reading, str):
            continue  # unreadable: reported where the verifiers are indexed
        calls = reading.recorded()
        out.update({n: ((v.claim, v.check, v.line), calls[n.split("::")[1]]) for n, v in reading.tests.items()})
    return out


def diagnostics(kb: KnowledgeBase) -> Iterator[Diagnostic]:
    """Each check's declared metrics against what its verifier records, where the verifier is tied back to it.

    Reads each record's outline only: a record is thawed to place a diagnostic, never to find one."""
    tests = recorded(kb.root, cache=corpus.large(len(kb.files)))
    for cid, f in kb.claim_files.items():
        for n, check in enumerate(f.outline.checks):
            (claim, tied, line), r = tests.get(check.verifier, ((None, None, 0), None))
            if r is None or (claim, tied) != (cid, check.id):
                continue  # a missing or mistied verifier is reported as such (assay.records.across)
            yield from _check(f, n, check, r, line)


def _check(f: Loaded, n: int, check: CheckOutline, r: Recorded, test_line: int) -> Iterator[Diagnostic]:
    module, test = check.verifier.split("::")
    declared = {name: (k, unit) for k, (name, unit) in enumerate(check.metrics)}
    for call in r.calls:
        k, unit = declared.get(call.name, (None, None))
        if k is not None and call.unit is not None and call.unit != unit:
            yield Diagnostic(
                module,
                call.unit_line,
                call.unit_col,
                "unit-mismatch",
                f"'{test}' records metric '{call.name}' in '{call.unit}', but check '{check.id}' of {f.id} declares it "
                f"in '{unit}' ({_metrics_at(f, n, k, 'unit')})",
                "record it in the declared unit, or correct the declaration",
            )
    missing = [name for name in declared if name not in r.names]
    unsure = [name for name in missing if r.may_record(name)]  # a name built where the reading could not follow
    undeclared = {c.name: c for c in reversed(r.calls) if c.name not in declared}  # each name at its first call
    if unsure:
        yield _unread(f, n, check.id, (module, test, test_line), unsure, r)
    for name in (m for m in missing if m not in unsure):
        k = declared[name][0]
        near = difflib.get_close_matches(name, sorted(undeclared), n=1, cutoff=RENAMED)
        call = undeclared.get(near[0]) if near else None
        also = f"; it records '{call.name}' ({module}:{call.line}), which the check does not declare" if call else ""
        yield f.diag(
            ("checks", n, "metrics", k, "name"),
            "unrecorded-metric",
            f"check '{check.id}' declares metric '{name}', which its verifier '{test}' ({module}:{test_line}) never "
            f"records{_none_built(r)}{also}",
            f"rename one of the two to match, or record '{name}'" if call else "record it in the verifier, or remove it",
        )
        if call is not None:
            yield Diagnostic(
                module,
                call.line,
                call.col,
                "undeclared-recording",
                f"'{test}' records metric '{call.name}', which check '{check.id}' of {f.id} does not declare, and never "
                f"records '{name}', which it declares ({_metrics_at(f, n, k, 'name')}): was one of the two renamed?",
                "rename one of the two to match, or declare this one too",
            )


def _unread(f: Loaded, n: int, check: str, verifier: tuple[str, str, int], unsure: list[str], r: Recorded) -> Diagnostic:
    """The one warning of a verifier where names built at run time could be the declared ``unsure`` ones."""
    module, test, line = verifier
    at, why = r.unread[0]
    more = f" (and {len(r.unread) - 1} more place(s))" if len(r.unread) > 1 else ""
    shown = ", ".join(f"'{m}'" for m in unsure[:3]) + (f" and {len(unsure) - 3} more" if len(unsure) > 3 else "")
    hint = (
        f"a run tells (pytest verify --claim {f.id} --check {check}); names written as literals, or built from literal "
        "loops, are checked without one"
    )
    return Diagnostic(
        module,
        line,
        1,
        "unread-metric-names",
        f"cannot tell before a run whether '{test}' records {shown}, declared by check '{check}' of {f.id} "
        f"({_metrics_at(f, n)}): at line {at}, {why}{more}",
        hint,
    )


def _none_built(r: Recorded) -> str:
    """What proves a name unrecorded where some names are built at run time: none of them can be it."""
    if not r.unread:
        return ""
    lines = ", ".join(str(line) for line, _ in r.unread[:3]) + (", ..." if len(r.unread) > 3 else "")
    return f" (nor can any name it builds at run time, line {lines}, be it)"


def _metrics_at(f: Loaded, n: int, *below: int | str) -> str:
    """``path:line:col`` of where check ``n``'s ``metrics:`` stand in its record, or the field ``below`` them
    (``0, "unit"``): looked up only when a diagnostic names them."""
    line, col = f.where(("checks", n, "metrics", *below))
    return f"{f.path}:{line}:{col}"
