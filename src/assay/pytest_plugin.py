"""The pytest plugin: ties verifiers to claim records, runs them under limits, and writes the ledger.

A verifier is a test marked ``@pytest.mark.claim("SOTA-364", "check-id")`` that records metrics and
figures through the ``evidence`` fixture. After the test body returns, the check's expectation is
judged (``assay.evidence.judge``); a check declared ``known_failing`` runs as a strict xfail. Each run
travels from the process that ran it to the controller as one typed ``RunReport`` in
``user_properties``; only the controller writes ``results/``, by the rules of ``assay.ledger``.
With no claim test collected the plugin only declares its options and markers.
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import random
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from assay import fingerprints
from assay.evidence import limits
from assay.evidence.judge import (
    CheckTimeout,
    ExpectationInconclusive,
    ExpectationNotMet,
    OutcomeKind,
    PhaseOutcome,
    VerifierError,
    judge,
    verdict_of,
)
from assay.evidence.limits import HardStop
from assay.fingerprints import input_hash
from assay.ledger import merge, store
from assay.ledger.inputs import InputParts, stale_reasons
from assay.ledger.result import FORMAT, NAME, Environment, Evaluated, Figure, Inputs, Metric, Result, RunError
from assay.ledger.store import Ledger, LedgerProblem
from assay.model import Check, Claim
from assay.records.knowledge_base import KnowledgeBase, load

PROPERTY = "assay"
#: The markers the plugin declares: the one list (pyproject.toml does not repeat it).
MARKERS = (
    "claim(claim_id, check_id): ties a verifier to a claim record and one of its checks",
    "slow: a verifier that trains for longer than a few seconds",
    "gpu: a verifier that needs a CUDA device",
    "distributed: a verifier that spawns torch.distributed processes",
)
_MESSAGE_MAX = 2000


@dataclass
class Evidence:
    """What a verifier records: metrics (with units and per-seed values), figures (SVG) and notes."""

    metrics: dict[str, float] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    seeds: dict[str, list[float]] = field(default_factory=dict)
    figures: dict[str, str] = field(default_factory=dict)
    captions: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seed: int = 0

    def metric(self, name: str, value: float | int | bool, unit: str | None = None, seeds: list[float] | None = None) -> None:
        """Record one finite number under ``name`` (snake_case), with its unit and the per-seed values it sums up."""
        _check_name("metric", name)
        number = float(value)
        per_seed = [float(s) for s in seeds or []]
        if not all(math.isfinite(x) for x in [number, *per_seed]):
            raise VerifierError(f"metric {name!r} is not finite ({number}, seeds {per_seed})")
        self.metrics[name] = number
        if unit:
            self.units[name] = unit
        if per_seed:
            self.seeds[name] = per_seed

    def figure(self, name: str, fig: Any, caption: str | None = None) -> None:
        """Record a matplotlib figure under ``name`` (snake_case); it is stored as SVG beside the ledger file."""
        import matplotlib

        _check_name("figure", name)
        matplotlib.rcParams["svg.hashsalt"] = "assay"  # stable element ids: the same figure gives the same file
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")
        self.figures[name] = buf.getvalue()
        if caption:
            self.captions[name] = caption

    def note(self, text: str) -> None:
        self.notes.append(str(text))


def _check_name(what: str, name: object) -> None:
    if not isinstance(name, str) or not re.match(NAME, name):
        raise VerifierError(f"{what} name {name!r} must be snake_case ({NAME})")


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


# --- options and collection ---------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("assay", "Assay claim verification")
    group.addoption(
        "--device",
        default="auto",
        choices=("auto", "cpu", "cuda"),
        help="device the verifiers run on (auto: cuda when available)",
    )
    group.addoption(
        "--claim", action="append", default=[], metavar="ID", help="run only the checks of this claim (exact id; repeatable)"
    )
    group.addoption("--shard", default=None, metavar="I/N", help="run the I-th of N deterministic shards")
    group.addoption(
        "--stale", action="store_true", help="run only checks whose result on this device is missing, stale or an error"
    )
    group.addoption("--no-ledger", action="store_true", help="do not write results/")
    group.addoption(
        "--ledger-root",
        default=None,
        metavar="DIR",
        help="write the ledger to DIR/results/ instead of the repository's (a shard's own folder; "
        "`assay merge DIR` brings it in by the ledger's rules)",
    )
    group.addoption(
        "--compare",
        action="store_true",
        help="rerun and compare with the ledger (verdict, largest metric change, environment); "
        "results are not replaced, a changed verdict with the same inputs is flagged unstable",
    )
    parser.addini(
        "assay_wall_floor_s",
        "the least wall-clock limit of a check, in seconds (its CPU limit is the check's `timeout`)",
        default=str(limits.WALL_FLOOR_S),
    )


def parse_shard(text: str | None) -> tuple[int, int]:
    """``"2/4"`` -> (2, 4); raises ``pytest.UsageError`` with the way out otherwise."""
    if text is None:
        return 1, 1
    m = re.fullmatch(r"\s*([0-9]+)\s*/\s*([0-9]+)\s*", text)
    if not m or not 1 <= int(m[1]) <= int(m[2]):
        raise pytest.UsageError(f"--shard {text!r}: expected I/N with 1 <= I <= N, e.g. --shard 2/4")
    return int(m[1]), int(m[2])


class _Session:
    """State of one run, in the controller and in each worker."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.root = Path(config.rootpath).resolve()
        given = config.getoption("ledger_root", None)
        #: where results/ is written: the repository, or the folder --ledger-root names
        self.ledger_root = Path(given).resolve() if given else self.root
        self.shard = parse_shard(config.getoption("shard"))
        self._kb: KnowledgeBase | None = None
        self._inputs: InputParts | None = None
        self.device = "cpu"
        self.ties: dict[str, tuple[Claim, Check]] = {}
        self.parts: dict[str, dict[str, str]] = {}
        self.reports: dict[str, list[RunReport]] = {}
        self.durations: dict[str, float] = {}
        self.written: dict[str, list[str]] = {}
        self.compared: list[str] = []
        self.problems: list[str] = []
        self.notes_dir: Path | None = None
        self.hard_stop: HardStop | None = None
        self._commit: str | None = None

    @property
    def kb(self) -> KnowledgeBase:
        if self._kb is None:
            self._kb = load(self.root)
        return self._kb

    @property
    def inputs(self) -> InputParts:
        if self._inputs is None:
            self._inputs = InputParts(self.root)
        return self._inputs

    @property
    def commit(self) -> str:
        if self._commit is None:
            try:
                self._commit = subprocess.run(
                    ["git", "rev-parse", "HEAD"], cwd=self.root, capture_output=True, text=True, timeout=10
                ).stdout.strip()
            except (OSError, subprocess.SubprocessError):
                self._commit = ""
        return self._commit


