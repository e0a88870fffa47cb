"""``pytest verify --measure --claim ID [--check ID]``: run verifiers before their check's expectations are
written, to see what they measure over seeds; nothing is judged and no ledger is written.

A verifier is measured when its claim marker names ``--claim`` (and ``--check``), whether or not the record has
the check yet, or validates (a check without ``expect:`` does not). Its ``seeds`` fixture gives ``--measure-seeds``
of them from 0 where that is given, else the record's seeds where the check declares them, else 5. Each measured
test sends what it recorded in its report's ``user_properties``; the terminal summary prints, per metric, the
seeds, mean, sd, min, max and unit, and a YAML stub of the check's ``metrics:`` with mean - 3 sd and mean + 3 sd
beside each: a suggestion to choose from, not a threshold (a claim's size comes from its source).

The stub also proposes the check's ``seeds:`` for the ledger: seeds the pilot did not read (the record's own where
they are, else as many as the record reads from the one after the pilot's last), since the guide's path is pilot,
commit the expectations, then the ledger on fresh seeds. Where the record's ``seeds:`` overlap the pilot's, the
summary says so as a ``pilot-seeds`` warning at that field, with what to write instead.

Each check's line gives the CPU seconds of its test call (training included, for the check that trained), and an
experiment that several measured checks name (``experiment:``) gets one line: trained once for them all, or how many
times it trained in the run, which is CPU spent again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from assay.diagnostics import Diagnostic
from assay.evidence.limits import cpu_seconds
from assay.evidence.selection import claim_marker
from assay.evidence.training import Experiment
from assay.experiment import Seeds
from assay.records.knowledge_base import KnowledgeBase
from assay.statistics import mean_sd

#: The ``user_properties`` key of a measured test's record.
PROPERTY = "assay-measure"
_CPU = pytest.StashKey[float]()


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
    check = kb.check(*marked) if given is None else None
    if check is not None and check.seeds is not None:
        return check.seeds.values
    return list(range(int(given or 5)))


def property_of(marked: tuple[str, str], evidence: Any, cpu_s: float | None, shared: Any) -> tuple[str, str]:
    """The ``user_properties`` entry that carries a measured test's metrics to the controller, with the CPU seconds
    of its call and, where it asked for the ``experiment`` fixture, that experiment's name and how often it trained."""
    metrics = (
        {}
        if evidence is None
        else {
            name: {"value": value, "unit": evidence.units.get(name), "seeds": evidence.seeds.get(name, [])}
            for name, value in evidence.metrics.items()
        }
    )
    used = list(evidence.seeds_used) if evidence is not None else []
    trained = {"name": shared.name, "trained": shared.trained} if isinstance(shared, Experiment) else None
    sent = {"claim": marked[0], "check": marked[1], "metrics": metrics, "seeds_used": used, "cpu_s": cpu_s}
    return PROPERTY, json.dumps(sent | {"experiment": trained})


def received(report: pytest.TestReport) -> dict | None:
    sent = next((v for k, v in report.user_properties if k == PROPERTY), None)
    return json.loads(sent) if isinstance(sent, str) else None


class Measuring:
    """The hooks of a measuring run, registered beside the plugin's with ``--measure`` (in every process): each
    measured test's report carries what it recorded; the controller keeps them and prints the summary."""

    def __init__(self, measuring: dict[str, tuple[str, str]], evidence_key: Any, kb: Callable[[], KnowledgeBase]):
        self.measuring, self.evidence_key, self.kb, self.measured = measuring, evidence_key, kb, []

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Any:
        start = cpu_seconds()
        try:
            return (yield)
        finally:
            item.stash[_CPU] = round(cpu_seconds() - start, 3)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: Any) -> Any:
        report = yield
        if item.nodeid in self.measuring and report.when == "call":
            evidence, cpu_s = item.stash.get(self.evidence_key, None), item.stash.get(_CPU, None)
            shared = (getattr(item, "funcargs", None) or {}).get("experiment")  # the fixture's value, where it asked
            report.user_properties.append(property_of(self.measuring[item.nodeid], evidence, cpu_s, shared))
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.measured += [m for m in [received(report)] if m is not None]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not hasattr(terminalreporter.config, "workerinput"):
            summary(terminalreporter, self.measured, self.kb())


