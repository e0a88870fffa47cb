"""One check's run as it travels to the controller, and the ledger result it makes.

Each phase of a verifier's test (setup, call) becomes one typed ``RunReport``, sent in pytest's
``user_properties`` (they cross pytest-xdist's workers); the controller turns a check's reports into its
``Result``. What a phase came to is read from the exception it raised (``classify``), never from pytest's
message text, and an error is described by the verifier's own frame, with no engine frames or paths.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from assay.diagnostics import shortened
from assay.evidence.judge import (
    CheckTimeout,
    ExpectationInconclusive,
    ExpectationNotMet,
    ExpectationOutOfRegime,
    OutcomeKind,
    PhaseOutcome,
    verdict_of,
)
from assay.evidence.recorder import Evidence
from assay.experiment import Check
from assay.fingerprints import sha256
from assay.ledger import merge, store
from assay.ledger.fresh import fresh_result
from assay.ledger.inputs import InputParts
from assay.ledger.layout import figure_file
from assay.ledger.messages import first_line
from assay.ledger.result import Environment, ErrorKind, Evaluated, Figure, Metric, Result, Settling, timestamp
from assay.ledger.store import LedgerProblem
from assay.model import Claim

#: The most characters of a message a result keeps.
MESSAGE_MAX = 2000
#: A message as a result keeps it: at most MESSAGE_MAX characters, cut with '…'.
clip = functools.partial(shortened, width=MESSAGE_MAX, mark="…")
#: The folder of Assay's code, whose frames an error's description leaves out.
ENGINE = Path(__file__).resolve().parents[1]


#: The ``user_properties`` key under which a phase report travels.
PROPERTY = "assay"


class RunReport(BaseModel):
    """What the process that ran one phase of a check sends to the controller."""

    model_config = ConfigDict(extra="forbid")

    claim: str
    check: str
    device: str
    tier: str
    when: str
    outcome: OutcomeKind
    message: str = ""
    metrics: dict[str, Metric] = {}
    expectation: list[Evaluated] = []
    figures: dict[str, str] = {}  # name -> SVG
    captions: dict[str, str] = {}
    notes: list[str] = []
    parts: dict[str, str]
    environment: Environment | None = None
    cpu_s: float | None = None
    peak_memory_mb: float | None = None
    seeds_used: list[int] = []

    def property(self) -> tuple[str, str]:
        """The ``user_properties`` entry that carries this report to the controller."""
        return PROPERTY, self.model_dump_json()

    @classmethod
    def sent_in(cls, properties: list[tuple[str, object]]) -> RunReport | None:
        """The report a test report's ``user_properties`` carry; None when there is none or it is not one."""
        sent = next((value for key, value in properties if key == PROPERTY), None)
        try:
            return cls.model_validate_json(sent) if isinstance(sent, str) else None
        except ValidationError:
            return None


def phase_report(
    claim: Claim,
    check: Check,
    device: str,
    parts: dict[str, str],
    outcome: PhaseOutcome,
    recorded: tuple[Evidence | None, list[Evaluated], dict[str, Any]],
) -> RunReport:
    """The typed report of one phase (``outcome.when``) of ``check``'s run on ``device`` with inputs ``parts``; what
    was ``recorded``: the verifier's evidence, its expectation as evaluated, and what the run cost (CPU, memory).
    Whatever the verifier left behind, this never raises."""
    evidence, evaluated, measured = recorded
    when = outcome.when
    base = {"claim": claim.id, "check": check.id, "device": device, "tier": check.tier, "when": when, "parts": parts}
    if when == "setup":
        return RunReport(**base, outcome=outcome.kind, message=outcome.message)
    ev = evidence or Evidence()
    try:
        from assay.ledger.environment import capture  # imports torch: only where a verifier ran

        return RunReport(
            **base,
            outcome=outcome.kind,
            message=outcome.message,
            metrics={k: Metric(value=v, unit=_unit(check, k, ev), seeds=ev.seeds.get(k, [])) for k, v in ev.metrics.items()},
            expectation=evaluated,
            figures=dict(ev.figures),
            captions=dict(ev.captions),
            notes=[str(n) for n in ev.notes],
            environment=capture(device).model_copy(update={"seed": ev.seed}),
            seeds_used=list(ev.seeds_used),
            **measured,
        )
    except (ValidationError, TypeError, ValueError) as e:  # e.g. a metric set by hand to nan, bypassing metric()
        if outcome.kind in get_args(ErrorKind):
            return RunReport(**base, outcome=outcome.kind, message=outcome.message)
        return RunReport(**base, outcome="error", message=f"the verifier's evidence cannot be recorded: {first_line(e)}")


def _unit(check: Check, name: str, ev: Evidence) -> str | None:
    """The metric's declared unit, else the one the verifier gave."""
    spec = check.metric(name)
    return spec.unit if spec else ev.units.get(name)


