"""The pytest plugin: ties verifiers to claim records, judges them, and writes the ledger.

A verifier is a test marked ``@pytest.mark.claim("SOTA-364", "check-id")`` that records metrics and
figures through the ``evidence`` fixture. After the test body returns, the plugin evaluates the
check's ``expect`` list from the claim record; a check declared ``known_failing`` runs as a strict
xfail. Results travel from xdist workers to the controller in ``user_properties``; only the
controller writes ``results/``. With no claim test collected the plugin does nothing.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import platform
import random
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from assay import results
from assay.loader import KnowledgeBase, load
from assay.model import Check, Claim

PROPERTY = "assay"


class ExpectationNotMet(AssertionError):
    """A check's expectation did not hold for the measured metrics."""


class VerifierError(Exception):
    """The verifier did not record what its check's expectation needs."""


@dataclass
class Evidence:
    """What a verifier records: metrics, figures (as SVG text) and notes."""

    metrics: dict[str, float] = field(default_factory=dict)
    figures: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seed: int = 0

    def metric(self, name: str, value: float | int | bool) -> None:
        """Record one finite number under ``name`` (snake_case)."""
        number = float(value)
        if not math.isfinite(number):
            raise VerifierError(f"metric {name!r} is not finite ({number})")
        self.metrics[name] = number

    def figure(self, name: str, fig: Any) -> None:
        """Record a matplotlib figure; it is stored as SVG beside the ledger file."""
        import matplotlib

        matplotlib.rcParams["svg.hashsalt"] = "assay"  # stable element ids: the same figure gives the same file
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")
        self.figures[name] = buf.getvalue()

    def note(self, text: str) -> None:
        self.notes.append(str(text))


# --- options and collection ---------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("assay", "Assay claim verification")
    group.addoption("--device", default="auto", choices=("auto", "cpu", "cuda"),
                    help="device the verifiers run on (auto: cuda when available)")
    group.addoption("--claim", action="append", default=[], metavar="ID",
                    help="run only the checks of this claim (exact id; repeatable)")
    group.addoption("--shard", default=None, metavar="I/N", help="run the I-th of N deterministic shards")
    group.addoption("--stale", action="store_true",
                    help="run only checks whose result on this device is missing, stale or an error")
    group.addoption("--no-ledger", action="store_true", help="do not write results/")


def _resolve_device(name: str) -> str:
    if name != "auto":
        return name
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@dataclass
class _Tie:
    claim: Claim
    check: Check


class _Session:
    """State of one run in the controller and in each worker."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.root = Path(config.rootpath)
        self.kb: KnowledgeBase | None = None
        self.device = "cpu"
        self.ties: dict[str, _Tie] = {}
        self.reports: dict[str, list[pytest.TestReport]] = {}
        self.written: dict[str, list[str]] = {}
        self.commit = ""

    def knowledge_base(self) -> KnowledgeBase:
        if self.kb is None:
            self.kb = load(self.root)
        return self.kb

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Collect a check's reports (its own or those xdist workers send); write its ledger at teardown."""
        if hasattr(self.config, "workerinput"):
            return  # workers write nothing
        if _payload(report) or report.nodeid in self.reports:  # a claim test: its reports carry a payload
            self.reports.setdefault(report.nodeid, []).append(report)
        if report.when == "teardown" and report.nodeid in self.reports:
            _finish(self, report.nodeid)


_KEY = pytest.StashKey[_Session]()
_EVIDENCE = pytest.StashKey[Evidence]()
_PROBLEM = pytest.StashKey[str]()
_EVALUATED = pytest.StashKey[list]()
_PEAK = pytest.StashKey["float | None"]()


def pytest_configure(config: pytest.Config) -> None:
    for line in (
        "claim(claim_id, check_id): ties a verifier to a claim record and one of its checks",
        "slow: a verifier that trains for longer than a few seconds",
        "gpu: a verifier that needs a CUDA device",
        "distributed: a verifier that spawns torch.distributed processes",
    ):
        config.addinivalue_line("markers", line)
    state = _Session(config)
    config.stash[_KEY] = state
    config.pluginmanager.register(state, "assay-session")


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_KEY, None)
    if state is not None and config.pluginmanager.is_registered(state):
        config.pluginmanager.unregister(state)


def _claim_marker(item: pytest.Item) -> tuple[str, str] | None:
    marker = item.get_closest_marker("claim")
    if marker is None:
        return None
    args = list(marker.args) + [marker.kwargs.get(k) for k in ("claim_id", "check_id") if k in marker.kwargs]
    return (str(args[0]) if args else "", str(args[1]) if len(args) > 1 else "")