_KEY = pytest.StashKey[_Session]()
_EVIDENCE = pytest.StashKey[Evidence]()
_PROBLEM = pytest.StashKey[str]()
_EVALUATED = pytest.StashKey[list]()
_MEASURED = pytest.StashKey[dict]()


def pytest_configure(config: pytest.Config) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    state = _Session(config)
    config.stash[_KEY] = state
    if not hasattr(config, "workerinput"):
        # options that name things are checked here, once, before any xdist worker starts
        if config.getoption("claim"):
            _check_wanted(state, config.getoption("claim"))
        if config.getoption("device") == "cuda":
            _resolve_device("cuda")
        config.pluginmanager.register(_Controller(state), "assay-controller")  # only reads reports until a check ends


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_KEY, None)
    if state is not None and state.notes_dir is not None:
        shutil.rmtree(state.notes_dir, ignore_errors=True)


def _claim_marker(item: pytest.Item) -> tuple[str, str] | None:
    marker = item.get_closest_marker("claim")
    if marker is None:
        return None
    args = list(marker.args) + [marker.kwargs.get(k) for k in ("claim_id", "check_id") if k in marker.kwargs]
    return (str(args[0]) if args else "", str(args[1]) if len(args) > 1 else "")


def _shard_of(nodeid: str, n: int) -> int:
    return int(hashlib.sha256(nodeid.encode()).hexdigest(), 16) % n


