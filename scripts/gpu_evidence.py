#!/usr/bin/env python3
"""GPU evidence in one prepared run, for a GPU machine that is lent for minutes, bare and offline.

Such a machine has Python with a CUDA build of torch, pytest, pytest-xdist, scikit-learn and matplotlib
(``MACHINE_HAS``), but not the rest of what the pytest plugin imports (``WHEELHOUSE``) nor this project.

    python3 scripts/gpu_evidence.py wheelhouse     # here, online: build/wheelhouse, wheels for that machine's Python
    python3 scripts/gpu_evidence.py run            # there: install what is missing, run every cuda check, pack

``run`` installs the wheelhouse and the project (without dependencies, into build/gpu-evidence/packages, on PYTHONPATH)
when the plugin cannot be imported yet, runs ``pytest verify --device cuda`` with xdist under a wall limit
(SIGINT at the limit: pytest stops and keeps what finished), and leaves in ``--out`` (default ``$OUT``) the
log and one archive of the ledger it wrote, ``results-<device>.tar.gz``, for ``assay merge`` here. Only the
standard library is used before the install.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: What the GPU machine has: its torch build and these (with what they depend on).
MACHINE_HAS = ("torch", "pytest", "pytest-xdist", "scikit-learn", "matplotlib")
#: What the pytest plugin needs beyond them, at the versions of requirements.lock; `import` name beside each.
WHEELHOUSE = {
    "pydantic": "pydantic",
    "pydantic-core": "pydantic_core",
    "annotated-types": "annotated_types",
    "typing-extensions": "typing_extensions",
    "typing-inspection": "typing_inspection",
    "pyyaml": "yaml",
    "networkx": "networkx",
    "msgspec": "msgspec",  # the parse cache's data-only format (assay.corpus.cache)
    "defusedxml": "defusedxml",  # a recorded figure's SVG is read through it (assay.svg, from the recorder)
}
#: The build backend, to install the project from its source there (pyproject.toml's build-system).
BUILD = "setuptools>=77"
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")
WALL_S = 480  # 8 minutes of a 15-minute loan: the start, the install and the transfers take the rest


def lock_versions(root: Path = ROOT) -> dict[str, str]:
    """``name -> version`` of the lock file, names normalised (``PyYAML`` -> ``pyyaml``)."""
    pins = {}
    for line in (root / "requirements.lock").read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)", line)
        if m:
            pins[re.sub(r"[-_.]+", "-", m[1]).lower()] = m[2]
    return pins


def wheelhouse(dest: Path, python_version: str) -> int:
    """Download the wheels the GPU machine lacks, for its Python, into ``dest`` (replacing what was there)."""
    pins = lock_versions()
    missing = [name for name in WHEELHOUSE if name not in pins]
    if missing:
        print(f"requirements.lock pins none of {', '.join(missing)}; run make lock", file=sys.stderr)
        return 2
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.glob("*.whl"):
        old.unlink()
    wanted = [f"{name}=={pins[name]}" for name in WHEELHOUSE] + [BUILD]
    argv = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--no-deps",
        "--only-binary=:all:",
        "--implementation",
        "cp",
        "--python-version",
        python_version,
        "--dest",
        str(dest),
        *wanted,
    ]
    for platform in PLATFORMS:
        argv[argv.index("--dest") : argv.index("--dest")] = ["--platform", platform]
    done = subprocess.run(argv)
    if done.returncode == 0:
        wheels = sorted(dest.glob("*.whl"))
        size = sum(w.stat().st_size for w in wheels) / 2**20
        print(f"{dest}: {len(wheels)} wheels, {size:.1f} MiB, for Python {python_version}")
    return done.returncode


def run(root: Path, out: Path, device: str, workers: int, wall_s: float, wheels: Path, extra: list[str]) -> int:
    """Install what is missing, run every check declared for ``device``, pack the ledger and the log into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    work = root / "build" / "gpu-evidence"
    log = open(out / "gpu-evidence.log", "w", encoding="utf-8")

    lock = threading.Lock()

    def say(text: str) -> None:
        with lock:
            print(text, flush=True)
            log.write(text + "\n")
            log.flush()

    env = dict(os.environ, PYTHONUNBUFFERED="1")
    say(
        f"gpu-evidence: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}, device {device}, {workers} workers, "
        f"wall limit {wall_s:g} s"
    )
    if _stream([sys.executable, "-c", _FACTS], env, say) != 0:
        return 3
    if not _importable(env):
        site = work / "packages"
        if _install(root, wheels, site, env, say) != 0:
            return 3
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
        if not _importable(env):
            say("the pytest plugin still cannot be imported after the install; see above")
            return 3
    ledger = work / "ledger"
    _empty(ledger / "results")
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "verify",
        "--device",
        device,
        "-n",
        str(workers),
        "--dist",
        _dist(),
        "--ledger-root",
        str(ledger),
        "-q",
        "-p",
        "no:cacheprovider",
        "-rN",
        *extra,
    ]
    say("$ " + " ".join(argv))
    start = time.monotonic()
    code = _stream(argv, env, say, cwd=root, wall_s=wall_s)
    say(f"pytest ended with exit code {code} after {time.monotonic() - start:.0f} s")
    archive = out / f"results-{device}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(ledger / "results", arcname="results")
    _stream([sys.executable, "-c", _SUMMARY, str(ledger), device], env, say)
    say(
        f"packed: {archive.name} ({archive.stat().st_size / 1024:.0f} KiB); bring it back and run: "
        f"tar -xzf {archive.name} -C DIR && assay merge DIR"
    )
    log.close()
    return 0 if code in (0, 1) else code


