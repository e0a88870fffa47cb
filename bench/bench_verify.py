"""Time the verifiers: per-check wall time and the run's total against the issue budgets.

Runs `pytest verify -n 2 --no-ledger` once (the ledger is left as it is), reads the per-test times from
a JUnit XML report, and prints each check's time, its share of the 30 s per-check limit, and each
claim group's wall time against its budget. One run, ratios from that run: the machine is shared.

usage: .venv/bin/python bench/bench_verify.py [--claim ID ...]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PER_CHECK_S = 30.0
#: Wall-clock budgets of the issues, for all checks of these claims together with -n 2.
BUDGETS = {("SOTA-364",): 90.0}
OTHERS_BUDGET = 120.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claim", action="append", default=[])
    args = parser.parse_args()
    rows = []
    walls = {}
    groups = [c for c in BUDGETS] + [None]
    for group in groups:
        claims = list(group) if group else []
        with tempfile.TemporaryDirectory() as tmp:
            xml = Path(tmp) / "junit.xml"
            cmd = [sys.executable, "-m", "pytest", "verify", "-n", "2", "-q", "--no-ledger", f"--junitxml={xml}", "-p", "no:cacheprovider"]
            for cid in args.claim or claims:
                cmd += ["--claim", cid]
            if group is None and not args.claim:
                cmd += ["-k", " and ".join(f"not {c.lower().replace('-', '')}" for g in BUDGETS for c in g)]
            start = time.perf_counter()
            subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            walls[group] = time.perf_counter() - start
            for case in ET.parse(xml).getroot().iter("testcase"):
                rows.append((float(case.get("time", 0)), f"{case.get('classname')}::{case.get('name')}"))
        if args.claim:
            break
    print(f"{'seconds':>8} {'of 30 s':>8}  test")
    for seconds, name in sorted(rows, reverse=True):
        print(f"{seconds:8.1f} {seconds / PER_CHECK_S:8.2f}  {name}")
    for group, wall in walls.items():
        budget = BUDGETS.get(group, OTHERS_BUDGET) if group else OTHERS_BUDGET
        label = ", ".join(group) if group else ("selected claims" if args.claim else "all other claims")
        print(f"wall {wall:6.1f} s for {label} with -n 2: {wall / budget:.2f} of the {budget:.0f} s budget")
    return 0


if __name__ == "__main__":
    sys.exit(main())