def _resolve_device(name: str) -> str:
    import torch

    if name == "cuda" and not torch.cuda.is_available():
        raise pytest.UsageError(
            f"--device cuda: torch {torch.__version__} sees no CUDA device on this machine; use --device cpu, or auto"
        )
    if name != "auto":
        return name
    return "cuda" if torch.cuda.is_available() else "cpu"


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash[_KEY]
    tied = [(item, m) for item in items if (m := _claim_marker(item))]
    if not tied:
        return
    import torch

    torch.set_num_threads(1)  # small models run many times faster on one intra-op thread; xdist uses the cores
    state.device = _resolve_device(config.getoption("device"))
    if state.device == "cuda":
        full_float32(torch)
    for item, (cid, check_id) in tied:
        _tie(state, item, cid, check_id)
    _select(config, items, state)


def full_float32(torch: Any) -> None:
    """float32 on CUDA as on the CPU: no TF32 in matrix products or convolutions (cuDNN's default allows it, with a
    10-bit mantissa), so a tolerance set from CPU runs means the same on a GPU. The environment variable reaches the
    processes a verifier spawns (torch.distributed ranks), which start with the defaults."""
    os.environ["NVIDIA_TF32_OVERRIDE"] = "0"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def _check_wanted(state: _Session, wanted: list[str]) -> None:
    import difflib

    for cid in wanted:
        if cid not in state.kb.claims:
            close = difflib.get_close_matches(cid, list(state.kb.claims), n=1)
            why = "is not a valid claim; see `assay check`" if cid in state.kb.by_id else "is not a claim"
            raise pytest.UsageError(f"--claim {cid}: {cid!r} {why}" + (f"; did you mean {close[0]!r}?" if close else ""))


def _tie(state: _Session, item: pytest.Item, cid: str, check_id: str) -> None:
    claim = state.kb.claims.get(cid)
    check = claim.check(check_id) if claim else None
    if claim is None or check is None:
        what = f"'{cid}', which is not a valid claim" if claim is None else f"check '{check_id}', which {cid} does not have"
        item.stash[_PROBLEM] = f"{item.nodeid}: the claim marker names {what}; see `assay check`"
        return
    if item.nodeid.split("[")[0] != check.verifier:
        item.stash[_PROBLEM] = (
            f"{item.nodeid} is marked for {cid}/{check_id}, whose verifier is {check.verifier}; "
            "a check has one verifier (see `assay check`)"
        )
        return
    state.ties[item.nodeid] = (claim, check)
    if check.known_failing:
        item.add_marker(pytest.mark.xfail(strict=True, raises=ExpectationNotMet, reason=check.known_failing))