#: ``pytest_report_teststatus``'s answer for an inconclusive check: its own category in the summary line ("3
#: inconclusive"), a ``?`` in the progress line, and no failure of the run.
INCONCLUSIVE_STATUS = ("inconclusive", "?", ("INCONCLUSIVE", {"yellow": True}))
_INCONCLUSIVE = "assay-inconclusive"


def mark_inconclusive(report: pytest.TestReport) -> None:
    """Report an inconclusive call as not failed, with what did not decide kept as a section of the report: the
    seeds disagree, which is evidence of an open question, and a knowledge base's CI must tell it from a broken
    check. The ledger records it as inconclusive all the same (the phase report was made before)."""
    report.sections.append(("assay: inconclusive", str(report.longrepr)))
    report.outcome, report.longrepr = "passed", None
    report.user_properties.append((_INCONCLUSIVE, True))


def is_inconclusive(report: pytest.TestReport) -> bool:
    return report.when == "call" and any(key == _INCONCLUSIVE for key, _ in report.user_properties)


def classify(root: Path, call: pytest.CallInfo[None], report: pytest.TestReport) -> PhaseOutcome:
    """What a phase (``report.when``) came to, from the exception it raised (never from pytest's message text)."""
    return dataclasses.replace(_classify(root, call, report), when=report.when)


def _classify(root: Path, call: pytest.CallInfo[None], report: pytest.TestReport) -> PhaseOutcome:
    exc = call.excinfo
    if report.skipped and hasattr(report, "wasxfail"):
        return PhaseOutcome("known-failing", clip(str(exc.value)) if exc else str(report.wasxfail))
    if report.skipped:
        longrepr = report.longrepr
        return PhaseOutcome("skipped", str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr))
    if exc is None:
        return PhaseOutcome("xpassed") if report.failed else PhaseOutcome("passed")
    if exc.errisinstance(ExpectationNotMet):
        return PhaseOutcome("not-met", clip(str(exc.value)))
    if exc.errisinstance(ExpectationOutOfRegime):
        return PhaseOutcome("out-of-regime", clip(str(exc.value)))
    if exc.errisinstance(ExpectationInconclusive):
        return PhaseOutcome("inconclusive", clip(str(exc.value)))
    if exc.errisinstance(CheckTimeout):
        return PhaseOutcome("timeout", f"timed out: the verifier {exc.value}")
    return PhaseOutcome("error", describe(root, exc))


def describe(root: Path, exc: pytest.ExceptionInfo[BaseException]) -> str:
    """``Type: message (at verify/x.py:12 in test_y)``: the verifier's last frame, no engine frames, no machine paths."""
    where = ""
    for entry in reversed(exc.traceback):
        path = Path(str(entry.path))
        if (
            path.is_absolute()
            and path.is_relative_to(root)
            and "site-packages" not in path.parts
            and not path.is_relative_to(ENGINE)
        ):
            where = f" (at {path.relative_to(root).as_posix()}:{entry.lineno + 1} in {entry.name})"
            break
    text = f"{exc.type.__name__}: {exc.value}".replace(str(root) + os.sep, "")
    return clip(text + where)


def note_name(nodeid: str) -> str:
    """The file a worker's watcher leaves in the notes folder when it ends the check ``nodeid`` (a hard timeout)."""
    return hashlib.sha256(nodeid.encode()).hexdigest()[:24] + ".txt"


#: The ``user_properties`` key under which a forked run's parent says how its child ended (``assay.evidence.forked``).
CRASH = "assay-crash"


def crash_outcome(notes_dir: Path | None, report: pytest.TestReport) -> PhaseOutcome:
    """Why the process running a test died mid-test (``report``: the crash report): the note it left at a hard
    timeout; else how it ended, where the forked run's parent could tell; else a crash."""
    note = notes_dir / note_name(report.nodeid) if notes_dir else None
    if note is not None and note.is_file():
        return PhaseOutcome("timeout", f"timed out: {note.read_text(encoding='utf-8', errors='replace').strip()}", "crash")
    how = next((str(v) for k, v in report.user_properties if k == CRASH), "died (os._exit, a segfault, or killed for memory)")
    return PhaseOutcome("crash", f"the process running the verifier {how}", "crash")


def result_of(
    runs: list[RunReport],
    *,
    verdict: str,
    message: str,
    duration: float,
    kind: Any,
    commit: str,
    settling: Settling | None = None,
) -> Result:
    """The ledger result of a check's phase reports, judged ``verdict`` (an error keeps no measurement);
    ``settling``: what a settling run settles."""
    run = runs[-1]
    measured = verdict != "error"
    figures = [  # an error keeps no figure: what it left behind was never validated as a measurement
        Figure(
            name=name,
            file=figure_file(run.check, run.device, name, sha256(svg.encode("utf-8"))),
            sha256=sha256(svg.encode("utf-8")),
            caption=run.captions.get(name),
        )
        for name, svg in (sorted(run.figures.items()) if measured else [])
    ]
    finished = timestamp()
    environment = (run.environment or _controller_environment(run.device)).model_copy(update={"git_commit": commit})
    return fresh_result(
        run.claim,
        run.check,
        run.device,
        verdict=verdict,
        message=message,
        tier=run.tier,
        parts=run.parts,
        environment=environment,
        finished=finished,
        kind=kind,
        duration=duration,
        metrics=run.metrics if measured else {},
        expectation=run.expectation if measured else [],
        notes=run.notes,
        figures=figures,
        cpu_s=run.cpu_s,
        peak_memory_mb=run.peak_memory_mb,
        seeds_used=run.seeds_used or None,
        settling=settling if measured else None,
    )


