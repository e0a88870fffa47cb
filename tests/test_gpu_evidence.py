"""scripts/gpu_evidence.py: the one prepared run for a bare GPU machine, dry-run here on the CPU; its wheelhouse."""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
import sysconfig
import tarfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.verify_kb import make_verify_kb

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "gpu_evidence.py"
_spec = importlib.util.spec_from_file_location("gpu_evidence", SCRIPT)
gpu_evidence = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpu_evidence)


def run(root: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "run", "--root", str(root), "--out", str(out), "--device", "cpu", "--workers", "1", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_dry_run_on_the_cpu_writes_the_ledger_archive_and_the_log(tmp_path):
    root = make_verify_kb(tmp_path / "kb", {"quick-a": 10, "quick-b": 10})
    done = run(root, tmp_path / "out", "--", "-k", "quick_a")
    assert done.returncode == 0, done.stdout + done.stderr
    with tarfile.open(tmp_path / "out" / "results-cpu.tar.gz") as tar:
        assert sorted(tar.getnames()) == ["results", "results/SOTA-001", "results/SOTA-001/quick-a.cpu.json"]
        result = json.load(tar.extractfile("results/SOTA-001/quick-a.cpu.json"))
    assert (result["verdict"], result["device"]) == ("passed", "cpu")
    log = (tmp_path / "out" / "gpu-evidence.log").read_text()
    assert log == done.stdout
    assert "torch.distributed: nccl False, gloo True\n" in log  # what the CUDA path will have, said first
    assert "\nSOTA-001/quick-a.cpu: passed (" in log
    assert "\nsummary: 1 passed; 0 unreadable file(s)\n" in log
    assert not (root / "results").exists()  # the repository's ledger is merged later, by assay merge


def test_the_wall_limit_interrupts_pytest_and_still_packs_what_there_is(tmp_path):
    root = make_verify_kb(tmp_path / "kb", {"overtime": 10})
    done = run(root, tmp_path / "out", "--wall", "1")
    assert done.returncode not in (0, 1), done.stdout
    assert "wall limit of 1 s reached: sending SIGINT to pytest\n" in done.stdout
    assert (tmp_path / "out" / "results-cpu.tar.gz").is_file()


def test_the_wheelhouse_pins_come_from_the_lock_file():
    pins = gpu_evidence.lock_versions()
    assert all(name in pins for name in gpu_evidence.WHEELHOUSE)


def _closure(roots) -> set[str]:
    """Distributions ``roots`` need, as installed here (extras left out)."""
    seen, todo = set(), [canonicalize_name(r) for r in roots]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for line in metadata.requires(name) or []:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(canonicalize_name(req.name))
    return seen


def _imports_from(module: str) -> set[str]:
    """Top-level names of what ``module`` and every assay module it imports (at any depth, in any function) import."""
    src = REPO / "src"
    seen, todo, outside = set(), [module], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = src.joinpath(*name.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        if not path.is_file():
            continue  # a namespace package (assay itself)
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]  # `from assay import results`
            for n in names:
                (todo.append(n) if n.split(".")[0] == "assay" else outside.add(n.split(".")[0]))
    return outside


def test_the_wheelhouse_and_the_machine_hold_everything_the_plugin_imports():
    machine = _closure(gpu_evidence.MACHINE_HAS)
    wheels = {canonicalize_name(n) for n in gpu_evidence.WHEELHOUSE}
    stdlib = set(sys.stdlib_module_names)
    by_module = metadata.packages_distributions()
    needed = {canonicalize_name(d) for m in _imports_from("assay.pytest_plugin") - stdlib for d in by_module[m]}
    assert needed - machine - wheels == set()
    assert _closure(gpu_evidence.WHEELHOUSE) - machine - wheels == set()  # the wheels' own needs travel too
    assert wheels - machine >= {"pydantic", "pydantic-core", "annotated-types", "typing-inspection", "pyyaml"}


def test_cuda_runs_keep_float32_as_on_the_cpu(monkeypatch):
    import torch

    from assay.evidence.selection import full_float32

    monkeypatch.delenv("NVIDIA_TF32_OVERRIDE", raising=False)
    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    try:
        torch.backends.cudnn.allow_tf32 = True  # cuDNN's default
        full_float32(torch)
        assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == (False, False)
        import os

        assert os.environ["NVIDIA_TF32_OVERRIDE"] == "0"  # for the ranks a distributed verifier spawns
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before


@pytest.mark.skipif(sysconfig.get_platform() != "linux-x86_64", reason="the GPU machine is x86-64 Linux")
def test_the_wheelhouse_command_asks_pip_for_the_gpu_machines_python_and_platform(monkeypatch, tmp_path):
    seen = []
    monkeypatch.setattr(
        gpu_evidence.subprocess, "run", lambda argv, **kw: seen.append(argv) or subprocess.CompletedProcess(argv, 0)
    )
    assert gpu_evidence.wheelhouse(tmp_path / "wh", "3.12") == 0
    argv = seen[0]
    pins = gpu_evidence.lock_versions()
    assert argv[argv.index("--python-version") + 1] == "3.12"
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "--platform"] == list(gpu_evidence.PLATFORMS)
    assert argv[-len(gpu_evidence.WHEELHOUSE) - 1 :] == [f"{n}=={pins[n]}" for n in gpu_evidence.WHEELHOUSE] + ["setuptools>=77"]