def summary(tr: Any, measured: list[dict], kb: KnowledgeBase) -> None:
    """The terminal summary of a measuring run: a table per check and the YAML stub of its metrics and seeds, then a
    warning for each record whose seeds the ledger would read are seeds the pilot read."""
    if not measured:
        return
    tr.section("assay: measured (nothing judged, no ledger written)")
    warnings = []
    for m in measured:
        seeds, cpu_s = m["seeds_used"], m.get("cpu_s")
        tr.write_line(
            f"{m['claim']}/{m['check']}"
            + (f" on seeds {seeds[0]}..{seeds[-1]}" if seeds else "")
            + (f": {cpu_s:.2f} CPU s in its test call" if cpu_s is not None else "")
        )
        tr.write_line(f"  {'metric':<40} {'seeds':>5} {'mean':>10} {'sd':>10} {'min':>10} {'max':>10}  unit")
        for name, v in sorted(m["metrics"].items()):
            values = v["seeds"] or [v["value"]]
            mean, sd = mean_sd(values)
            tr.write_line(
                f"  {name:<40} {len(values):>5} {mean:>10.4g} {sd:>10.3g} {min(values):>10.4g} {max(values):>10.4g}  "
                f"{v['unit'] or '(no unit given)'}"
            )
        declared = declared_seeds(kb, m["claim"], m["check"])
        ledger = ledger_seeds(seeds, declared[2] if declared else None)
        tr.write_line("  a YAML stub for the check (choose thresholds from the source and the spread, then add against:):")
        for line in stub(m["metrics"], ledger, seeds).splitlines():
            tr.write_line(line)
        warnings += [w for w in [declared and pilot_read(m["check"], declared, seeds, ledger)] if w]
    for line in trainings(measured, kb):
        tr.write_line(line)
    for w in warnings:
        tr.write_line(w.render(), yellow=True)


def trainings(measured: list[dict], kb: KnowledgeBase) -> list[str]:
    """A line per experiment that several measured checks name in their record (``experiment:``): trained once for
    them all, or how many times it trained in this run, which is CPU spent again."""
    checks: dict[str, list[tuple[str, int]]] = {}
    for m in measured:
        asked, data = m.get("experiment"), check_data(kb, m["claim"], m["check"])
        if asked and data and data[2].get("experiment") == asked["name"]:
            checks.setdefault(asked["name"], []).append((f"{m['claim']}/{m['check']}", asked["trained"]))
    lines = []
    for name, named in sorted(checks.items()):
        if len(named) < 2:
            continue
        every, trained = ", ".join(c for c, _ in named), sum(n for _, n in named)
        if trained == 1:
            first = next(c for c, n in named if n)
            lines.append(f"experiment {name}: trained once for checks {every} ({first} trained it: its CPU s hold the training)")
        else:
            by = ", ".join(f"{c} {n}" for c, n in named if n)
            lines.append(
                f"experiment {name}: trained {trained} times in this run for checks {every} ({by or 'none called it'}): "
                "each training is CPU spent again; give its checks the same function and arguments to train it once"
            )
    return lines


def ledger_seeds(pilot: list[int], declared: Seeds | None) -> Seeds | None:
    """The seeds to propose for the ledger after a pilot on ``pilot``: the record's where the pilot read none of
    them, else as many as the record reads (or the pilot read) from the one after the pilot's last; None where the
    verifier reads no seeds, or that block would reach the settling range."""
    if not pilot:
        return None
    if declared is not None and not set(declared.values) & set(pilot):
        return declared
    try:
        return Seeds(first=max(pilot) + 1, count=declared.count if declared else len(pilot))
    except ValidationError:
        return None


