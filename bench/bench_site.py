"""Site build at scale: knowledge bases of 1,000 and 10,000 claims, built with MkDocs-Material.

For each size: generate sources, claims (with citations, relations, checks) and ledger entries in a
temp dir; time the generator alone, then `mkdocs build` of the Assay site (reading the parse cache the generator's
run left in the temp dir, as a build after `assay check` does), then `mkdocs build` of as
many plain Markdown pages (same theme and plugins) as the baseline; print, per size, a JSON row (wall
and CPU seconds of each build, their ratio, and its peak memory: the RSS of its largest process, and the sum of
the proportional set sizes of all its processes, for the Assay build forks workers), then open the graph page in headless
Chromium and print the time until its canvas has drawn it. At the end, one table of all sizes and
whether the targets hold: the Assay site builds within 1.5x of the plain pages (wall time) at 10,000 and
at 50,000 claims, with a peak under 2 GB at 50,000 (both figures); the graph interactive in under 3 s. The machine may
be shared: the CPU ratio is printed beside the wall ratio because it moves less with the neighbours' load.

    python bench/bench_site.py [--sizes 1000,10000] [--no-browser] [--keep DIR]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO))  # tests.browser: how the browser is launched, shared with the browser tests

from measure import measured  # noqa: E402

from assay.ledger import store
from assay.ledger.result import FORMAT, Environment, Evaluated, Inputs, Metric, Result, to_json
from assay.records.knowledge_base import load
from tests.browser import ARGS, CHROMIUM  # noqa: E402

VERIFIER = '"""Bench verifier: never run."""\n\n\ndef test_metric():\n    return 1.0\n'


def make_kb(root: Path, n_claims: int, seed: int = 0) -> None:
    """Sources (one per ten claims), claims citing one or two of them, depends_on to earlier claims, ledger."""
    rng = random.Random(seed)
    for folder in ("claims", "sources", "decisions", "verify"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "verify" / "bench_checks.py").write_text(VERIFIER)
    n_sources = max(2, n_claims // 10)
    for i in range(n_sources):
        sid = f"LIT-{1000 + i}"
        (root / "sources" / f"{sid}.yaml").write_text(
            "# yaml-language-server: $schema=../schema/source.schema.json\n"
            f"id: {sid}\nkind: paper\ntitle: Bench source number {i}\nauthors: [Ada Author, Bo Writer]\n"
            f"year: {2000 + i % 25}\nidentifiers:\n  arxiv: 2001.{i % 99999:05d}v1\n"
            f"anthology:\n  number: {1 + i // 26}\n  unit: {chr(65 + i % 26)}\n"
            f"takeaways:\n  - Takeaway of source {i}.\ntags: [t{i % 20}]\n"
        )
    tiers = ["analytic", "toy", "reduced", "full"]
    for i in range(n_claims):
        cid = f"SOTA-{1000 + i}"
        cites = sorted({rng.randrange(n_sources) for _ in range(rng.choice((1, 2)))})
        citations = "".join(
            f"  - source: LIT-{1000 + s}\n    locator: §{1 + i % 7}.{i % 3}\n    quote: words of source {s} for claim {i}\n"
            for s in cites
        )
        rel = (
            f"relations:\n  - type: depends_on\n    target: SOTA-{1000 + rng.randrange(i)}\n" if i and rng.random() < 0.4 else ""
        )
        (root / "claims" / f"{cid}.yaml").write_text(
            "# yaml-language-server: $schema=../schema/claim.schema.json\n"
            f"id: {cid}\ntitle: Bench claim {i} about topic {i % 50}\nstatement: Claim {i} holds under condition {i % 13}.\n"
            f"citations:\n{citations}{rel}checks:\n  - id: main\n    tests: The metric of claim {i} exceeds its threshold.\n"
            f"    verifier: verify/bench_checks.py::test_metric\n    tier: {tiers[i % 4]}\n    devices: [cpu]\n"
            f'    expect:\n      - metric: score\n        op: ">="\n        value: 0.5\ntags: [t{i % 20}, bench]\n'
        )
    kb = load(root)
    write_ledger(root, kb, rng)


def write_ledger(root: Path, kb, rng: random.Random) -> None:
    """A result for four claims in five, in the ledger format of ``assay.ledger`` (as bench_core.py writes it)."""
    from assay.fingerprints import input_hash
    from assay.ledger.inputs import InputParts

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
    for cid, claim in sorted(kb.claims.items()):
        if int(cid[5:]) % 5 == 4:
            continue  # some claims not run
        check, exp = claim.checks[0], claim.checks[0].expect[0]
        parts = inputs.parts(claim, check, "cpu")
        score = rng.random()
        result = Result(
            format=FORMAT,
            claim=cid,
            check=check.id,
            device="cpu",
            verdict="passed" if score >= 0.5 else "failed",
            tier=check.tier,
            metrics={"score": Metric(value=score, unit="fraction")},
            expectation=[
                Evaluated(
                    metric=exp.metric,
                    op=exp.op,
                    value=exp.value,
                    measured=score,
                    holds=score >= 0.5,
                    outcome="holds" if score >= 0.5 else "fails",
                )
            ],
            duration_s=0.5,
            cpu_s=0.4,
            peak_memory_mb=100.0,
            environment=env,
            inputs=Inputs(hash=input_hash(parts), parts=parts),
            finished="2025-01-01T00:00:00Z",
        )
        path = store.ledger_path(root, cid, check.id, "cpu")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(to_json(result))  # plain writes: one fsync per file would dominate the set-up


def _config(out: Path, docs_dir: Path, plugins: list, nav: list | None) -> Path:
    cfg = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    cfg.update(docs_dir=str(docs_dir), site_dir=str(out / "site"), plugins=plugins)
    if nav is not None:
        cfg["nav"] = nav
        cfg.pop("not_in_nav", None)
        cfg["not_in_nav"] = "/claims/\n"
        cfg.pop("extra_css"), cfg.pop("extra_javascript")
    path = out / "mkdocs.yml"
    path.write_text(yaml.safe_dump(cfg))
    return path


TARGET_RATIO, TARGET_SIZES = 1.5, (10_000, 50_000)  # the Assay build within 1.5x of plain pages at each size
TARGET_MB, TARGET_MB_SIZE = 2048, 50_000  # and its peak RSS under 2 GB at 50,000 claims


def _mkdocs(config: Path) -> tuple[float, float, float, float]:
    """Wall seconds, CPU seconds (user + system), peak RSS in MB of its largest process, and peak of the sum of its
    processes' proportional set sizes in MB (``_tree_pss``) of ``mkdocs build`` as a child (``measure``)."""
    argv = [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config)]
    peak, done = [0.0], threading.Event()
    poller = threading.Thread(target=_tree_pss, args=(str(config), peak, done), daemon=True)
    poller.start()
    try:
        wall, cpu, mb, rc, stderr = measured(argv, {**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    finally:
        done.set()
        poller.join()
    if rc:
        raise subprocess.CalledProcessError(rc, argv, stderr=stderr)  # what mkdocs said is in the error
    return wall, cpu, mb, peak[0]


def _tree_pss(config: str, peak: list[float], done: threading.Event) -> None:
    """The highest sum, sampled twice a second, of the proportional set size (``Pss`` of ``/proc/PID/smaps_rollup``:
    a page shared by n processes counts 1/n in each) of every ``mkdocs build`` process of ``config``: the build forks
    workers, whose memory the largest process's peak RSS leaves out. Stays 0 where ``/proc`` has no such file."""
    while not done.wait(0.5):
        total = 0
        for proc in Path("/proc").glob("[0-9]*"):
            try:
                cmd = (proc / "cmdline").read_bytes()
                if b"mkdocs\0build" in cmd and config.encode() in cmd and b"\0-c\0" not in cmd:  # not ``measure``'s
                    rollup = (proc / "smaps_rollup").read_text()
                    total += int(rollup.split("\nPss:", 1)[1].split()[0])  # KB
            except (OSError, IndexError, ValueError):
                continue  # gone, or not readable
        peak[0] = max(peak[0], total / 1024)


def plain_pages(out: Path, n: int) -> Path:
    docs = out / "docs"
    (docs / "claims").mkdir(parents=True)
    (docs / "index.md").write_text("# Home\n")
    for i in range(n):
        (docs / "claims" / f"C-{i}.md").write_text(
            f"# Claim {i}\n\nA plain page about claim {i}.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
        )
    return _config(out, docs, ["search", "offline"], ["index.md"])


def graph_ready_ms(site: Path) -> float:
    from playwright.sync_api import sync_playwright

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=str(CHROMIUM),
                args=ARGS,
            )
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"http://127.0.0.1:{httpd.server_address[1]}/graph.html")
            page.wait_for_function("document.body.dataset.graphReady === '1'", timeout=60_000)
            ms = page.evaluate("window.assayGraph.readyAt")
            browser.close()
            return ms
    finally:
        httpd.shutdown()


