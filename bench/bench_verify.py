"""Time the verifiers against the budgets: every CPU check together, and each check's CPU time.

Runs `pytest verify -n 2` once with the ledger written to a temporary folder (`--ledger-root`; the
repository's results/ is left as it is), then prints each check's CPU seconds (from its ledger file:
the verifier's process time) against the 30 s per-check limit, its wall seconds, and the run's wall
time against the budget of 6 minutes for all CPU checks. Checks marked slow (`-m slow`: the blog's own
1,000-step grid) are left out, as `make` leaves them out. The confirming runs are printed apart: those
the ledger holds (a result that settled a check on fresh seeds, with its CPU seconds) and those still
planned (`assay verify --confirm`, with the cost estimated from the recorded CPU seconds per seed). One
run, ratios from that run: the machine is shared, so compare CPU seconds, which a busy machine inflates
far less than wall seconds.

usage: .venv/bin/python bench/bench_verify.py [--claim ID ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import reference_seconds  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PER_CHECK_CPU_S = 30.0  # issue budget: no single check over 30 s of CPU
ALL_CPU_CHECKS_S = 360.0  # budget: all CPU checks of the ledger together within 6 minutes with -n 2


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claim", action="append", default=[])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "verify",
            "-n",
            "2",
            "-q",
            "--device",
            "cpu",
            "--ledger-root",
            tmp,
            "-p",
            "no:cacheprovider",
            "-m",
            "not slow",
        ]
        for cid in args.claim:
            cmd += ["--claim", cid]
        start = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        rows = []
        for path in sorted(Path(tmp, "results").glob("*/*.cpu.json")):
            r = json.loads(path.read_text())
            rows.append((r.get("cpu_s") or 0.0, r["duration_s"], f"{r['claim']}/{r['check']}", r["verdict"]))
    print(f"{'CPU s':>7} {'of 30 s':>8} {'wall s':>7}  {'verdict':<14} check")
    for cpu, dur, name, verdict in sorted(rows, reverse=True):
        flag = "  OVER" if cpu > PER_CHECK_CPU_S else ""
        print(f"{cpu:7.1f} {cpu / PER_CHECK_CPU_S:8.2f} {dur:7.1f}  {verdict:<14} {name}{flag}")
    total_cpu = sum(r[0] for r in rows)
    print(f"{len(rows)} checks, {total_cpu:.0f} CPU s in all")
    label = ", ".join(args.claim) if args.claim else "every CPU check"
    most = max((r[0] for r in rows), default=0.0)
    print(
        f"wall {wall:.0f} s for {label} with -n 2 (target {ALL_CPU_CHECKS_S:.0f} s): {wall / ALL_CPU_CHECKS_S:.2f} of it, "
        f"{'holds' if wall <= ALL_CPU_CHECKS_S else 'MISSED'}"
    )
    print(
        f"most CPU of one check {most:.1f} s (target {PER_CHECK_CPU_S:.0f} s) {'holds' if most <= PER_CHECK_CPU_S else 'MISSED'}"
    )
    _confirming()
    print(f"reference work (measure.reference_seconds): {reference_seconds():.3f} CPU s: the machine's speed beside the seconds")
    return 0


def _confirming() -> None:
    """The confirming runs' cost, apart from the ledger's: recorded (the settling results in results/) and planned."""
    from assay.ledger.store import read_ledger
    from assay.power import settle_plans
    from assay.records.knowledge_base import load

    kb, ledger = load(ROOT), read_ledger(ROOT)
    cpu = [(key, r) for key, r in ledger.results.items() if key[2] == "cpu" and r.settling]
    done = [(r.cpu_s or r.duration_s, f"{c}/{k}", len(r.settling.seeds)) for (c, k, _), r in cpu]
    print(f"confirming runs recorded: {len(done)} checks, {sum(x[0] for x in done):.0f} CPU s in all (apart from the run above)")
    for cpu, name, n in sorted(done, reverse=True):
        print(f"  {cpu:7.1f} CPU s  {name} on {n} fresh seeds")
    plans, _ = settle_plans(kb, ledger, "cpu")
    cost = sum(p.seconds for p in plans)
    print(f"confirming runs planned (assay verify --confirm): {len(plans)}, about {cost:.0f} CPU s from the recorded s per seed")
    for p in plans:
        print(f"  {p.seconds:7.1f} CPU s  {p.claim}/{p.check}: {p.plan}")


if __name__ == "__main__":
    sys.exit(main())