def _shard_of(nodeid: str, n: int) -> int:
    return int(hashlib.sha256(nodeid.encode()).hexdigest(), 16) % n


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash[_KEY]
    tied = [(item, m) for item in items if (m := _claim_marker(item))]
    if not tied:
        return
    import torch

    torch.set_num_threads(1)  # small models run many times faster on one intra-op thread; xdist uses the cores
    state.device = _resolve_device(config.getoption("device"))
    kb = state.knowledge_base()
    for item, (cid, check_id) in tied:
        claim = kb.claims.get(cid)
        check = claim.check(check_id) if claim else None
        if check is None:
            what = f"'{cid}', which is not a valid claim" if claim is None else f"check '{check_id}', which {cid} does not have"
            item.stash[_PROBLEM] = f"{item.nodeid}: the claim marker names {what}; see `assay check`"
            continue
        state.ties[item.nodeid] = _Tie(claim, check)
        item.add_marker(pytest.mark.timeout(check.timeout))
        if check.known_failing:
            item.add_marker(pytest.mark.xfail(strict=True, raises=ExpectationNotMet, reason=check.known_failing))
    _select(config, items, state)


def _select(config: pytest.Config, items: list[pytest.Item], state: _Session) -> None:
    wanted = set(config.getoption("claim"))
    shard = config.getoption("shard")
    i, n = (int(x) for x in shard.split("/")) if shard else (1, 1)
    if not 1 <= i <= n:
        raise pytest.UsageError(f"--shard {shard}: I must be between 1 and N")
    ledger = results.read_ledger(state.root)[0] if config.getoption("stale") else {}
    keep, drop = [], []
    for item in items:
        tie = state.ties.get(item.nodeid)
        marker = _claim_marker(item)
        selected = True
        if wanted and (marker is None or marker[0] not in wanted):
            selected = False
        if marker is not None and _shard_of(item.nodeid, n) != i - 1:
            selected = False
        if selected and tie and config.getoption("stale"):
            selected = _needs_run(state, tie, ledger)
        (keep if selected else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _needs_run(state: _Session, tie: _Tie, ledger: dict[tuple[str, str, str], results.Result]) -> bool:
    result = ledger.get((tie.claim.id, tie.check.id, state.device))
    if result is None or result.verdict == "error":
        return True
    current = results.input_parts(state.root, tie.claim, tie.check, state.device)
    return bool(results.stale_reasons(result.parts, current))


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
    if state.device not in tie.check.devices:
        pytest.skip(f"{tie.claim.id}/{tie.check.id} declares devices {tie.check.devices}; this run is on {state.device}")
    if item.get_closest_marker("gpu") and state.device != "cuda":
        pytest.skip("needs a GPU")


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Any:
    outcome = yield
    state = pyfuncitem.config.stash[_KEY]
    tie = state.ties.get(pyfuncitem.nodeid)
    if tie is not None:
        ev = pyfuncitem.stash.get(_EVIDENCE, None)
        if ev is None:
            raise VerifierError(f"{pyfuncitem.nodeid} does not use the 'evidence' fixture, so it recorded nothing")
        evaluated = evaluate(tie.claim, tie.check, ev.metrics)
        pyfuncitem.stash[_EVALUATED] = evaluated
        failed = [e for e in evaluated if not e["holds"]]
        if failed:
            raise ExpectationNotMet(failure_message(tie.claim, tie.check, failed))
    return outcome


def evaluate(claim: Claim, check: Check, metrics: dict[str, float]) -> list[dict[str, Any]]:
    """Each expectation of ``check`` with the measured value and whether it holds."""
    out = []
    reported = {r.id: r for r in claim.reported}
    for exp in check.expect:
        if exp.metric not in metrics:
            raise VerifierError(
                f"{claim.id}/{check.id}: the verifier did not record metric '{exp.metric}' "
                f"(recorded: {', '.join(sorted(metrics)) or 'none'})"
            )
        entry = {**exp.model_dump(mode="json"), "measured": metrics[exp.metric], "holds": exp.holds(metrics[exp.metric])}
        if exp.reported and exp.reported in reported:
            r = reported[exp.reported]
            entry["paper"] = {"value": r.value, "unit": r.unit, "locator": r.locator, "source": r.source}
        out.append(entry)
    return out


def failure_message(claim: Claim, check: Check, failed: list[dict[str, Any]]) -> str:
    """Names claim, check, metric, measured value, expectation, and the paper's number where there is one."""
    lines = [f"{claim.id}/{check.id}: {check.tests}"]
    for e in failed:
        within = f" within {e['tol']:g}" if e.get("tol") is not None else ""
        line = f"  {e['metric']} = {e['measured']:.6g}, expected {e['op']} {e['value']:g}{within}"
        if "paper" in e:
            p = e["paper"]
            line += f" (paper: {p['value']:g} {p['unit']}, {p['source']} {p['locator']})"
        lines.append(line)
    return "\n".join(lines)


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
def pytest_runtest_call(item: pytest.Item) -> Any:
    state = item.config.stash[_KEY]
    if item.nodeid not in state.ties:
        return (yield)
    _peak_rss_reset()
    cuda = state.device == "cuda"
    if cuda:
        import torch

        torch.cuda.reset_peak_memory_stats()
    try:
        return (yield)
    finally:
        peak = _peak_rss_mb()
        if cuda:
            import torch

            peak = torch.cuda.max_memory_allocated() / 2**20
        item.stash[_PEAK] = peak


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    state = item.config.stash[_KEY]
    if item.nodeid in state.ties and report.when in ("setup", "call"):
        ev = item.stash.get(_EVIDENCE, Evidence())
        import torch

        tie = state.ties[item.nodeid]
        payload = {
            "claim": tie.claim.id,
            "check": tie.check.id,
            "device": state.device,
            "when": report.when,
            "expectation_not_met": bool(call.excinfo and call.excinfo.errisinstance(ExpectationNotMet)),
            "metrics": ev.metrics,
            "figures": ev.figures,
            "notes": ev.notes,
            "evaluated": item.stash.get(_EVALUATED, []),
            "peak_memory_mb": item.stash.get(_PEAK, None),
            "threads": torch.get_num_threads(),
            "seed": ev.seed,
            "device_name": _device_name(state.device),
        }
        report.user_properties.append((PROPERTY, json.dumps(payload)))
    return report


def _device_name(device: str) -> str:
    if device == "cuda":
        import torch

        return torch.cuda.get_device_name()
    return platform.processor() or platform.machine()


# --- the ledger (in the controller) -------------------------------------------------------------


def pytest_sessionstart(session: pytest.Session) -> None:
    state = session.config.stash[_KEY]
    try:
        state.commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=state.root, capture_output=True,
                                      text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        state.commit = ""


def verdict_of(reports: list[pytest.TestReport]) -> tuple[str, str]:
    """The ledger verdict of one check from its setup/call/teardown reports, with a message."""
    for r in reports:
        payload = _payload(r)
        if r.when == "call" and r.passed:
            return "passed", ""
        if hasattr(r, "wasxfail") and r.skipped:
            return "known-failing", str(r.longreprtext or r.wasxfail)
        if r.skipped:
            return "skipped", _skip_reason(r)
        if r.failed:
            text = r.longreprtext or ""
            if r.when == "call" and "[XPASS(strict)]" in text:
                return "failed", "declared known-failing, but the expectation held: " + text.strip()
            if r.when == "call" and payload.get("expectation_not_met"):
                return "failed", _last_lines(text)
            return "error", f"{r.when}: {_last_lines(text)}"
    return "error", "no report"


def _skip_reason(r: pytest.TestReport) -> str:
    longrepr = r.longrepr
    return str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr)