def bench(n: int, browser: bool, keep: Path | None = None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = keep / str(n) if keep else Path(tmp)
        tmp.mkdir(parents=True, exist_ok=keep is None)
        kb = tmp / "kb"
        # the parse cache in the temp dir, not the user's: the generator's run below fills it, and the build reads it, as
        # a build after `assay check` does (the main job's order)
        os.environ["ASSAY_CACHE_DIR"] = str(tmp / "cache")
        t0 = time.perf_counter()
        make_kb(kb, n)
        made = time.perf_counter() - t0
        from assay.site.generator import Site

        t0, c0 = time.perf_counter(), time.process_time()
        site = Site(kb)  # the generator alone, in one process, a claim page at a time as the build asks for them
        site.outputs()
        with open(os.devnull, "w", encoding="utf-8") as out:
            site.export(out)
        for page in site.claim_pages():
            page.render()
        gen, gen_cpu = time.perf_counter() - t0, time.process_time() - c0
        del site
        out = tmp / "assay"
        out.mkdir()
        config = _config(out, REPO / "site", ["search", "offline", {"assay": {"root": str(kb)}}], None)
        assay, assay_cpu, assay_rss, assay_pss = _mkdocs(config)
        plain_out = tmp / "plain"
        plain_out.mkdir()
        plain, plain_cpu, plain_rss, plain_pss = _mkdocs(plain_pages(plain_out, n))
        row = {
            "claims": n,
            "make_kb_s": round(made, 1),
            "generator_s": round(gen, 2),
            "generator_cpu_s": round(gen_cpu, 2),
            "assay_build_s": round(assay, 1),
            "plain_build_s": round(plain, 1),
            "assay_ms_per_claim": round(1000 * assay / n, 2),
            "plain_ms_per_page": round(1000 * plain / n, 2),
            "ratio": round(assay / plain, 2),
            "assay_cpu_s": round(assay_cpu, 1),
            "plain_cpu_s": round(plain_cpu, 1),
            "cpu_ratio": round(assay_cpu / plain_cpu, 2),
            "assay_peak_rss_mb": round(assay_rss),
            "plain_peak_rss_mb": round(plain_rss),
            "assay_peak_tree_pss_mb": round(assay_pss),
            "plain_peak_tree_pss_mb": round(plain_pss),
        }
        if browser and Path("/usr/bin/chromium").exists():
            row["graph_ready_ms"] = round(graph_ready_ms(out / "site"))
        return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--keep", type=Path, help="build in DIR/<size> and keep it (knowledge base, configs, sites)")
    args = ap.parse_args()
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        rows.append(bench(n, not args.no_browser, args.keep))
        print(json.dumps(rows[-1]), flush=True)
    summary(rows)


def summary(rows: list[dict]) -> None:
    """One table of every size, and whether each target holds."""
    print(
        f"{'claims':>7} {'generator s':>12} {'(cpu)':>7} {'assay build s':>14} {'(cpu)':>7} {'plain build s':>14} {'(cpu)':>7} "
        f"{'ratio':>6} {'cpu ratio':>10} {'assay peak RSS MB':>18} {'(all processes, PSS)':>21}"
    )
    for r in rows:
        print(
            f"{r['claims']:>7} {r['generator_s']:>12} {r['generator_cpu_s']:>7} {r['assay_build_s']:>14} {r['assay_cpu_s']:>7} "
            f"{r['plain_build_s']:>14} {r['plain_cpu_s']:>7} {r['ratio']:>6} {r['cpu_ratio']:>10} {r['assay_peak_rss_mb']:>18} "
            f"{r['assay_peak_tree_pss_mb']:>21}"
        )
    for size in TARGET_SIZES:
        at = [r for r in rows if r["claims"] == size]
        if not at:
            print(f"target ({TARGET_RATIO:g}x of plain pages at {size:,} claims): not measured in this run")
            continue
        verdict = "holds" if at[0]["ratio"] <= TARGET_RATIO else "MISSED"
        print(
            f"target ({TARGET_RATIO:g}x of plain pages at {size:,} claims): ratio {at[0]['ratio']} "
            f"(CPU ratio {at[0]['cpu_ratio']}): {verdict}"
        )
    at = [r for r in rows if r["claims"] == TARGET_MB_SIZE]
    if not at:
        print(f"target (peak under {TARGET_MB:,} MB at {TARGET_MB_SIZE:,} claims): not measured in this run")
    else:
        mb, tree = at[0]["assay_peak_rss_mb"], at[0]["assay_peak_tree_pss_mb"]
        print(
            f"target (peak under {TARGET_MB:,} MB at {TARGET_MB_SIZE:,} claims): {mb:,} MB in its largest process, "
            f"{tree:,} MB in all its processes together (PSS) (plain pages {at[0]['plain_peak_rss_mb']:,} MB): "
            f"{'holds' if max(mb, tree) < TARGET_MB else 'MISSED'}"
        )


if __name__ == "__main__":
    main()
