"""The pytest plugin: ties verifiers to claim records, runs them under limits, and writes the ledger.

A verifier is a test marked ``@pytest.mark.claim("SOTA-364", "check-id")`` that records through the ``evidence``
fixture; its expectation is judged after the body returns; a ``known_failing`` check is a strict xfail and an
inconclusive one its own outcome. Each phase reaches the controller as one typed ``RunReport`` in
``user_properties``; only the controller writes ``results/``. Here are pytest's hooks and one state class, ``_Run``;
what they call lives in ``assay.evidence`` and ``assay.ledger``."""

from __future__ import annotations

import contextlib
import functools
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.evidence import forked, limits, measure, run, selection, settling, training
from assay.evidence.judge import ExpectationInconclusive, ExpectationNotMet, PhaseOutcome, VerifierError, judge
from assay.evidence.recorder import Evidence
from assay.experiment import Check
from assay.ledger import store
from assay.ledger.environment import git_commit
from assay.ledger.inputs import InputParts, unreadable_code, unreadable_data
from assay.ledger.store import LedgerProblem
from assay.model import Claim
from assay.records.knowledge_base import KnowledgeBase, load

#: The markers the plugin declares: the one list (pyproject.toml does not repeat it).
MARKERS = (
    "claim(claim_id, check_id): ties a verifier to a claim record and one of its checks",
    f"{selection.SLOW}: a verifier that costs CPU minutes; a --stale run (make verify) leaves it out unless -m or "
    "--claim asks for it (pytest verify -m slow)",
    "gpu: a verifier that needs a CUDA device",
    "distributed: a verifier that spawns torch.distributed processes",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    selection.add_options(parser)


class _Run:
    """State of one run, in the controller and in each worker; in the controller also its one hook, which
    collects each check's reports (its own or those xdist workers send) and writes the check's result."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.root = Path(config.rootpath).resolve()
        given = config.getoption("ledger_root", None)
        #: where results/ is written: the repository, or the folder --ledger-root names
        self.ledger_root = Path(given).resolve() if given else self.root
        self.shard = selection.parse_shard(config.getoption("shard"))
        self.device = "cpu"
        self.ties: dict[str, tuple[Claim, Check]] = {}
        self.parts: dict[str, dict[str, str]] = {}
        self.reports: dict[str, list[run.RunReport]] = {}
        self.durations: dict[str, float] = {}
        self.written: dict[str, list[str]] = {}
        self.compared: list[str] = []
        self.problems: list[str] = []
        self.notes_dir: Path | None = None  # made by notes() when first asked
        self.sender: forked.Sender | None = None  # in a forked child: where its reports go
        self.settle = settling.load(config.getoption("settle_plan", None))  # a settling run's plan, or {}
        self.measuring: dict[str, tuple[str, str]] = {}  # --measure: node id -> the (claim, check) it names
        self.slow_left_out: list[str] = []  # --stale: the slow checks due a run that it left out (CLAIM/check)

    @functools.cached_property
    def kb(self) -> KnowledgeBase:
        return load(self.root)

    @functools.cached_property
    def inputs(self) -> InputParts:
        return InputParts(self.root)

    @functools.cached_property
    def hard_stop(self) -> limits.HardStop | None:
        """The watcher, started at a first check where death is survivable (xdist workers, forked children)."""
        notes = self.shared or (self.sender and str(self.notes_dir))
        return limits.HardStop(notes) if notes is not None else None

    @property
    def shared(self) -> str | None:
        """The folder the processes of an xdist run share (``limits.running``); None where checks run one at a time."""
        return getattr(self.config, "workerinput", {}).get("assay_notes")

    def cpu_limit(self, claim: Claim, check: Check) -> float:
        """The check's CPU limit: its timeout, or a margin over the CPU its last measured result used in the
        repository's ledger (``limits.cpu_limit``), scaled for a settling run by its seeds."""
        try:
            last = store.read_result(self.root, store.ledger_path(self.root, claim.id, check.id, self.device))
        except (LedgerProblem, OSError):
            last = None
        recorded = last.cpu_s if last is not None and last.measured else None
        return settling.cpu_limit(self.settle, claim, check, limits.cpu_limit(check.timeout, recorded))

    @functools.cached_property
    def commit(self) -> str:
        return git_commit(self.root)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Finish a check at its teardown, or when xdist reports that its worker died mid-test."""
        sent = run.RunReport.sent_in(report.user_properties)
        if sent is not None:
            self.reports.setdefault(report.nodeid, []).append(sent)
        if report.nodeid not in self.reports:
            return
        self.durations[report.nodeid] = self.durations.get(report.nodeid, 0.0) + report.duration
        if report.when == "teardown":
            self.finish(report.nodeid)
        elif report.when not in ("setup", "call"):  # xdist's "???" report of a worker that died
            self.finish(report.nodeid, crash=run.crash_outcome(self.notes_dir, report))

    def notes(self) -> Path:  # where a worker or forked child leaves the note of a hard timeout
        self.notes_dir = self.notes_dir or Path(tempfile.mkdtemp(prefix="assay-notes-"))
        return self.notes_dir

    def pytest_report_teststatus(self, report: pytest.TestReport) -> tuple[str, str, tuple[str, dict]] | None:
        return run.INCONCLUSIVE_STATUS if run.is_inconclusive(report) else None

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        rejudging = self.config.getoption("stale") and not self.config.getoption("no_ledger") and not self.settle
        if rejudging and not hasattr(self.config, "workerinput") and self.ledger_root == self.root:
            self.rejudge()
        if self.problems and exitstatus == 0:  # a result that could not be written fails the run
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def rejudge(self) -> None:
        """--stale: the fresh results whose judgement changed (words, thresholds, counterparts) judged again from their
        recorded measurements and written, without running their verifiers (``assay.rejudging``)."""
        from assay.rejudging import rejudged

        try:
            written, _ = rejudged(self.root, self.config.getoption("claim", None) or None)
        except OSError as e:
            self.problems.append(str(e))
            return
        for line in written:
            self.written.setdefault(line.split("/", 1)[0], []).append(f"re-judged {line}")

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.notes_dir is not None:
            shutil.rmtree(self.notes_dir, ignore_errors=True)

    def finish(self, nodeid: str, crash: PhaseOutcome | None = None) -> None:
        """Judge the check's phases into its result and write it over the ledger's (or compare the two)."""
        runs, duration = self.reports.pop(nodeid), round(self.durations.pop(nodeid, 0.0), 3)
        if self.config.getoption("no_ledger"):
            return
        try:
            kind, line = run.record(
                self.ledger_root,
                runs,
                crash,
                duration=duration,
                commit=self.commit,
                compare=self.config.getoption("compare"),
                settling=settling.of(self.settle, runs[-1]),
                inputs=self.inputs,
            )
        except OSError as e:
            self.problems.append(str(e))
            return
        if kind == "compared":
            self.compared.append(line)
        elif kind in ("written", "unstable", "refused"):
            self.written.setdefault(runs[-1].claim, []).append(line)
            self.problems += [f"{runs[-1].claim}/{line}"] if kind != "written" else []  # each fails the run


_KEY = pytest.StashKey[_Run]()
_EVIDENCE = pytest.StashKey[Evidence]()
_PROBLEM = pytest.StashKey[str]()
_EVALUATED = pytest.StashKey[list]()
_MEASURED = pytest.StashKey[dict]()


def _tied(item: pytest.Item) -> tuple[_Run, tuple[Claim, Check] | None]:
    """The run's state, and the (claim, check) the test verifies; None for a test that is no verifier."""
    state = item.config.stash[_KEY]
    return state, state.ties.get(item.nodeid)


def pytest_configure(config: pytest.Config) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    state = config.stash[_KEY] = _Run(config)
    if config.getoption("measure"):
        config.pluginmanager.register(measure.Measuring(state.measuring, _EVIDENCE, lambda: state.kb), "assay-measure")
    if not hasattr(config, "workerinput"):
        # options that name things, and the folders a run reads and writes, are checked here, once, before any xdist
        # worker starts
        selection.check_folders(state.root, state.ledger_root)
        wanted = config.getoption("claim") or config.getoption("check")
        if wanted and not config.getoption("measure"):  # a check not yet in the record is measured
            selection.check_wanted(state.kb, config.getoption("claim"), config.getoption("check"))
        if config.getoption("device") == "cuda":
            selection.resolve_device("cuda")
        config.pluginmanager.register(state, "assay-controller")  # only reads reports until a check ends


def pytest_itemcollected(item: pytest.Item) -> None:
    """Keep the verifiers of checks that share a training run on one xdist worker (``--dist loadgroup``)."""
    marked = selection.claim_marker(item)
    group = selection.experiment_group(item.config.stash[_KEY].kb, marked) if marked else None
    if group:
        item.add_marker(pytest.mark.xdist_group(group))


@pytest.hookimpl(trylast=True)  # after pytest-xdist names a grouped test `<node id>@<group>`: state is keyed by it
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash[_KEY]
    tied = [(item, m) for item in items if (m := selection.claim_marker(item))]
    if not tied:
        return
    state.device = selection.prepare(config.getoption("device"))
    if config.getoption("measure"):
        return measure.collect(config, items, state.measuring)
    for item, (cid, check_id) in tied:
        tie, problem = selection.tie(state.kb, selection.verifier_id(item), cid, check_id)
        if problem:
            item.stash[_PROBLEM] = problem
            continue
        state.ties[item.nodeid] = tie
        if tie[1].known_failing:
            item.add_marker(pytest.mark.xfail(strict=True, raises=ExpectationNotMet, reason=tie[1].known_failing))
    selection.select(config, items, state)
    for item in items:  # hashed by select: code or data it could not read is refused here, before it runs
        parts = state.parts.get(item.nodeid, {})
        unread = unreadable_code(parts) + unreadable_data(parts)
        if unread:
            del state.ties[item.nodeid]
            item.stash[_PROBLEM] = f"{item.nodeid} is not run: {'; '.join(unread)} (see `assay check`)"


@pytest.fixture
def device(request: pytest.FixtureRequest) -> Any:
    """The ``torch.device`` this run verifies on."""
    import torch

    return torch.device(request.config.stash[_KEY].device)


@pytest.fixture
def evidence(request: pytest.FixtureRequest) -> Evidence:
    """Where a verifier records its metrics and figures; torch, numpy and random are seeded with 0 first."""
    return request.node.stash.setdefault(_EVIDENCE, Evidence.seeded())


@pytest.fixture
def seeds(request: pytest.FixtureRequest, evidence: Evidence) -> list[int]:
    """The random seeds the verifier reads: its check's ``seeds:`` in the record, or a settling run's fresh ones."""
    state, tie = _tied(request.node)
    marked = state.measuring.get(request.node.nodeid)
    evidence.seeds_used = measure.seeds(request.config, state.kb, marked) if marked else settling.seeds_for(state.settle, tie)
    return list(evidence.seeds_used)


@pytest.fixture
def experiment(request: pytest.FixtureRequest) -> training.Experiment:
    """The training run the check shares (its ``experiment:``): ``experiment(train, *args)`` calls ``train`` once
    per run and gives every check of the run what it returned, as JSON data (``assay.evidence.training``)."""
    state = request.config.stash[_KEY]
    marked = selection.claim_marker(request.node) or ("", request.node.name)
    check = state.kb.check(*marked)
    found = measure.check_data(state.kb, *marked) if check is None else None  # a record that does not validate yet
    named = check.experiment if check else found and found[2].get("experiment")
    name = named if isinstance(named, str) and named else f"check {marked[1]}"  # no experiment: its own run
    return training.Experiment(Path(state.shared or state.notes()) / "experiments", marked[0], name, state.device)


def pytest_runtest_setup(item: pytest.Item) -> None:
    problem = item.stash.get(_PROBLEM, None)
    if problem:
        pytest.fail(problem, pytrace=False)
    state, tie = _tied(item)
    if tie is None:
        return
    claim, check = tie
    if state.device not in check.devices:
        pytest.skip(f"{claim.id}/{check.id} declares devices {check.devices}; this run is on {state.device}")
    if item.get_closest_marker("gpu") and state.device != "cuda":
        pytest.skip("needs a GPU")


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Any:
    _, tie = _tied(pyfuncitem)
    if tie is None:
        return (yield)
    __tracebackhide__ = True
    with limits.interrupts() as sigint:
        try:
            outcome = yield
        except KeyboardInterrupt:
            if sigint.is_set():
                raise  # the user pressed Ctrl-C: stop the run
            raise VerifierError("the verifier raised KeyboardInterrupt itself") from None
    ev = pyfuncitem.stash.get(_EVIDENCE, None)
    if ev is None:
        raise VerifierError(f"{pyfuncitem.nodeid} does not use the 'evidence' fixture, so it recorded nothing")
    ev.validate()
    ev.check_units(tie[1])
    try:
        pyfuncitem.stash[_EVALUATED] = judge(*tie, ev.metrics, ev.seeds)
    except (ExpectationNotMet, ExpectationInconclusive) as e:
        pyfuncitem.stash[_EVALUATED] = e.evaluated
        raise
    return outcome


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    state, tie = _tied(item)
    if tie is None:
        return (yield)
    cpu = state.cpu_limit(*tie)
    wall = limits.wall_limit(cpu, float(item.config.getini("assay_wall_floor_s")))
    try:
        with limits.running(state.shared), _limited(item, state, (cpu, wall)):
            return (yield)
    except limits.CpuOverrun as e:
        loaded = limits.contended(e.used, e.elapsed)
        if loaded is None:
            raise
    # stopped at its CPU limit on a loaded machine: once more, alone, before it is an error (limits)
    if _EVIDENCE in item.stash:
        item.stash[_EVIDENCE].restart()
    with limits.running(state.shared, alone=True), _limited(item, state, (cpu, wall), f"the first run stopped at it, {loaded}"):
        item.runtest()


@contextlib.contextmanager
def _limited(item: pytest.Item, state: _Run, limit: tuple[float, float], rerun: str = "") -> Iterator[None]:
    """The verifier under its CPU and wall limits, watched from outside for native code, its cost measured."""
    cpu, wall = limit
    with limits.watched(state.hard_stop, run.note_name(item.nodeid), cpu, wall), limits.measured(state.device) as measured:
        item.stash[_MEASURED] = measured  # filled in when the verifier ends, however it ends
        with limits.limited(cpu, wall, rerun=rerun):
            yield


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    """Without xdist, each verifier runs in a forked child (``assay.evidence.forked``): its death is a crash."""
    state, tie = _tied(item)
    if tie is None or state.sender is not None or not forked.wanted(item.config):
        return None
    state.notes()
    forked.run(item, nextitem, functools.partial(setattr, state, "sender"))
    return True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    state, tie = _tied(item)
    if tie is not None and report.when in ("setup", "call"):
        recorded = (item.stash.get(_EVIDENCE, None), item.stash.get(_EVALUATED, []), item.stash.get(_MEASURED, {}))
        parts = state.parts.get(item.nodeid, {})
        phase = run.phase_report(*tie, state.device, parts, run.classify(state.root, call, report), recorded)
        report.user_properties.append(phase.property())
        if call.excinfo is not None and call.excinfo.errisinstance((ExpectationNotMet, ExpectationInconclusive)):
            report.longrepr = str(call.excinfo.value) if report.failed else report.longrepr  # no engine frames
            if call.excinfo.errisinstance(ExpectationInconclusive):
                run.mark_inconclusive(report)  # its own outcome: an open question, not a broken check
    if state.sender is not None:
        state.sender.send(report)  # a forked child's reports are logged by its parent
    return report


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: give each worker a folder for the note it leaves when it must end itself (a hard timeout)."""
    node.workerinput["assay_notes"] = str(node.config.stash[_KEY].notes())


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist: the slow checks a worker left out (each collects every item, so each names the same ones), kept once."""
    state = node.config.stash.get(_KEY, None)
    for name in getattr(node, "workeroutput", {}).get("assay_slow_left_out", []):
        if state is not None and name not in state.slow_left_out:
            state.slow_left_out.append(name)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(_KEY, None)
    if state is not None and not hasattr(config, "workerinput"):
        from assay.overview import run_summary

        run_summary(terminalreporter, state.compared, state.problems, state.written, lambda: state.kb, state.ledger_root)
        if state.slow_left_out:  # under -n the workers select, and each sends what it left out (pytest_testnodedown)
            terminalreporter.write_line(selection.slow_note(state.slow_left_out))