def _last_lines(text: str, n: int = 12) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


def _payload(r: pytest.TestReport) -> dict[str, Any]:
    for key, value in r.user_properties:
        if key == PROPERTY:
            return json.loads(value)
    return {}


def _finish(state: _Session, nodeid: str) -> None:
    reports = state.reports.pop(nodeid)
    verdict, message = verdict_of(reports)
    if verdict == "skipped" or state.config.getoption("no_ledger"):
        return  # a skip is no evidence, and must not overwrite evidence from another machine
    payload: dict[str, Any] = {}
    for r in reports:
        payload.update(_payload(r))
    claim = state.knowledge_base().claims[payload["claim"]]
    check, device = claim.check(payload["check"]), payload["device"]
    assert check is not None  # the worker found it in the same records
    parts = results.input_parts(state.root, claim, check, device)
    path = results.ledger_path(state.root, claim.id, check.id, device)
    figures = []
    for name, svg in sorted(payload.get("figures", {}).items()):
        fig_path = path.with_name(f"{check.id}.{device}.{name}.svg")
        _write_text_atomic(fig_path, svg)
        figures.append(fig_path.name)
    import torch

    data = {
        "format": results.FORMAT,
        "claim": claim.id,
        "check": check.id,
        "device": device,
        "verdict": verdict,
        "message": message,
        "tier": check.tier,
        "metrics": payload.get("metrics", {}),
        "expectation": payload.get("evaluated", []),
        "notes": payload.get("notes", []),
        "figures": figures,
        "duration_s": round(sum(r.duration for r in reports), 3),
        "peak_memory_mb": payload.get("peak_memory_mb"),
        "environment": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "device_name": payload.get("device_name", ""),
            "threads": payload.get("threads"),
            "seed": payload.get("seed"),
            "git_commit": state.commit,
            "platform": sys.platform,
        },
        "inputs": {"hash": results.input_hash(parts), "parts": parts},
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    results.write(path, data)
    state.written.setdefault(claim.id, []).append(f"{check.id}.{device}: {verdict}")


def _write_text_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return
    state = config.stash[_KEY]
    if not state.written:
        return
    from assay.graph import claim_states

    kb = load(state.root)
    states = claim_states(kb)
    tr = terminalreporter
    tr.section("assay: claims verified in this run")
    for cid in sorted(state.written):
        status = states[cid].status if cid in states else "invalid"
        tr.write_line(f"{cid:<12} {status:<16} " + ", ".join(sorted(state.written[cid])))
    tr.write_line(f"ledger: {state.root / 'results'}")
