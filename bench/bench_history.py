"""Time reading a long history: a generated repository of N commits (default 1,000), each changing one claim's
record (a threshold) or one of its ledger files, read by ``assay.ledger.history`` cold (no summaries cached) and
warm (cached), and every check's expectations registered from it. Target: warm under 5 s at 1,000 commits.

usage: .venv/bin/python bench/bench_history.py [--commits N] [--claims K]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from assay.ledger import history, registration  # noqa: E402

TARGET_WARM_S = 5.0


def record(cid: str, value: float) -> str:
    return (
        f"id: {cid}\ntitle: t\nchecks:\n  - id: k\n    expect:\n"
        f"      - {{metric: gap, op: '>', value: {value}, seeds: mean, against: [gap_null]}}\n"
        "      - {metric: null_gap, op: '<', value: 0.05, control: true, against: [gap]}\n"
    )


def result(cid: str, measured: float, n: int) -> str:
    points = [
        {"metric": "gap", "op": ">", "value": 0.1, "measured": measured, "outcome": "holds" if measured > 0.1 else "fails"},
        {"metric": "null_gap", "op": "<", "value": 0.05, "measured": 0.01, "outcome": "holds"},
    ]
    return json.dumps({"claim": cid, "check": "k", "device": "cpu", "verdict": "passed", "expectation": points, "n": n})


def build(root: Path, commits: int, claims: int) -> None:
    """One ``git fast-import`` stream: commit n changes claim n // 2 % claims: its record on even n, its result on odd."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    lines = []
    for n in range(commits):
        cid = f"SOTA-{n // 2 % claims + 1:04d}"
        path, data = (
            (f"claims/{cid}.yaml", record(cid, 0.1 + (n // 2 % 3) * 0.01))
            if n % 2 == 0
            else (f"results/{cid}/k.cpu.json", result(cid, 0.08 + (n % 7) * 0.01, n))
        )
        blob = data.encode()
        msg = f"commit {n}".encode()
        lines += [b"commit refs/heads/main", f"committer b <b@example.org> {1_700_000_000 + n * 60} +0000".encode()]
        lines += [f"data {len(msg)}".encode(), msg]
        lines += [f"M 100644 inline {path}".encode(), f"data {len(blob)}".encode(), blob, b""]
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input=b"\n".join(lines) + b"\n", check=True)
    subprocess.run(["git", "checkout", "-q", "main"], cwd=root, check=True)


def register_all(h: history.History, claims: int) -> int:
    n = 0
    for k in range(claims):
        cid = f"SOTA-{k + 1:04d}"
        ch = h.check(cid, "k")
        today = ch.specs[-1][1] if ch.specs else ()
        latest = {d: v[-1][1] for d, v in ch.results.items()}
        n += len(registration.register(ch, today or (), latest))
    return n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--claims", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["ASSAY_CACHE_DIR"] = str(Path(tmp) / "cache")
        repo = Path(tmp) / "repo"
        t0 = time.perf_counter()
        build(repo, args.commits, args.claims)
        print(f"built {args.commits} commits over {args.claims} claims in {time.perf_counter() - t0:.1f} s")
        rows = []
        for label in ("cold", "warm", "warm"):
            t0 = time.perf_counter()
            h = history.read(repo)
            read_s = time.perf_counter() - t0
            registered = register_all(h, args.claims)
            total = time.perf_counter() - t0
            rows.append((label, read_s, total, len(h.commits), registered))
        for label, read_s, total, commits, registered in rows:
            print(f"{label}: read {read_s:.3f} s, with {registered} expectations registered {total:.3f} s ({commits} commits)")
        warm = min(r[2] for r in rows[1:])
        verdict = "holds" if warm < TARGET_WARM_S else "MISSED"
        ratio = warm / TARGET_WARM_S
        print(f"warm {warm:.3f} s against the {TARGET_WARM_S:.0f} s target at {args.commits} commits: {ratio:.3f} ({verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
