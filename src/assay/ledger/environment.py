"""What the machine had when a result was computed: recorded in full, shown, never an input.

Read once per process, in the process that ran the verifier. Imports torch, so only the pytest
plugin calls it, and only when a claim test runs.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import socket
from importlib import metadata
from pathlib import Path

from assay.ledger import git
from assay.ledger.inputs import PINNED
from assay.ledger.result import Environment, Gpu


@functools.lru_cache(maxsize=2)
def capture(device: str) -> Environment:
    """The environment of this process for results on ``device`` (``cpu`` or ``cuda``)."""
    import torch

    return Environment(
        python=platform.python_version(),
        platform=f"{platform.system()} {platform.release()} {platform.machine()}",
        hostname=hashlib.sha256(socket.gethostname().encode()).hexdigest()[:12],
        packages=_packages(),
        torch_build=f"cuda {torch.version.cuda}" if torch.version.cuda else "cpu",
        cudnn=str(torch.backends.cudnn.version()) if torch.version.cuda and torch.backends.cudnn.is_available() else None,
        cpu_model=_cpu_model(),
        cpu_capability=_cpu_capability(torch),
        blas=_blas(),
        cores=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1),
        threads=torch.get_num_threads(),
        gpu=_gpu(torch) if device == "cuda" else None,
    )


def _packages() -> dict[str, str]:
    out = {}
    for name in PINNED:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _cpu_capability(torch: object) -> str | None:
    try:
        return str(torch.backends.cpu.get_cpu_capability())  # type: ignore[attr-defined]
    except (AttributeError, RuntimeError):
        return None


def _blas() -> list[str]:
    """The BLAS and OpenMP libraries loaded, as threadpoolctl reports them (numpy's, torch's)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    out = []
    for lib in threadpool_info():
        arch = f" {lib['architecture']}" if lib.get("architecture") else ""
        out.append(f"{lib.get('internal_api', '?')} {lib.get('version') or ''}{arch}".strip())
    return sorted(set(out))


def _gpu(torch: object) -> Gpu | None:
    cuda = torch.cuda  # type: ignore[attr-defined]
    if not cuda.is_available():
        return None
    props = cuda.get_device_properties(0)
    return Gpu(
        name=props.name,
        memory_mb=round(props.total_memory / 2**20, 1),
        capability=f"{props.major}.{props.minor}",
        driver=_driver(),
    )


def _driver() -> str | None:
    try:
        return Path("/proc/driver/nvidia/version").read_text().split("Kernel Module", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def git_commit(root: Path) -> str:
    """The commit checked out at ``root``; empty where there is no git, no repository or no commit yet."""
    return (git.output(root, "rev-parse", "HEAD") or "").strip()
