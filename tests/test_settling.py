"""Seeds as data, the power plan of an open question, and settling runs that cannot p-hack, on a knowledge base
whose verifiers read their seeds from the record."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from scipy import stats

from assay import power
from assay.cli import main
from assay.ledger import store
from assay.records.knowledge_base import load
from tests.verify_kb import SOURCE

CLAIM = """\
id: SOTA-001
title: The gap is above a quarter
statement: The gap is above a quarter.
citations:
  - {{source: LIT-001, locator: "§1", quote: "Two is more than one."}}
checks:
{checks}
"""

CHECK = """\
  - id: {id}
    tests: The gap is above a quarter.
    verifier: verify/test_kb.py::test_{name}
    tier: toy
    devices: [cpu]
    timeout: 60
    seeds: {{count: 3}}
    metrics:
      - {{name: gap, unit: units, measures: the gap per seed}}
      - {{name: null_gap, unit: units, measures: the gap of a model without the effect}}
    expect:
      - {{metric: gap, op: ">", value: 0.25, seeds: mean, against: [null_gap]}}
"""

VERIFIER = """
@pytest.mark.claim("SOTA-001", "{id}")
def test_{name}(evidence, seeds):
    values = [0.3 + 0.1 * (s % 3 - 1) for s in seeds]  # 0.2, 0.3, 0.4, ... by seed: mean 0.3
    evidence.metric("gap", sum(values) / len(values), unit="units", seeds=values)
    evidence.metric("null_gap", 0.0, unit="units", seeds=[0.0 for _ in seeds])