_FACTS = """
import platform, torch
print(f"python {platform.python_version()}, torch {torch.__version__} (CUDA {torch.version.cuda}), "
      f"cuda available: {torch.cuda.is_available()}")
for i in range(torch.cuda.device_count()):
    p = torch.cuda.get_device_properties(i)
    print(f"gpu {i}: {p.name}, {p.total_memory / 2**30:.0f} GiB, capability {p.major}.{p.minor}")
import torch.distributed as dist
print(f"torch.distributed: nccl {dist.is_nccl_available()}, gloo {dist.is_gloo_available()}")
"""

_SUMMARY = """
import sys
from collections import Counter
from assay.ledger.store import read_ledger
ledger = read_ledger(sys.argv[1])
mine = {k: r for k, r in ledger.results.items() if k[2] == sys.argv[2]}
for (claim, check, device), r in sorted(mine.items()):
    print(f"{claim}/{check}.{device}: {r.status} ({r.duration_s:.1f} s)")
print("summary: " + ", ".join(f"{n} {s}" for s, n in sorted(Counter(r.status for r in mine.values()).items()))
      + f"; {len(ledger.diagnostics)} unreadable file(s)")
"""


def _dist() -> str:
    """worksteal where pytest-xdist has it (3.2 on): an idle worker takes checks queued on a busy one, so one long
    check does not end the run alone."""
    from importlib import metadata

    try:
        major, minor = (int(x) for x in metadata.version("pytest-xdist").split(".")[:2])
    except (metadata.PackageNotFoundError, ValueError):
        return "load"
    return "worksteal" if (major, minor) >= (3, 2) else "load"


def _importable(env: dict[str, str]) -> bool:
    probe = "import assay.pytest_plugin, " + ", ".join(WHEELHOUSE.values())
    return subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True).returncode == 0


def _install(root: Path, wheels: Path, site: Path, env: dict[str, str], say) -> int:
    files = sorted(str(w) for w in wheels.glob("*.whl") if not w.name.startswith("setuptools-"))
    if not files:
        say(f"no wheels in {wheels}: build them where there is a network (make wheelhouse) and carry them")
        return 3
    _empty(site)
    pip = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-index",
        "--find-links",
        str(wheels),
        "--no-deps",
        "--no-compile",
        "--no-cache-dir",
        "--target",
        str(site),
    ]
    say(f"installing {len(files)} wheels and the project into {site}")
    return _stream([*pip, *files], env, say) or _stream([*pip, str(root)], env, say)


def _stream(argv: list[str], env: dict[str, str], say, cwd: Path | None = None, wall_s: float | None = None) -> int:
    """Run ``argv``, every line of its output through ``say``; at ``wall_s`` send SIGINT, 60 s later SIGKILL."""
    proc = subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    reader = threading.Thread(target=lambda: [say(line.rstrip("\n")) for line in proc.stdout], daemon=True)
    reader.start()
    deadline = time.monotonic() + wall_s if wall_s else None
    for signum in (signal.SIGINT, signal.SIGKILL):
        try:
            proc.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
            break
        except subprocess.TimeoutExpired:
            say(f"wall limit of {wall_s:g} s reached: sending {signal.Signals(signum).name} to pytest")
            os.killpg(proc.pid, signum)
            deadline = time.monotonic() + 60
    proc.wait()
    reader.join(10)
    return proc.returncode


def _empty(folder: Path) -> None:
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("wheelhouse", help="download the wheels the GPU machine lacks")
    w.add_argument("--dest", type=Path, default=ROOT / "build" / "wheelhouse")
    w.add_argument("--python-version", default="3.12")
    r = sub.add_parser("run", help="install what is missing, run every check on the device, pack the ledger")
    r.add_argument("--root", type=Path, default=ROOT, help="the knowledge base")
    r.add_argument("--out", type=Path, default=Path(os.environ.get("OUT") or ROOT / "build" / "gpu-evidence" / "out"))
    r.add_argument("--device", default="cuda", choices=("cuda", "cpu"), help="cpu: a dry run of the same steps")
    r.add_argument("--workers", type=int, default=8, help="xdist workers sharing the GPU")
    r.add_argument("--wall", type=float, default=WALL_S, help="seconds before pytest is interrupted")
    r.add_argument("--wheelhouse", type=Path, default=ROOT / "build" / "wheelhouse")
    r.add_argument("pytest_args", nargs="*", help="more pytest arguments, after --")
    args = parser.parse_args(argv)
    if args.command == "wheelhouse":
        return wheelhouse(args.dest, args.python_version)
    return run(
        args.root.resolve(), args.out.resolve(), args.device, args.workers, args.wall, args.wheelhouse.resolve(), args.pytest_args
    )


if __name__ == "__main__":
    sys.exit(main())
