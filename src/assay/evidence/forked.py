"""Each verifier of a plain ``pytest verify`` (no ``-n``) in a forked child, so that one that kills its process
(``os._exit``, a signal it sends itself, a segfault, the hard stop at its limit) is recorded as a crash and the
run goes on, as pytest-xdist does for its workers.

The child runs the test's phases and sends each report, as pytest-xdist serialises it, down a pipe the moment it is
made; the parent logs them in its own process (the terminal, junitxml and the controller that writes the ledger see
one report stream, as in any run) and, when the child ended before its teardown, logs the crash in its place.
Linux only; ``--in-process`` (or a debugger: ``--pdb``) runs the verifiers in pytest's own process instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from typing import Any

import pytest

# pytest's one private import here, argued: the child must run an item's phases without logging them (the parent
# logs the reports it sends), and pytest's public API runs them only through ``pytest_runtest_protocol``, which logs
# them in the child as well (a second terminal line per phase). pytest-forked imports the same function.
from _pytest.runner import runtestprotocol

from assay.evidence.run import CRASH

#: the child's exit status when the test protocol itself raised (pytest's own fault, not the verifier's)
_PROTOCOL_FAILED = 70


def wanted(config: pytest.Config) -> bool:
    """Whether this process runs verifiers in forked children: the controller of a run without workers, on
    Linux, unless told otherwise; never once CUDA is initialised here (a forked child could not use it)."""
    if hasattr(config, "workerinput") or config.getoption("dist", "no") != "no":
        return False  # an xdist worker: its death is already survived by the controller
    if config.getoption("in_process") or config.getoption("usepdb", False) or not sys.platform.startswith("linux"):
        return False
    torch = sys.modules.get("torch")
    return not (torch is not None and torch.cuda.is_initialized())


class Sender:
    """The child's end of the pipe: one JSON line per report, written as soon as the report is made."""

    def __init__(self, config: pytest.Config, fd: int):
        self.config = config
        self.fd = fd

    def send(self, report: pytest.TestReport) -> None:
        data = self.config.hook.pytest_report_to_serializable(config=self.config, report=report)
        line = (json.dumps(data) + "\n").encode("utf-8")
        while line:
            line = line[os.write(self.fd, line) :]


def run(item: pytest.Item, nextitem: pytest.Item | None, child_started: Any) -> None:
    """Run ``item``'s protocol in a forked child and log its reports here. ``child_started(sender)`` is called
    in the child before its first phase, so the plugin there can send each report as it is made."""
    ihook = item.ihook
    ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_fd)
        code = 0
        try:
            child_started(Sender(item.config, write_fd))
            runtestprotocol(item, nextitem=nextitem, log=False)
        except BaseException:
            code = _PROTOCOL_FAILED
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    os.close(write_fd)
    try:
        with os.fdopen(read_fd, "rb") as fh:
            payload = fh.read()  # to the end: the child's end closes when it exits
        _, status = os.waitpid(pid, 0)
    except BaseException:  # Ctrl-C here: the child goes with the run
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        raise
    reports = _reports(item.config, payload)
    for report in reports:
        ihook.pytest_runtest_logreport(report=report)
    if not any(r.when == "teardown" for r in reports):
        ihook.pytest_runtest_logreport(report=_crash_report(item, status))
    item.session._setupstate.teardown_exact(nextitem)  # what this process set up and ``nextitem`` does not need
    ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)


def _reports(config: pytest.Config, payload: bytes) -> list[pytest.TestReport]:
    """The reports the child sent; a last line cut short by its death is dropped."""
    reports = []
    for line in payload.splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            break
        report = config.hook.pytest_report_from_serializable(config=config, data=data)
        if isinstance(report.longrepr, list):
            report.longrepr = tuple(report.longrepr)  # a skip's (path, line, reason), a list after JSON
        reports.append(report)
    return reports


def how_it_ended(status: int) -> str:
    """A child's wait status in words."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return f"was killed by {name}"
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
    if code == _PROTOCOL_FAILED:
        return "ended when pytest's test protocol raised in it"
    return f"ended with exit status {code} before its test finished"


def _crash_report(item: pytest.Item, status: int) -> pytest.TestReport:
    """The report of a test whose process died, in the shape pytest-xdist gives a worker's crash (``when="???"``),
    saying how it ended (``run.CRASH``) for the ledger."""
    how = how_it_ended(status)
    return pytest.TestReport(
        nodeid=item.nodeid,
        location=item.location,
        keywords={k: 1 for k in item.keywords},
        outcome="failed",
        longrepr=f"the process running the verifier {how}",
        when="???",  # type: ignore[arg-type]
        sections=[],
        duration=0.0,
        user_properties=[(CRASH, how)],
    )