"""


def make_kb(root: Path, checks: list[str]) -> Path:
    for folder in ("sources", "claims", "verify"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "sources" / "LIT-001.yaml").write_text(SOURCE)
    body = "".join(CHECK.format(id=c, name=c.replace("-", "_")) for c in checks)
    (root / "claims" / "SOTA-001.yaml").write_text(CLAIM.format(checks=body))
    (root / "verify" / "__init__.py").write_text("")
    code = "import pytest\n" + "".join(VERIFIER.format(id=c, name=c.replace("-", "_")) for c in checks)
    (root / "verify" / "test_kb.py").write_text(code)
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\naddopts = "-p no:cacheprovider"\n')
    return root


def result(root: Path, check: str):
    return store.read_result(root, store.ledger_path(root, "SOTA-001", check, "cpu"))


def set_cpu(root: Path, check: str, cpu_s: float) -> None:
    path = store.ledger_path(root, "SOTA-001", check, "cpu")
    data = json.loads(path.read_text())
    data["cpu_s"] = cpu_s
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


@pytest.mark.parametrize(
    ("mean", "sd", "threshold", "level"), [(0.3, 0.1, 0.25, 0.95), (0.01, 0.02, 0.0, 0.9), (1.0, 3.0, 0.2, 0.95)]
)
def test_the_power_figure_is_the_least_n_whose_t_interval_clears_the_threshold(mean, sd, threshold, level):
    n = power.needed(mean, sd, threshold, level)
    half = lambda k: stats.t.ppf(0.5 + level / 2, k - 1) * sd / math.sqrt(k)  # noqa: E731 - the direct computation
    assert n is not None and half(n) < abs(mean - threshold) <= half(n - 1)


def test_an_effect_the_size_of_the_threshold_is_not_decidable_at_this_scale():
    assert power.needed(0.25, 0.1, 0.25, 0.95) is None
    assert power.needed(0.251, 0.1, 0.25, 0.95) is None  # it would take more than MAX_SEEDS


def test_seeds_in_the_record_reach_the_verifier_and_settling_reads_only_fresh_ones(tmp_path, capsys):
    root = make_kb(tmp_path / "kb", ["cheap", "dear"])
    run = subprocess.run([sys.executable, "-m", "pytest", "verify", "-q"], cwd=root, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout  # inconclusive is an open question, not a failure
    first = result(root, "cheap")
    assert (first.verdict, first.seeds_used, first.expectation[0].seeds_total) == ("inconclusive", [0, 1, 2], 3)
    set_cpu(root, "cheap", 3.0)  # 1 s a seed
    set_cpu(root, "dear", 30.0)  # 10 s a seed
    (plan,) = [p for p in power.plans(load(root), store.read_ledger(root)) if p.check == "cheap"]
    direct = next(
        k for k in range(2, 65) if stats.t.ppf(0.975, k - 1) * plan.sd / math.sqrt(k) < abs(plan.mean - 0.25)
    )  # the t interval computed directly
    assert (plan.seeds_read, plan.seeds_needed, plan.seconds) == (3, direct, pytest.approx(direct * 1.0))
    assert main(["--root", str(root), "plan"]) == 0
    out = capsys.readouterr().out
    assert f"    {direct} fresh seeds would decide it (holds: the interval clear of 0.25) if the mean 0.3 and sd 0.1 held" in out
    assert f"settling on cpu: 2 check(s), about {direct * 11:.0f} s" in out

    assert main(["--root", str(root), "verify", "--settle", "--budget", "1m", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert f"settle SOTA-001/cheap.cpu: {direct} fresh seeds from 1000 (" in out
    assert f"not settled: SOTA-001/dear.cpu: about {direct * 10:.0f} s, over the budget" in out
    assert "merged into results/: 0 added, 1 replaced, 0 kept, 0 conflict(s)" in out  # other seeds: no conflict
    settled = result(root, "cheap")
    fresh = list(range(1000, 1000 + direct))
    assert settled.seeds_used == fresh and not set(fresh) & {0, 1, 2}
    assert settled.expectation[0].seeds_total == direct  # read on its own seeds alone
    assert settled.verdict == "passed" and settled.unstable is None
    assert (settled.settling.seeds, settled.settling.before_verdict, settled.settling.before_seeds) == (
        fresh,
        "inconclusive",
        [0, 1, 2],
    )
    assert settled.settling.before_expectation[0].outcome == "inconclusive"
    assert result(root, "dear").settling is None  # left as it was

    assert main(["--root", str(root), "verify", "--settle", "--device", "cpu", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "SOTA-001/cheap" not in out  # settled with these inputs: not settled again
    assert "settle SOTA-001/dear.cpu:" in out


def test_a_verifier_that_asks_for_seeds_its_record_does_not_give_is_an_error_naming_the_field(tmp_path):
    root = make_kb(tmp_path / "kb", ["cheap"])
    path = root / "claims" / "SOTA-001.yaml"
    path.write_text(path.read_text().replace("    seeds: {count: 3}\n", ""))
    run = subprocess.run([sys.executable, "-m", "pytest", "verify", "-q"], cwd=root, capture_output=True, text=True)
    assert run.returncode == 1
    assert "SOTA-001/cheap declares no seeds, but its verifier asks for them; add to the check seeds: {count: N}" in (
        result(root, "cheap").last_error.message
    )


def test_a_records_seeds_stay_below_the_settling_range(tmp_path, capsys):
    root = make_kb(tmp_path / "kb", ["cheap"])
    path = root / "claims" / "SOTA-001.yaml"
    path.write_text(path.read_text().replace("seeds: {count: 3}", "seeds: {count: 3, first: 998}"))
    assert main(["--root", str(root), "check"]) == 1
    assert "seeds 998..1000 reach 1000: seeds from 1000 on are kept for settling runs" in capsys.readouterr().out


def test_a_seeds_change_in_the_record_makes_the_result_stale(tmp_path):
    root = make_kb(tmp_path / "kb", ["cheap"])
    subprocess.run([sys.executable, "-m", "pytest", "verify", "-q"], cwd=root, capture_output=True, check=True)
    path = root / "claims" / "SOTA-001.yaml"
    path.write_text(path.read_text().replace("seeds: {count: 3}", "seeds: {count: 5}"))
    from tests.conftest import load_states

    _, states = load_states(root)
    assert states["SOTA-001"].checks[0].stale == ["the definition of check cheap in SOTA-001 changed"]


def test_measure_runs_a_verifier_whose_check_is_not_in_the_record_yet_and_writes_no_ledger(tmp_path):
    root = make_kb(tmp_path / "kb", ["cheap"])
    extra = VERIFIER.format(id="draft", name="draft")  # marked for a check the record does not have
    (root / "verify" / "test_kb.py").write_text((root / "verify" / "test_kb.py").read_text() + extra)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "verify", "--measure", "--claim", "SOTA-001", "--check", "draft", "-q"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout
    out = run.stdout
    assert "assay: measured (nothing judged, no ledger written)" in out
    assert "SOTA-001/draft on seeds 0..4" in out  # --measure-seeds: 5 by default
    row = next(line for line in out.splitlines() if line.strip().startswith("gap "))
    assert row.split()[:6] == ["gap", "5", "0.28", "0.0837", "0.2", "0.4"] and row.endswith("units")
    assert "    - {name: gap, unit: units, measures: WHAT IT MEASURES}" in out
    assert "    # gap: mean - 3 sd = 0.029, mean + 3 sd = 0.531 (over 5 seeds; a suggestion, not the source's size)" in out
    assert "SOTA-001/cheap" not in out  # --check: only the draft
    assert not (root / "results").exists()


def test_a_settling_run_scales_the_checks_cpu_limit_by_its_seeds(tmp_path):
    from assay.evidence import settling

    root = make_kb(tmp_path / "kb", ["cheap"])
    claim = load(root).claims["SOTA-001"]
    check = claim.check("cheap")  # timeout 60, seeds: {count: 3}
    assert settling.cpu_limit({}, claim, check) == 60.0
    assert settling.cpu_limit({"SOTA-001/cheap": {"seeds": list(range(1000, 1018))}}, claim, check) == 360.0