def unkept(run: RunReport, why: Exception, *, verdict: str, message: str, kind: Any, duration: float, commit: str) -> Result:
    """The error result of a run judged ``verdict`` whose result no reader would read back (``why``: past a bound of
    the ledger, ``assay.ledger.result``). It keeps nothing the run recorded, so that it is itself within the bounds;
    a run that errored (a verifier past the bounds, say) keeps its own message."""
    if verdict != "error":
        said = store.first_error(why) if isinstance(why, ValidationError) else str(why)
        message = clip(f"the result cannot be kept: {said}; record less (fewer metrics, seeds or notes, shorter text)")
        kind = "error"
    recorded = {"metrics": {}, "expectation": [], "notes": [], "figures": {}, "captions": {}, "seeds_used": []}
    bare = run.model_copy(update=recorded)
    return result_of([bare], verdict="error", message=message, duration=duration, kind=kind, commit=commit)


def _controller_environment(device: str) -> Environment:
    """The controller's machine, for a run whose worker died before it could say (xdist runs on one machine)."""
    from assay.ledger.environment import capture

    return capture(device)


def record(
    ledger_root: Path,
    runs: list[RunReport],
    crash: PhaseOutcome | None,
    *,
    duration: float,
    commit: str,
    compare: bool,
    settling: Settling | None = None,
    inputs: InputParts | None = None,
) -> tuple[str, str]:
    """Judge a check's phase reports (and the crash that ended it) into its result, and write it over the ledger's
    by the ledger's rules, or only compare the two (``compare``). Returns what was done (``written``; ``unstable``:
    written, and its verdict moved with the same inputs; ``refused``: past a bound of the ledger, written as an
    error beside the last measurement; ``compared``; or ``skipped``: a skip is no evidence, and must not overwrite
    evidence from another machine) and its line. ``inputs``: the knowledge base's, by which the ledger's result is
    compared with ``new`` (``merge.comparable``).
    Raises ``OSError`` naming the file that could not be written."""
    outcomes = [PhaseOutcome(r.outcome, r.message, r.when) for r in runs] + ([crash] if crash else [])
    verdict, message = verdict_of(outcomes)
    if verdict == "skipped":
        return "skipped", ""
    kind = next((o.kind for o in outcomes if o.kind in get_args(ErrorKind)), "error")
    judged = {"verdict": verdict, "message": message, "duration": duration, "kind": kind, "commit": commit}
    try:
        new, refused = result_of(runs, **judged, settling=settling), False
        store.serialised(new)  # what no reader would read back is never written
    except (ValidationError, store.Unkeepable) as e:  # past a bound of the ledger: an error beside the last measurement
        new, refused = unkept(runs[-1], e, **judged), verdict != "error"
    path = store.ledger_path(ledger_root, new.claim, new.check, new.device)
    try:
        with store.locked(ledger_root, new.claim):
            done, line = _record_over(ledger_root, path, new, runs, compare, inputs)
    except OSError as e:
        raise OSError(f"could not write {path.relative_to(ledger_root).as_posix()}: {e.strerror or e}") from None
    return ("refused", f"{line} ({new.message})") if refused and done != "compared" else (done, line)


def _record_over(
    ledger_root: Path, path: Path, new: Result, runs: list[RunReport], compare: bool, inputs: InputParts | None
) -> tuple[str, str]:
    """``record``'s read of the result it replaces and its write, under the ledger's lock."""
    try:
        old = store.read_result(ledger_root, path) if path.exists() else None
    except LedgerProblem:
        old = None  # a broken file is replaced by this run
    if old is not None and inputs is not None:  # compared with ``new`` by its parts as they compare with today's
        old = merge.comparable(inputs, old)
    if compare:
        line, flagged = merge.compare(old, new)
        if flagged is not None:
            store.write_result(ledger_root, flagged)
        return "compared", line
    svgs = {f.file: runs[-1].figures[f.name] for f in new.figures}  # only the figures the result names
    store.write_result(ledger_root, merge.supersede(old, new), svgs)
    line = f"{new.check}.{new.device}: {new.status}"
    if merge.moved(old, new):  # written, flagged, and the run fails for it: the evidence did not hold still
        return "unstable", f"{line} (was {old.verdict if old else '?'} with the same inputs: flagged unstable)"
    return "written", line