def _select(config: pytest.Config, items: list[pytest.Item], state: _Session) -> None:
    wanted = set(config.getoption("claim"))
    i, n = state.shard
    stale_only = config.getoption("stale")
    ledger = store.read_ledger(state.root) if stale_only else None
    keep, drop = [], []
    for item in items:
        marker = _claim_marker(item)
        selected = not (wanted and (marker is None or marker[0] not in wanted))
        if marker is not None and _shard_of(item.nodeid, n) != i - 1:
            selected = False
        tie = state.ties.get(item.nodeid)
        if selected and tie:
            # hashed now, before any verifier runs: a file saved during the run is not taken for the one that ran
            state.parts[item.nodeid] = state.inputs.parts(*tie, state.device)
            if ledger is not None:
                selected = _needs_run(state, item.nodeid, ledger)
        (keep if selected else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _needs_run(state: _Session, nodeid: str, ledger: Ledger) -> bool:
    claim, check = state.ties[nodeid]
    result = ledger.get((claim.id, check.id, state.device))
    if result is None or result.status == "error":
        return True
    return bool(stale_reasons(result.inputs.parts, state.parts[nodeid]))


# --- running a verifier (in the worker) ---------------------------------------------------------


@pytest.fixture
def device(request: pytest.FixtureRequest) -> Any:
    """The ``torch.device`` this run verifies on."""
    import torch

    return torch.device(request.config.stash[_KEY].device)


@pytest.fixture
def evidence(request: pytest.FixtureRequest) -> Evidence:
    """Where a verifier records its metrics and figures; torch, numpy and random are seeded with 0 first."""
    import numpy as np
    import torch

    ev = Evidence()
    random.seed(ev.seed)
    np.random.seed(ev.seed)
    torch.manual_seed(ev.seed)
    request.node.stash[_EVIDENCE] = ev
    return ev


def pytest_runtest_setup(item: pytest.Item) -> None:
    problem = item.stash.get(_PROBLEM, None)
    if problem:
        pytest.fail(problem, pytrace=False)
    state = item.config.stash[_KEY]
    tie = state.ties.get(item.nodeid)
    if tie is None:
        return
    claim, check = tie
    if state.device not in check.devices:
        pytest.skip(f"{claim.id}/{check.id} declares devices {check.devices}; this run is on {state.device}")
    if item.get_closest_marker("gpu") and state.device != "cuda":
        pytest.skip("needs a GPU")


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Any:
    state = pyfuncitem.config.stash[_KEY]
    tie = state.ties.get(pyfuncitem.nodeid)
    if tie is None:
        return (yield)
    __tracebackhide__ = True
    with _interrupts() as sigint:
        try:
            outcome = yield
        except KeyboardInterrupt:
            if sigint:
                raise  # the user pressed Ctrl-C: stop the run
            raise VerifierError("the verifier raised KeyboardInterrupt itself") from None
    ev = pyfuncitem.stash.get(_EVIDENCE, None)
    if ev is None:
        raise VerifierError(f"{pyfuncitem.nodeid} does not use the 'evidence' fixture, so it recorded nothing")
    _check_units(tie[1], ev)
    try:
        pyfuncitem.stash[_EVALUATED] = judge(*tie, ev.metrics, ev.seeds)
    except (ExpectationNotMet, ExpectationInconclusive) as e:
        pyfuncitem.stash[_EVALUATED] = e.evaluated
        raise
    return outcome


def _check_units(check: Check, ev: Evidence) -> None:
    """A metric recorded with a unit other than the one its check declares is the verifier's error."""
    for name, unit in ev.units.items():
        spec = check.metric(name)
        if spec is not None and unit != spec.unit:
            raise VerifierError(
                f"metric {name!r} is recorded in {unit!r}, but check '{check.id}' declares it in "
                f"{spec.unit!r}; record it in the declared unit or correct the declaration"
            )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    state = item.config.stash[_KEY]
    tie = state.ties.get(item.nodeid)
    if tie is None:
        return (yield)
    cuda = state.device == "cuda"
    _peak_rss_reset()
    if cuda:
        import torch

        torch.cuda.reset_peak_memory_stats()
    start = limits.cpu_seconds()
    wall = limits.wall_limit(tie[1].timeout, float(item.config.getini("assay_wall_floor_s")))
    hard = _hard_stop(state)
    if hard is not None:
        hard.arm(_note_name(item.nodeid), tie[1].timeout, wall, "the verifier")
    try:
        with limits.limited(tie[1].timeout, wall):
            return (yield)
    finally:
        if hard is not None:
            hard.disarm()
        peak = _peak_rss_mb()
        if cuda:
            import torch

            peak = torch.cuda.max_memory_allocated() / 2**20
        item.stash[_MEASURED] = {"cpu_s": round(limits.cpu_seconds() - start, 3), "peak_memory_mb": peak}


@dataclass
class _Sigint:
    seen: bool = False

    def __bool__(self) -> bool:
        return self.seen


@contextmanager
def _interrupts() -> Iterator[_Sigint]:
    """Tell a real Ctrl-C (SIGINT) from a ``KeyboardInterrupt`` a verifier raises itself."""
    flag = _Sigint()
    try:
        previous = signal.getsignal(signal.SIGINT)

        def on_sigint(signum: int, frame: Any) -> None:
            flag.seen = True
            if callable(previous):
                previous(signum, frame)
            raise KeyboardInterrupt

        signal.signal(signal.SIGINT, on_sigint)
    except ValueError:  # not the main thread
        yield flag
        return
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, previous)


