"""The core at scale: `assay check`, `status`, `show`, `graph` and `export json` on 1,000 to 50,000 claims.

For each size: generate a knowledge base in a temp dir (sources, one per ten claims, comparing
themselves with the one before; claims citing one or two of them, in depends_on chains of 1,000 with
`supports` links across; two checks per claim, each with a ledger entry; a verifier module per 100
claims whose tests carry the claim markers), then run each command as a child process and print its
wall and CPU seconds and peak memory (the command's own: ``measure.py``), the ratio to the smaller size
before it (linear: the ratio of the sizes), and whether the targets hold: `check` and `status` in 2 s
at 10,000 claims and 10 s at 50,000, 2 GB at most at 50,000.

`check, cold` is the first run after a clone, with an empty cache (``assay.cache``, kept in the temp
dir): it parses every file, and is held to targets of its own: 2 s at 10,000 claims, 20 s at 50,000. Every other
command runs with the cache as the runs before it left it, the fastest of ``--repeat`` runs (the first
`status` computes every claim's status, the next one finds them kept). Every verifier module writes a
file when it is imported; the benchmark fails if any command imported one.

    python bench/bench_core.py [--sizes 1000,10000,50000] [--keep DIR] [--repeat 2]

The floor: the same files read and parsed by libyaml's ``CSafeLoader`` (records) and ``json`` (ledger) alone, in
one process (``FLOOR``), run just before each command's first run; each command's CPU seconds are printed beside it
as a ratio: its first run over the floor just before it, its fastest over the fastest floor, so that two runs compare
as ratios measured in the same minutes, whatever the shared machine's speed (it moved by 38% within one run).

Records are written as strings (no YAML emitter), and the same values validated as models, so the
ledger can be computed without loading what was just written; at the smallest size the loaded
knowledge base is compared with them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from measure import measured, reference_seconds  # noqa: E402

from assay.model import Claim

CHAIN = 1000  # claims per depends_on chain
PER_MODULE = 100  # claims per verifier module
CHECKS = ("effect", "control")
COMMANDS = {  # name -> arguments after `assay`, with {id} for a claim in the middle of the knowledge base
    "check, cold": ["check"],  # the first run: nothing cached yet
    "check": ["check"],
    "status": ["status"],
    "show": ["show", "{id}"],
    "graph": ["graph", "--focus", "{id}", "--depth", "2"],
    "export json": ["export", "json"],
}
#: seconds allowed to `check` and `status`, by number of claims
TIME_TARGETS = {10_000: 2.0, 50_000: 10.0}
#: seconds allowed to the first `check` after a clone (an empty cache), by number of claims
COLD_TARGETS = {10_000: 2.0, 50_000: 20.0}
MEMORY_TARGET = (50_000, 2048.0)  # claims, MB
#: The floor: every record parsed by libyaml and every ledger file by json, nothing else.
FLOOR = """\
import json, os, sys, yaml
root = sys.argv[1]
for folder in ("claims", "sources", "decisions"):
    for e in os.scandir(os.path.join(root, folder)):
        with open(e.path, "rb") as fh:
            yaml.load(fh.read(), Loader=yaml.CSafeLoader)
for d in os.scandir(os.path.join(root, "results")):
    for e in os.scandir(d.path):
        if e.name.endswith(".json"):
            with open(e.path, "rb") as fh:
                json.loads(fh.read())
