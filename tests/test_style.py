"""Formatting is a tool's job (style item 17): the repository's Python passes its own ruff configuration.

The configuration lives once, in pyproject.toml ([tool.ruff]); these tests run it and guard that it keeps a line length.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PATHS = ["src", "tests", "verify", "bench", "scripts"]


def test_the_ruff_configuration_sets_a_line_length_and_enforces_it():
    ruff = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]
    assert isinstance(ruff.get("line-length"), int)
    assert "E501" in ruff["lint"]["select"]


def test_the_python_sources_pass_ruff():
    pytest.importorskip("ruff", reason="ruff is in the test extra: pip install -c requirements.lock -e '.[test]'")
    run = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", *PATHS], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_python_sources_are_formatted_by_ruff():
    pytest.importorskip("ruff", reason="ruff is in the test extra: pip install -c requirements.lock -e '.[test]'")
    run = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "--no-cache", *PATHS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