def _hard_stop(state: _Session) -> HardStop | None:
    """The worker's watcher process, started at its first check (xdist workers only: their death is survivable)."""
    notes = getattr(state.config, "workerinput", {}).get("assay_notes")
    if notes is None:
        return None
    if state.hard_stop is None:
        state.hard_stop = HardStop(notes)
    return state.hard_stop


def _note_name(nodeid: str) -> str:
    return hashlib.sha256(nodeid.encode()).hexdigest()[:24] + ".txt"


def _peak_rss_reset() -> None:
    try:
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM (Linux)
    except OSError:
        pass


def _peak_rss_mb() -> float | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    state = item.config.stash[_KEY]
    tie = state.ties.get(item.nodeid)
    if tie is not None and report.when in ("setup", "call"):
        report.user_properties.append((PROPERTY, _run_report(state, item, call, report, tie).model_dump_json()))
        if (
            call.excinfo is not None
            and call.excinfo.errisinstance((ExpectationNotMet, ExpectationInconclusive))
            and report.failed
        ):
            report.longrepr = str(call.excinfo.value)  # the comparisons with their numbers; no engine frames
    return report


def _run_report(
    state: _Session, item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport, tie: tuple[Claim, Check]
) -> RunReport:
    """The typed report of one phase; whatever the verifier left behind, this never raises."""
    claim, check = tie
    outcome = _classify(state, call, report)
    base = {
        "claim": claim.id,
        "check": check.id,
        "device": state.device,
        "tier": check.tier,
        "when": report.when,
        "parts": state.parts.get(item.nodeid, {}),
    }
    if report.when == "setup":
        return RunReport(**base, outcome=outcome.kind, message=outcome.message)
    ev = item.stash.get(_EVIDENCE, Evidence())
    try:
        from assay.ledger.environment import capture

        return RunReport(
            **base,
            outcome=outcome.kind,
            message=outcome.message,
            metrics={k: Metric(value=v, unit=_unit(check, k, ev), seeds=ev.seeds.get(k, [])) for k, v in ev.metrics.items()},
            expectation=item.stash.get(_EVALUATED, []),
            figures=dict(ev.figures),
            captions=dict(ev.captions),
            notes=[str(n) for n in ev.notes],
            environment=capture(state.device).model_copy(update={"seed": ev.seed}),
            **item.stash.get(_MEASURED, {}),
        )
    except (ValidationError, TypeError, ValueError) as e:  # e.g. a metric set by hand to nan, bypassing metric()
        if outcome.kind in ("error", "timeout"):
            return RunReport(**base, outcome=outcome.kind, message=outcome.message)
        return RunReport(**base, outcome="error", message=f"the verifier's evidence cannot be recorded: {_one_line(e)}")


def _unit(check: Check, name: str, ev: Evidence) -> str | None:
    """The metric's declared unit, else the one the verifier gave."""
    spec = check.metric(name)
    return spec.unit if spec else ev.units.get(name)


def _classify(state: _Session, call: pytest.CallInfo[None], report: pytest.TestReport) -> PhaseOutcome:
    """What a phase came to, from the exception it raised (never from pytest's message text)."""
    exc = call.excinfo
    if report.skipped and hasattr(report, "wasxfail"):
        return PhaseOutcome("known-failing", _clip(str(exc.value)) if exc else str(report.wasxfail))
    if report.skipped:
        longrepr = report.longrepr
        return PhaseOutcome("skipped", str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr))
    if exc is None:
        return PhaseOutcome("xpassed") if report.failed else PhaseOutcome("passed")
    if exc.errisinstance(ExpectationNotMet):
        return PhaseOutcome("not-met", _clip(str(exc.value)))
    if exc.errisinstance(ExpectationInconclusive):
        return PhaseOutcome("inconclusive", _clip(str(exc.value)))
    if exc.errisinstance(CheckTimeout):
        return PhaseOutcome("timeout", f"timed out: the verifier {exc.value}")
    return PhaseOutcome("error", _describe(state, exc))


