"""Shared fixtures: tiny knowledge bases built from ``tests/fixtures/kb``.

``fixtures/kb/valid`` is a small valid knowledge base. Each ``fixtures/kb/broken/<name>/`` holds the
files that, laid over a copy of the valid one, introduce exactly one fault (sphinx-needs' ``broken_*``
fixtures, as overlays). The fixture ``verify/`` folders hold verifier modules that ``assay.verifiers``
reads statically; pytest must never collect them.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
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
def installed_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder of ``assay_probe_pkg``, a package on ``sys.path`` (and ``PYTHONPATH``, for a subprocess) holding
    ``data/table.csv``; its ``__init__`` raises, so anything that imports it to find its files fails."""
    site = tmp_path / "site-packages"
    package = site / "assay_probe_pkg"
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text("raise RuntimeError('assay_probe_pkg was imported')\n")
    (package / "data" / "table.csv").write_text("a,b\n1,2\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", str(site))
    return package


@pytest.fixture
def diagnose(make_kb: Callable[..., Path]) -> Callable[..., str]:
    """``diagnose("name")``: every diagnostic of the valid knowledge base with broken/name laid over it, rendered."""
    from assay import audit
    from assay.records.knowledge_base import load

    def run(*broken: str) -> str:
        return "\n".join(d.render() for d in audit.run(load(make_kb(*broken))))

    return run


ENVIRONMENT = {
    "python": "3.11.7",
    "platform": "Linux 6.1 x86_64",
    "hostname": "0123456789ab",
    "packages": {"torch": "2.13.0+cpu", "numpy": "2.4.6", "scikit-learn": "1.9.1", "scipy": "1.17.1"},
    "torch_build": "cpu",
    "cpu_model": "Test CPU",
    "cpu_capability": "AVX2",
    "blas": [],
    "cores": 2,
    "threads": 1,
}


@pytest.fixture(scope="session")
def repo_site_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's own site, built strict once per test process (the browser tests read it, none writes)."""
    from tests.test_site import REPO, build_site

    return build_site(REPO, tmp_path_factory.mktemp("repo_site"))


@pytest.fixture(scope="session")
def fixture_site_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture knowledge base's site (tests/fixtures/site_kb), built strict once per test process."""
    from tests.test_site import build_site, fresh_copy

    return build_site(fresh_copy(tmp_path_factory.mktemp("site_kb")), tmp_path_factory.mktemp("fixture_site"))


def write_result(
    root: Path,
    claim_id: str,
    check_id: str,
    device: str,
    verdict: str,
    *,
    parts: dict[str, str] | None = None,
    environment: dict | None = None,
    seeds: dict[str, list[float]] | None = None,
    seeds_used: list[int] | None = None,
    settling: dict | None = None,
    finished: str = "2026-01-01T00:00:00Z",
    **metrics: float,
) -> Path:
    """Write a fresh, valid ledger result as the pytest plugin would (``parts`` overrides input parts; ``seeds``: the
    per-seed values of some metrics, whose value is then their mean; ``settling``: a settling run's block)."""
    from assay.evidence.judge import VerifierError, evaluate
    from assay.fingerprints import input_hash
    from assay.ledger import store
    from assay.ledger.inputs import InputParts
    from assay.ledger.result import FORMAT, Environment, Inputs, Metric, Result, RunError
    from assay.records.knowledge_base import load

    kb = load(root)
    claim = kb.claims[claim_id]
    check = claim.check(check_id)
    now = InputParts(kb.root).parts(claim, check, device)
    seeds = seeds or {}
    metrics = {**metrics, **{k: sum(v) / len(v) for k, v in seeds.items()}}
    try:  # the expectation as the plugin evaluates it, where every metric it reads was given
        evaluated = evaluate(claim, check, metrics, seeds) if verdict != "error" else []
    except VerifierError:
        evaluated = []
    now.update(parts or {})
    result = Result(
        format=FORMAT,
        claim=claim_id,
        check=check_id,
        device=device,
        verdict=verdict,
        tier=check.tier,
        metrics={k: Metric(value=v, seeds=seeds.get(k, [])) for k, v in metrics.items()},
        expectation=evaluated,
        duration_s=1.0,
        environment=Environment(**(environment or ENVIRONMENT)),
        inputs=Inputs(hash=input_hash(now), parts=now),
        finished=finished,
        seeds_used=seeds_used,
        settling=settling,
        last_error=(RunError(kind="error", message="boom", finished="2026-01-01T00:00:00Z") if verdict == "error" else None),
    )
    return store.write_result(kb.root, result)


def load_states(root: Path) -> tuple:
    """The knowledge base under ``root`` and its claims' states, as the commands compute them."""
    from assay.overview import claim_states
    from assay.records.knowledge_base import load

    kb = load(root)
    return kb, claim_states(kb)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """A headless Debian chromium driven by Playwright, one per test module (``tests.browser.launch``)."""
    from tests.browser import CHROMIUM, launch

    pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip("needs /usr/bin/chromium (make browser)")
    yield from launch()