"""
#: Written at the top of every verifier module: importing one leaves a file behind.
IMPORT_TRAP = "import pathlib\n\npathlib.Path(__file__).with_suffix('.imported').write_text('imported')\n"


# --- a knowledge base, written as strings --------------------------------------------------------


def _plain(value: Any) -> str:
    if isinstance(value, str):
        return value if re.fullmatch(r"[A-Za-z§][A-Za-z0-9 .,§()_/-]*", value) and not value.endswith(" ") else json.dumps(value)
    return json.dumps(value)


def to_yaml(data: dict[str, Any], indent: str = "") -> str:
    """Block YAML for the shapes records have: mappings, lists of mappings, lists of scalars, scalars."""
    out = []
    for key, value in data.items():
        if isinstance(value, dict):
            out.append(f"{indent}{key}:\n{to_yaml(value, indent + '  ')}")
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            out.append(f"{indent}{key}:\n")
            for item in value:
                body = to_yaml(item, indent + "    ")
                out.append(f"{indent}  - {body[len(indent) + 4 :]}")
        elif isinstance(value, list):
            out.append(f"{indent}{key}: [{', '.join(_plain(v) for v in value)}]\n")
        else:
            out.append(f"{indent}{key}: {_plain(value)}\n")
    return "".join(out)


def _write(path: Path, schema: str, data: dict[str, Any]) -> None:
    path.write_text(f"# yaml-language-server: $schema=../schema/{schema}.schema.json\n" + to_yaml(data))


def source(i: int, n_sources: int) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": f"LIT-{1000 + i}",
        "kind": "paper",
        "title": f"Bench source number {i}",
        "authors": ["Ada Author", "Bo Writer"],
        "year": 2000 + 25 * i // n_sources,
        "identifiers": {"arxiv": f"2001.{i % 99999:05d}v1"},
        "takeaways": [f"Takeaway of source {i}."],
        "tags": [f"t{i % 20}"],
    }
    if i:
        data["compared_against"] = [
            {
                "source": f"LIT-{999 + i}",
                "locator": "Table 2",
                "reason": "It reports the earlier method beside its own.",
                "decision": "ADR-001",
            }
        ]
    return data


def claim(i: int, n_claims: int, n_sources: int, rng: random.Random) -> dict[str, Any]:
    cid = f"SOTA-{1000 + i}"
    cites = sorted({rng.randrange(n_sources) for _ in range(rng.choice((1, 2)))})
    relations = [{"type": "depends_on", "target": f"SOTA-{999 + i}"}] if i % CHAIN else []
    if i > 10 and rng.random() < 0.3:
        relations.append({"type": "supports", "target": f"SOTA-{1000 + rng.randrange(i)}", "note": "Same mechanism."})
    module = f"verify/test_bench_{i // PER_MODULE:04d}.py"
    return {
        "id": cid,
        "title": f"Bench claim {i} about topic {i % 50}",
        "statement": f"Claim {i} holds under condition {i % 13}, and its control shows no effect.",
        "conditions": [f"Condition {i % 13} holds."],
        "citations": [
            {"source": f"LIT-{1000 + s}", "locator": f"§{1 + i % 7}.{i % 3}", "quote": f"Words of source {s} for claim {i}."}
            for s in cites
        ],
        "relations": relations,
        "checks": [
            {
                "id": check,
                "tests": f"The {check} metric of claim {i} is on the right side of its threshold.",
                "verifier": f"{module}::test_sota_{1000 + i}_{check}",
                "tier": ("analytic", "toy", "reduced", "full")[i % 4],
                "devices": ["cpu"],
                "metrics": [
                    {"name": "score", "unit": "fraction", "measures": "The bench score of the claim."},
                    {"name": "baseline", "unit": "fraction", "measures": "The score of a model without the effect."},
                ],
                "expect": [  # each the other's counterpart, as a record that could have failed names them
                    {"metric": "score", "op": ">=" if check == "effect" else "<", "value": 0.5, "against": ["baseline"]},
                    {"metric": "baseline", "op": "<", "value": 0.5, "control": True, "against": ["score"]},
                ],
            }
            for check in CHECKS
        ],
        "assertions": [
            {
                "id": "holds",
                "filed": [f"Claim {i} holds under condition {i % 13}"],
                "source": {"kind": "paraphrased", "citations": [1]},
                "evidence": [{"check": "effect", "stance": "supports"}],
            },
            {
                "id": "control",
                "filed": ["its control shows no effect.", f"Condition {i % 13} holds."],
                "source": {"kind": "not-in-source"},
                "evidence": [
                    {"check": "control", "stance": "supports", "metrics": ["score"], "because": "the baseline is the effect's"}
                ],
            },
        ],
        "tags": [f"t{i % 20}", "bench"],
    }


def verifier_module(first: int, last: int) -> str:
    tests = "".join(
        f'\n\n@pytest.mark.claim("SOTA-{1000 + i}", "{check}")\ndef test_sota_{1000 + i}_{check}(evidence):\n'
        f'    """Bench verifier: never run."""\n    evidence.metric("score", bench_helpers.score({i}))\n'
        f'    evidence.metric("baseline", 0.1)\n'
        for i in range(first, last)
        for check in CHECKS
    )
    return (
        f'"""Bench verifiers of claims {first} to {last - 1}."""\n\n{IMPORT_TRAP}\nimport pytest\n\n'
        f"from verify import bench_helpers\n{tests}"
    )


def make_kb(root: Path, n_claims: int, seed: int = 0) -> list[Claim]:
    """Write the knowledge base; return its claims as validated models (for the ledger)."""
    rng = random.Random(seed)
    for folder in ("claims", "sources", "decisions", "verify"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    _write(
        root / "decisions" / "ADR-001.yaml",
        "decision",
        {
            "id": "ADR-001",
            "title": "Comparisons point back in time",
            "status": "accepted",
            "date": "2025-01-01",
            "context": "Sources compare themselves with others.",
            "decision": "A link sits on the later source.",
            "consequences": "The validator checks the dates.",
        },
    )
    n_sources = max(2, n_claims // 10)
    for i in range(n_sources):
        _write(root / "sources" / f"LIT-{1000 + i}.yaml", "source", source(i, n_sources))
    (root / "verify" / "__init__.py").write_text(IMPORT_TRAP)
    (root / "verify" / "bench_helpers.py").write_text(IMPORT_TRAP + "\n\ndef score(i):\n    return (i * 7919 % 1000) / 1000\n")
    for first in range(0, n_claims, PER_MODULE):
        module = verifier_module(first, min(first + PER_MODULE, n_claims))
        (root / "verify" / f"test_bench_{first // PER_MODULE:04d}.py").write_text(module)
    claims = []
    for i in range(n_claims):
        data = claim(i, n_claims, n_sources, rng)
        _write(root / "claims" / f"{data['id']}.yaml", "claim", data)
        claims.append(Claim.model_validate(data))
    write_ledger(root, claims, rng)
    return claims


def write_ledger(root: Path, claims: list[Claim], rng: random.Random) -> None:
    """A result per check and device, in the ledger format of ``assay.ledger`` (update here when it changes).

    Written with plain writes: the plugin's fsync per file would make generating 100,000 of them slow.
    """
    from assay.fingerprints import input_hash
    from assay.ledger import store
    from assay.ledger.inputs import InputParts
    from assay.ledger.result import FORMAT, Environment, Evaluated, Inputs, Metric, Result, to_json

    inputs = InputParts(root)
    env = Environment(
        python="3.11.7",
        platform="linux-x86_64",
        hostname="0" * 16,
        packages={},
        torch_build="cpu",
        cpu_model="bench",
        cores=2,
        threads=1,
    )
    for c in claims:
        (root / "results" / c.id).mkdir(parents=True, exist_ok=True)
        for check in c.checks:
            for device in check.devices:
                parts = inputs.parts(c, check, device)
                score = rng.random()
                exp = check.expect[0]
                holds = exp.holds(score)
                if not holds:
                    rng.random()  # drawn as before, so the rest of the generated knowledge base stays the same
                result = Result(
                    format=FORMAT,
                    claim=c.id,
                    check=check.id,
                    device=device,
                    verdict="passed" if holds else "failed",  # a pass beside a failed expectation is refused
                    tier=check.tier,
                    metrics={"score": Metric(value=score, unit="fraction"), "baseline": Metric(value=0.1, unit="fraction")},
                    expectation=[
                        Evaluated(
                            metric=exp.metric,
                            op=exp.op,
                            value=exp.value,
                            measured=score,
                            holds=holds,
                            outcome="holds" if holds else "fails",
                            unit="fraction",
                        ),
                        Evaluated(
                            metric="baseline",
                            op="<",
                            value=0.5,
                            control=True,
                            measured=0.1,
                            holds=True,
                            outcome="holds",
                            unit="fraction",
                        ),
                    ],
                    duration_s=0.5,
                    cpu_s=0.4,
                    peak_memory_mb=100.0,
                    environment=env,
                    inputs=Inputs(hash=input_hash(parts), parts=parts),
                    finished="2025-01-01T00:00:00Z",
                )
                store.ledger_path(root, c.id, check.id, device).write_text(to_json(result))


# --- running the commands ----------------------------------------------------------------------


Row = dict[str, tuple[float, float, float]]  # command -> (wall s, CPU s, peak MB): the fastest run; "<name> first": the first


def run(root: Path, args: list[str], cache: Path) -> tuple[float, float, float, int]:
    """Wall seconds, CPU seconds, peak RSS in MB and exit status of ``assay ARGS --root ROOT`` (``measure``)."""
    wall, cpu, mb, rc, stderr = measured(
        [sys.executable, "-m", "assay.cli", *args, "--root", str(root)], {**os.environ, "ASSAY_CACHE_DIR": str(cache)}
    )
    if rc not in (0, 1):
        sys.exit(f"assay {' '.join(args)} failed ({rc}): {stderr[-2000:]}")
    return wall, cpu, mb, rc


def imported(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in (root / "verify").rglob("*.imported"))


def bench(n: int, keep: Path | None, check_loaded: bool, repeat: int) -> Row:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "kb"
        t0 = time.perf_counter()
        claims = make_kb(root, n)
        print(f"{n:>6} claims: generated in {time.perf_counter() - t0:.1f} s", flush=True)
        if check_loaded:
            from assay.records.knowledge_base import load

            assert load(root).claims == {c.id: c for c in claims}, "the YAML written does not load as the models built"
        middle = f"SOTA-{1000 + n // 2}"
        row: Row = {}
        floors = []
        for name, args in COMMANDS.items():
            # the floor just before the command's first run: its ratio holds where the machine's speed moves within a run
            floors.append(measured([sys.executable, "-c", FLOOR, str(root)], os.environ)[:3])
            row[f"{name} floor"] = floors[-1]
            runs = []
            for _ in range(1 if name == "check, cold" else repeat):  # the machine is shared: the best of a few
                *figures, rc = run(root, [a.format(id=middle) for a in args], Path(tmp) / "cache")
                runs.append(tuple(figures))
                if name.startswith("check") and rc != 0:
                    subprocess.run([sys.executable, "-m", "assay.cli", "check", "--root", str(root)])
                    sys.exit("the generated knowledge base does not check clean")
                if imported(root):
                    sys.exit(f"assay {name} imported verifier modules: {imported(root)[:5]}")
            row[name], row[f"{name} first"] = min(runs), runs[0]
        row["floor"] = min(floors)
        if keep:
            shutil.copytree(root, keep / f"kb-{n}", dirs_exist_ok=True)
        return row


def table(rows: dict[int, Row]) -> str:
    """Per size: wall seconds, CPU seconds, peak MB; then the ratio of wall seconds between sizes."""
    sizes = sorted(rows)
    head = f"{'command':<13}" + "".join(f"{f'{n:,} wall':>13}{'cpu':>7}{'MB':>7}" for n in sizes)
    head += "".join(f"{f'x{b // a} ratio':>11}" for a, b in zip(sizes, sizes[1:]))
    lines = [head, "-" * len(head)]
    for name in COMMANDS:
        line = f"{name:<13}" + "".join(
            f"{rows[n][name][0]:>13.2f}{rows[n][name][1]:>7.2f}{rows[n][name][2]:>7.0f}" for n in sizes
        )
        line += "".join(f"{rows[b][name][0] / rows[a][name][0]:>11.1f}" for a, b in zip(sizes, sizes[1:]))
        lines.append(line)
    lines.append(f"{'floor':<13}" + "".join(f"{w:>13.2f}{c:>7.2f}{mb:>7.0f}" for n in sizes for w, c, mb in [rows[n]["floor"]]))
    lines.append("")
    lines.append(
        "CPU s / floor's CPU s: first run / the floor just before it, and fastest / fastest floor: "
        + ", ".join(f"{n:,} claims" for n in sizes)
    )
    for name in COMMANDS:
        lines.append(
            f"{name:<13}"
            + "".join(
                f"{rows[n][name + ' first'][1] / rows[n][name + ' floor'][1]:>9.2f}{rows[n][name][1] / rows[n]['floor'][1]:>7.2f}"
                for n in sizes
            )
        )
    return "\n".join(lines)


def targets(rows: dict[int, Row]) -> list[str]:
    out = []
    for n, limit in TIME_TARGETS.items():
        if n in rows and n in COLD_TARGETS:
            s, cold = rows[n]["check, cold"][0], COLD_TARGETS[n]
            out.append(f"check, cold at {n:,} claims: {s:.2f} s (target {cold:g} s) {'holds' if s <= cold else 'MISSED'}")
        for name in ("check", "status"):
            if n in rows:
                s = rows[n][name][0]
                out.append(f"{name} at {n:,} claims: {s:.2f} s (target {limit:g} s) {'holds' if s <= limit else 'MISSED'}")
    n, limit = MEMORY_TARGET
    if n in rows:
        mb = max(mb for _, _, mb in rows[n].values())
        out.append(f"peak memory at {n:,} claims: {mb:.0f} MB (target {limit:g} MB) {'holds' if mb <= limit else 'MISSED'}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,50000")
    ap.add_argument("--keep", type=Path, help="copy each generated knowledge base here (kb-N) for profiling")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each warm command; the fastest is shown")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    before = reference_seconds()
    print(f"reference work (measure.reference_seconds): {before:.3f} CPU s", flush=True)
    rows = {}
    for n in sizes:
        rows[n] = bench(n, args.keep, n == min(sizes), args.repeat)
        print(table(rows), flush=True)
    print("\nno command imported a verifier module")
    print("\n".join(targets(rows)))
    print(f"reference work: {before:.3f} CPU s before, {reference_seconds():.3f} after: the machine's speed beside the seconds")


if __name__ == "__main__":
    main()
