"""``pytest verify --measure --claim ID [--check ID]``: run verifiers before their check's expectations are
written, to see what they measure over seeds; nothing is judged and no ledger is written.

A verifier is measured when its claim marker names ``--claim`` (and ``--check``), whether or not the record has
the check yet, or validates (a check without ``expect:`` does not). Its ``seeds`` fixture gives ``--measure-seeds``
of them from 0 where that is given, else the record's seeds where the check declares them, else 5. Each measured
test sends what it recorded in its report's ``user_properties``; the terminal summary prints, per metric, the
seeds, mean, sd, min, max and unit, and a YAML stub of the check's ``metrics:`` with mean - 3 sd and mean + 3 sd
beside each: a suggestion to choose from, not a threshold (a claim's size comes from its source).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from assay.evidence.selection import claim_marker
from assay.statistics import mean_sd

#: The ``user_properties`` key of a measured test's record.
PROPERTY = "assay-measure"


def collect(config: pytest.Config, items: list[pytest.Item], measuring: dict[str, tuple[str, str]]) -> None:
    """Keep the tests whose marker names ``--claim`` (and ``--check``); note each in ``measuring``."""
    claims, checks = set(config.getoption("claim")), set(config.getoption("check"))
    if not claims:
        raise pytest.UsageError("--measure needs --claim ID: the claim whose verifiers to measure")
    keep, drop = [], []
    for item in items:
        marked = claim_marker(item)
        if marked is not None and marked[0] in claims and (not checks or marked[1] in checks):
            measuring[item.nodeid] = marked
            keep.append(item)
        else:
            drop.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def seeds(config: pytest.Config, kb: Any, marked: tuple[str, str]) -> list[int]:
    """``--measure-seeds`` seeds from 0 where it is given; else the record's seeds for the check; else 5."""
    given = config.getoption("measure_seeds")
    claim = kb.claims.get(marked[0]) if given is None else None
    check = claim.check(marked[1]) if claim is not None else None
    if check is not None and check.seeds is not None:
        return check.seeds.values
    return list(range(int(given or 5)))


def property_of(marked: tuple[str, str], evidence: Any) -> tuple[str, str]:
    """The ``user_properties`` entry that carries a measured test's metrics to the controller."""
    metrics = (
        {}
        if evidence is None
        else {
            name: {"value": value, "unit": evidence.units.get(name), "seeds": evidence.seeds.get(name, [])}
            for name, value in evidence.metrics.items()
        }
    )
    used = list(evidence.seeds_used) if evidence is not None else []
    return PROPERTY, json.dumps({"claim": marked[0], "check": marked[1], "metrics": metrics, "seeds_used": used})


def received(report: pytest.TestReport) -> dict | None:
    sent = next((v for k, v in report.user_properties if k == PROPERTY), None)
    return json.loads(sent) if isinstance(sent, str) else None


class Measuring:
    """The hooks of a measuring run, registered beside the plugin's with ``--measure`` (in every process): each
    measured test's report carries what it recorded; the controller keeps them and prints the summary."""

    def __init__(self, measuring: dict[str, tuple[str, str]], evidence_key: Any):
        self.measuring, self.evidence_key, self.measured = measuring, evidence_key, []

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: Any) -> Any:
        report = yield
        if item.nodeid in self.measuring and report.when == "call":
            report.user_properties.append(property_of(self.measuring[item.nodeid], item.stash.get(self.evidence_key, None)))
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.measured += [m for m in [received(report)] if m is not None]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not hasattr(terminalreporter.config, "workerinput"):
            summary(terminalreporter, self.measured)


def summary(tr: Any, measured: list[dict]) -> None:
    """The terminal summary of a measuring run: a table per check and the YAML stub of its metrics."""
    if not measured:
        return
    tr.section("assay: measured (nothing judged, no ledger written)")
    for m in measured:
        seeds = m["seeds_used"]
        tr.write_line(f"{m['claim']}/{m['check']}" + (f" on seeds {seeds[0]}..{seeds[-1]}" if seeds else ""))
        tr.write_line(f"  {'metric':<40} {'seeds':>5} {'mean':>10} {'sd':>10} {'min':>10} {'max':>10}  unit")
        for name, v in sorted(m["metrics"].items()):
            values = v["seeds"] or [v["value"]]
            mean, sd = mean_sd(values)
            tr.write_line(
                f"  {name:<40} {len(values):>5} {mean:>10.4g} {sd:>10.3g} {min(values):>10.4g} {max(values):>10.4g}  "
                f"{v['unit'] or '(no unit given)'}"
            )
        tr.write_line("  a YAML stub for the check (choose thresholds from the source and the spread, then add against:):")
        for line in stub(m["metrics"]).splitlines():
            tr.write_line(line)


def stub(metrics: dict[str, dict]) -> str:
    """The check's ``metrics:`` as YAML (written by PyYAML, so a unit like `% top-1` is quoted), then ``expect:``
    with the spread of each metric measured over several seeds as comments; indented to sit under a check."""
    declared = [
        {"name": name, "unit": v["unit"] or "UNIT", "measures": "WHAT IT MEASURES"} for name, v in sorted(metrics.items())
    ]
    text = yaml.safe_dump({"metrics": declared}, sort_keys=False, allow_unicode=True, default_flow_style=None, width=200)
    lines = text.splitlines() + ["expect:"]
    for name, v in sorted(metrics.items()):
        values = v["seeds"] or [v["value"]]
        if len(values) > 1:
            mean, sd = mean_sd(values)
            lines.append(
                f"# {name}: mean - 3 sd = {mean - 3 * sd:.4g}, mean + 3 sd = {mean + 3 * sd:.4g} "
                f"(over {len(values)} seeds; a suggestion, not the source's size)"
            )
    return "".join(f"    {line}\n" for line in lines)