def _describe(state: _Session, exc: pytest.ExceptionInfo[BaseException]) -> str:
    """``Type: message (at verify/x.py:12 in test_y)``: the verifier's last frame, no engine frames, no machine paths."""
    where = ""
    for entry in reversed(exc.traceback):
        path = Path(str(entry.path))
        if (
            path.is_absolute()
            and path.is_relative_to(state.root)
            and "site-packages" not in path.parts
            and not path.is_relative_to(Path(__file__).parent)
        ):
            where = f" (at {path.relative_to(state.root).as_posix()}:{entry.lineno + 1} in {entry.name})"
            break
    text = f"{exc.type.__name__}: {exc.value}".replace(str(state.root) + os.sep, "")
    return _clip(text + where)


def _clip(text: str) -> str:
    return text if len(text) <= _MESSAGE_MAX else text[: _MESSAGE_MAX - 1] + "…"


def _one_line(e: Exception) -> str:
    return str(e).splitlines()[0] if str(e) else type(e).__name__


# --- the ledger (in the controller) -------------------------------------------------------------


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: give each worker a folder for the note it leaves when it must end itself (a hard timeout)."""
    state = node.config.stash[_KEY]
    if state.notes_dir is None:
        state.notes_dir = Path(tempfile.mkdtemp(prefix="assay-notes-"))
    node.workerinput["assay_notes"] = str(state.notes_dir)


class _Controller:
    """The controller's hooks: collect each check's reports (its own or those xdist workers send)."""

    def __init__(self, state: _Session):
        self.state = state

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Finish a check at its teardown, or when xdist reports that its worker died mid-test."""
        state = self.state
        run = _run_report_of(report)
        if run is not None:
            state.reports.setdefault(report.nodeid, []).append(run)
        if report.nodeid not in state.reports:
            return
        state.durations[report.nodeid] = state.durations.get(report.nodeid, 0.0) + report.duration
        if report.when == "teardown":
            _finish(state, report.nodeid)
        elif report.when not in ("setup", "call"):  # xdist's "???" report of a worker that died
            _finish(state, report.nodeid, crash=_crash(state, report.nodeid))


def _run_report_of(report: pytest.TestReport) -> RunReport | None:
    for key, value in report.user_properties:
        if key == PROPERTY:
            try:
                return RunReport.model_validate_json(value)
            except ValidationError:
                return None
    return None


def _finish(state: _Session, nodeid: str, crash: PhaseOutcome | None = None) -> None:
    runs = state.reports.pop(nodeid)
    duration = round(state.durations.pop(nodeid, 0.0), 3)
    outcomes = [PhaseOutcome(r.outcome, r.message, r.when) for r in runs] + ([crash] if crash else [])
    verdict, message = verdict_of(outcomes)
    if verdict == "skipped" or state.config.getoption("no_ledger"):
        return  # a skip is no evidence, and must not overwrite evidence from another machine
    kind = next((o.kind for o in outcomes if o.kind in ("error", "timeout", "crash")), "error")
    new = _result(state, runs, verdict, message, duration, kind)
    path = store.ledger_path(state.ledger_root, new.claim, new.check, new.device)
    try:
        old = store.read_result(state.ledger_root, path) if path.exists() else None
    except LedgerProblem:
        old = None  # a broken file is replaced by this run
    try:
        if state.config.getoption("compare"):
            _compare(state, old, new)
            return
        svgs = {store.figure_file(new.check, new.device, name): svg for name, svg in runs[-1].figures.items()}
        store.write_result(state.ledger_root, merge.supersede(old, new), svgs)
    except OSError as e:
        state.problems.append(f"could not write {path.relative_to(state.ledger_root).as_posix()}: {e.strerror or e}")
        return
    state.written.setdefault(new.claim, []).append(f"{new.check}.{new.device}: {new.status}")