def check_data(kb: KnowledgeBase, claim_id: str, check_id: str) -> tuple[Any, int, dict] | None:
    """The record file of ``claim_id``, the index of check ``check_id`` in its ``checks:`` and the check's data, read
    from the file's data (a record measured before its ``expect:`` is written does not validate); None where the
    check is not there."""
    loaded = kb.by_id.get(claim_id)
    checks = loaded.data.get("checks") if loaded is not None and isinstance(loaded.data, dict) else None
    for i, c in enumerate(checks if isinstance(checks, list) else []):
        if isinstance(c, dict) and c.get("id") == check_id:
            return loaded, i, c
    return None


def declared_seeds(kb: KnowledgeBase, claim_id: str, check_id: str) -> tuple[Any, int, Seeds] | None:
    """``check_data`` with the seeds the check declares; None where it declares none (or none valid)."""
    found = check_data(kb, claim_id, check_id)
    if found is None or not isinstance(found[2].get("seeds"), dict):
        return None
    try:
        return found[0], found[1], Seeds.model_validate(found[2]["seeds"])
    except ValidationError:
        return None  # `assay check` reports it


def pilot_read(check_id: str, declared: tuple[Any, int, Seeds], pilot: list[int], ledger: Seeds | None) -> Diagnostic | None:
    """A ``pilot-seeds`` warning at the check's ``seeds:`` where they include seeds the pilot read."""
    loaded, index, seeds = declared
    read = set(seeds.values) & set(pilot)
    if not read:
        return None
    line, col = loaded.positions.get(("checks", index, "seeds"), (1, 1))
    instead = f"write seeds: {flow(ledger)}" if ledger else "write seeds the pilot did not read, below the settling range"
    return Diagnostic(
        loaded.path,
        line,
        col,
        "pilot-seeds",
        f"check {check_id}'s seeds: {flow(seeds)} reads {span(seeds.values)}, {len(read)} of which the pilot just "
        f"read ({span(pilot)}); {instead}",
        "the expectations are chosen on the pilot's seeds: a ledger run that reads them again tests nothing fresh "
        "(the path: pilot, commit the expectations, then the ledger on fresh seeds)",
    )


def flow(seeds: Seeds) -> str:
    return f"{{first: {seeds.first}, count: {seeds.count}}}"


def span(seeds: list[int]) -> str:
    return f"seeds {seeds[0]}..{seeds[-1]}" if len(seeds) > 1 else f"seed {seeds[0]}"


def stub(metrics: dict[str, dict], seeds: Seeds | None = None, pilot: list[int] | None = None) -> str:
    """The check's ``seeds:`` for the ledger, with why in a comment, and its ``metrics:`` as YAML (written by
    PyYAML, so a unit like `% top-1` is quoted), then ``expect:`` with the spread of each metric measured over
    several seeds as comments; indented to sit under a check."""
    declared = [
        {"name": name, "unit": v["unit"] or "UNIT", "measures": "WHAT IT MEASURES"} for name, v in sorted(metrics.items())
    ]
    fields: dict[str, Any] = {"seeds": {"first": seeds.first, "count": seeds.count}} if seeds is not None else {}
    fields["metrics"] = declared
    text = yaml.safe_dump(fields, sort_keys=False, allow_unicode=True, default_flow_style=None, width=200)
    why = (
        [
            f"# seeds: for the ledger, none of the pilot's {span(pilot)}: "
            "the expectations are chosen on those, so only fresh seeds test them"
        ]
        if seeds is not None and pilot
        else []
    )
    lines = why + text.splitlines() + ["expect:"]
    for name, v in sorted(metrics.items()):
        values = v["seeds"] or [v["value"]]
        if len(values) > 1:
            mean, sd = mean_sd(values)
            lines.append(
                f"# {name}: mean - 3 sd = {mean - 3 * sd:.4g}, mean + 3 sd = {mean + 3 * sd:.4g} "
                f"(over {len(values)} seeds; a suggestion, not the source's size)"
            )
    return "".join(f"    {line}\n" for line in lines)
