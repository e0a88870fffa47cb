"""The knowledge base's CPU checks as a SLURM job array of N shards, against `pytest verify -n 2` on this machine.

Both runs work on a copy of the knowledge base (the repository's ledger is not touched) with no ledger, so
every check runs. The array goes to the local one-node SLURM that scripts/slurm-local.sh starts (and stops)
unless SLURM_CONF names a running one. Printed: the wall time of each run and their ratio; whether the
verdicts agree check by check; and per task the scheduling overhead, the task's time in SLURM (start to
end) less the time pytest ran inside it, and the wait from submission to its start. One run of each:
the machine is shared, so only ratios from one invocation mean anything.

usage: .venv/bin/python bench/bench_cluster.py [--tasks N] [--claim ID ...]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COPIED = ("claims", "sources", "decisions", "verify", "pyproject.toml", "requirements.lock")


def copy_kb(dest: Path) -> Path:
    for name in COPIED:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.is_file():
            shutil.copy2(src, dest / name)
    return dest


def verdicts(root: Path) -> dict[str, str]:
    from assay.ledger.store import read_ledger

    return {f"{c}/{k}": r.status for (c, k, d), r in read_ledger(root).results.items() if d == "cpu"}


def local_run(root: Path, claims: list[str]) -> float:
    cmd = [sys.executable, "-m", "pytest", "verify", "-n", "2", "-q", "--device", "cpu", "-p", "no:cacheprovider"]
    cmd += [a for c in claims for a in ("--claim", c)]
    start = time.perf_counter()
    subprocess.run(cmd, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def slurm_run(root: Path, claims: list[str], tasks: int, env: dict) -> tuple[float, float]:
    cmd = [sys.executable, "-m", "assay.cli", "--root", str(root), "verify", "--executor", "slurm", "--device", "cpu"]
    cmd += [a for c in claims for a in ("--claim", c)] + ["--tasks", str(tasks)]
    submitted = time.time()
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"assay verify --executor slurm failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return wall, submitted


def overheads(root: Path, submitted: float, env: dict) -> list[tuple[str, float, float, float]]:
    """Per task: (job id, seconds in SLURM, seconds pytest ran, seconds from submission to start)."""
    state = json.loads((root / "build" / "verify" / "state.json").read_text())
    rows = []
    for task in state["tasks"]:
        out = subprocess.run(["scontrol", "show", "job", task["job_id"]], env=env, capture_output=True, text=True).stdout
        fields = dict(f.split("=", 1) for f in out.split() if "=" in f)
        start, end = (_epoch(fields.get(k, "")) for k in ("StartTime", "EndTime"))
        result = root / state["submitit_folder"] / f"{task['job_id']}_0_result.pkl"
        with open(result, "rb") as fh:
            inside = pickle.load(fh)[1]["seconds"]
        rows.append((task["job_id"], end - start, inside, start - submitted))
    return rows


def _epoch(text: str) -> float:
    return (
        datetime.strptime(text, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp()
        if text and text[0].isdigit()
        else float("nan")
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tasks",
        type=int,
        default=os.cpu_count() or 1,
        help="shards of the array (default: this machine's CPUs, the cores -n 2 uses here)",
    )
    parser.add_argument("--claim", action="append", default=[], help="only this claim's checks (repeatable)")
    args = parser.parse_args()
    env = dict(os.environ, PATH=os.environ.get("PATH", "") + ":/usr/sbin", TZ="UTC")
    missing = [b for b in ("slurmctld", "slurmd", "munged", "sbatch") if shutil.which(b, path=env["PATH"]) is None]
    if missing:
        print(f"bench_cluster: skipped, SLURM is not installed ({', '.join(missing)}); make slurm installs it")
        return 0
    with tempfile.TemporaryDirectory(prefix="assay-bench-") as tmp:
        cluster = None
        if "SLURM_CONF" not in env:
            cluster = Path(tmp) / "slurm"
            subprocess.run(
                ["bash", str(ROOT / "scripts" / "slurm-local.sh"), "start", str(cluster)],
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
            )
            env["SLURM_CONF"] = str(cluster / "slurm.conf")
        try:
            local = copy_kb(Path(tmp) / "local")
            t_local = local_run(local, args.claim)
            array = copy_kb(Path(tmp) / "array")
            t_array, submitted = slurm_run(array, args.claim, args.tasks, env)
            rows = overheads(array, submitted, env)
        finally:
            if cluster is not None:
                subprocess.run(
                    ["bash", str(ROOT / "scripts" / "slurm-local.sh"), "stop", str(cluster)], env=env, stdout=subprocess.DEVNULL
                )
        here, there = verdicts(local), verdicts(array)
    same = sum(here.get(k) == v for k, v in there.items())
    print(f"checks: {len(here)} with -n 2, {len(there)} through SLURM; the same verdict for {same} of {len(there)}")
    for key in sorted(k for k in set(here) | set(there) if here.get(k) != there.get(k)):
        print(f"  {key}: {here.get(key)} with -n 2, {there.get(key)} through SLURM")
    print(
        f"wall: {t_local:.1f} s with pytest -n 2; {t_array:.1f} s as an array of {len(rows)} task(s) "
        f"({t_array / t_local:.2f} of the local run)"
    )
    print(f"{'task':>8} {'in SLURM':>9} {'pytest':>8} {'overhead':>9} {'waited':>7}")
    for job, in_slurm, inside, waited in rows:
        print(f"{job:>8} {in_slurm:8.0f}s {inside:7.1f}s {in_slurm - inside:8.1f}s {waited:6.0f}s")
    mean = sum(r[1] - r[2] for r in rows) / len(rows)
    print(f"scheduling overhead per task: {mean:.1f} s (SLURM's start-to-end less pytest's own time; 1 s resolution)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