def _crash(state: _Session, nodeid: str) -> PhaseOutcome:
    """Why a worker died mid-test: the note it left at a hard timeout, or a crash."""
    note = state.notes_dir / _note_name(nodeid) if state.notes_dir else None
    if note is not None and note.is_file():
        return PhaseOutcome("timeout", f"timed out: {note.read_text(encoding='utf-8', errors='replace').strip()}", "crash")
    return PhaseOutcome("crash", "the process running the verifier died (os._exit, a segfault, or killed for memory)", "crash")


def _result(state: _Session, runs: list[RunReport], verdict: str, message: str, duration: float, kind: Any) -> Result:
    run = runs[-1]
    figures = [
        Figure(
            name=name,
            file=store.figure_file(run.check, run.device, name),
            sha256=fingerprints.sha256(svg.encode("utf-8")),
            caption=run.captions.get(name),
        )
        for name, svg in sorted(run.figures.items())
    ]
    finished = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    environment = (run.environment or _controller_environment(run.device)).model_copy(update={"git_commit": state.commit})
    inputs = Inputs(hash=input_hash(run.parts), parts=run.parts)
    error = RunError(kind=kind, message=message, finished=finished, inputs_hash=inputs.hash) if verdict == "error" else None
    return Result(
        format=FORMAT,
        claim=run.claim,
        check=run.check,
        device=run.device,
        verdict=verdict,
        message=message if verdict != "passed" else "",
        tier=run.tier,
        metrics=run.metrics if verdict != "error" else {},
        expectation=run.expectation if verdict != "error" else [],
        notes=run.notes,
        figures=figures if verdict != "error" else [],
        duration_s=duration,
        cpu_s=run.cpu_s,
        peak_memory_mb=run.peak_memory_mb,
        environment=environment,
        inputs=inputs,
        finished=finished,
        last_error=error,
    )


def _controller_environment(device: str) -> Environment:
    """The controller's machine, for a run whose worker died before it could say (xdist runs on one machine)."""
    from assay.ledger.environment import capture

    return capture(device)


def _compare(state: _Session, old: Result | None, new: Result) -> None:
    """Print how the rerun differs from the ledger; flag the ledger's result unstable if only the verdict moved."""
    label = f"{new.claim}/{new.check}.{new.device}"
    if old is None:
        state.compared.append(f"{label}: no result in the ledger; now {new.status}")
        return
    line = f"{label}: {old.status} -> {new.status}; {merge.largest_change(old, new)}; {merge.environment_change(old, new)}"
    if old.inputs.hash != new.inputs.hash:
        line += "; inputs changed since the ledger's run"
    flagged = merge.flag_unstable(old, new)
    if flagged is not None:
        store.write_result(state.ledger_root, flagged)
        line += "; verdict changed with the same inputs: flagged unstable"
    state.compared.append(line)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = session.config.stash.get(_KEY, None)
    if state is not None and state.problems and not hasattr(session.config, "workerinput") and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(_KEY, None)
    if state is None or hasattr(config, "workerinput"):
        return
    tr = terminalreporter
    if state.compared:
        tr.section("assay: reruns compared with the ledger (not written)")
        for line in state.compared:
            tr.write_line(line)
    for problem in state.problems:
        tr.write_line(f"assay: error: {problem}", red=True)
    if not state.written:
        return
    from assay.overview import claim_states

    ledger = None
    if state.ledger_root != state.root:  # this run's results laid over the repository's, as a merge would give
        ledger = store.read_ledger(state.root)
        ledger.results.update(store.read_ledger(state.ledger_root).results)
    states = claim_states(state.kb, ledger)
    tr.section("assay: claims verified in this run")
    for cid in sorted(state.written):
        status = states[cid].status if cid in states else "invalid"
        tr.write_line(f"{cid:<12} {status:<16} " + ", ".join(sorted(state.written[cid])))
    tr.write_line(f"ledger: {state.ledger_root / 'results'}")
