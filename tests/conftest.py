"""Shared fixtures: tiny knowledge bases built from ``tests/fixtures/kb``.

``fixtures/kb/valid`` is a small valid knowledge base. Each ``fixtures/kb/broken/<name>/`` holds the
files that, laid over a copy of the valid one, introduce exactly one fault (sphinx-needs' ``broken_*``
fixtures, as overlays). The fixture ``verify/`` folders hold verifier modules that ``assay.verifiers``
reads statically; pytest must never collect them.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

collect_ignore_glob = ["fixtures/*"]

FIXTURES = Path(__file__).parent / "fixtures" / "kb"
VALID = FIXTURES / "valid"
BROKEN = FIXTURES / "broken"


@pytest.fixture
def make_kb(tmp_path: Path) -> Callable[..., Path]:
    """``make_kb()`` copies the valid knowledge base into tmp_path; ``make_kb("name")`` lays broken/name over it."""

    def make(*broken: str) -> Path:
        root = tmp_path / "kb"
        shutil.copytree(VALID, root)
        for name in broken:
            assert (BROKEN / name).is_dir(), f"no broken fixture {name!r}"
            shutil.copytree(BROKEN / name, root, dirs_exist_ok=True)
        return root

    return make


@pytest.fixture
def kb_root(make_kb: Callable[..., Path]) -> Path:
    """A writable copy of the valid knowledge base."""
    return make_kb()


@pytest.fixture
def diagnose(make_kb: Callable[..., Path]) -> Callable[..., str]:
    """``diagnose("name")``: every diagnostic of the valid knowledge base with broken/name laid over it, rendered."""
    from assay import checks
    from assay.loader import load

    def run(*broken: str) -> str:
        return "\n".join(d.render() for d in checks.run(load(make_kb(*broken))))

    return run
