"""A tiny knowledge base of real verifiers for the tests of ``assay verify``: quick ones, and sleepers to kill.

``make_verify_kb(root, {"quick-a": 90, ...})`` writes one claim whose checks are named by the keys, each with
that ``timeout`` (which is what the plan balances by, before any run). Each verifier writes a marker file
named after its check into ``$ASSAY_TEST_MARKS`` when it starts; the ``killed-*`` and ``overtime`` ones then
sleep far past any limit a test sets, so the test can kill them or let the time limit end them.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

SOURCE = """\
# yaml-language-server: $schema=../schema/source.schema.json
id: LIT-001
kind: paper
title: A paper
authors: [A. Author]
year: 2020
identifiers: {url: "https://example.org/a"}
"""

CLAIM = """\
# yaml-language-server: $schema=../schema/claim.schema.json
id: SOTA-001
title: Two is more than one
statement: Two is more than one.
citations:
  - {{source: LIT-001, locator: "§1", quote: "Two is more than one."}}
checks:
{checks}
"""

CHECK = """\
  - id: {id}
    tests: The gap is positive.
    verifier: verify/test_kb.py::test_{name}
    tier: analytic
    devices: [cpu, cuda]
    timeout: {timeout}
    metrics:
      - {{name: gap, unit: units, measures: the gap}}
      - {{name: control, unit: units, measures: the gap of a model without the effect}}
    expect:
      - {{metric: gap, op: ">", value: 1}}
      - {{metric: control, op: "==", value: 0, tol: 0, control: true}}
"""

VERIFIER = '''
@pytest.mark.claim("SOTA-001", "{id}")
def test_{name}(evidence, device):
    """The gap is positive ({id})."""
    _started("{id}")
    if "{id}".startswith("killed") or "{id}" == "overtime":
        time.sleep(300)  # ended from outside: scancel, or the SLURM time limit
    gap = torch.tensor([2.0], device=device)  # the same number on every device
    evidence.metric("gap", gap.item())
    evidence.metric("control", 0.0)
'''

HEADER = """\
import os
import time
from pathlib import Path

import pytest
import torch


def _started(name):
    folder = os.environ.get("ASSAY_TEST_MARKS")
    if folder:
        Path(folder, name).write_text(str(os.getpid()))
"""


def make_verify_kb(root: Path, timeouts: dict[str, float], slurm: str = "poll_s = 1") -> Path:
    """The knowledge base under ``root``: one claim, one check per key of ``timeouts``, in that order."""
    for folder in ("sources", "claims", "verify"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "sources" / "LIT-001.yaml").write_text(SOURCE)
    checks = "".join(CHECK.format(id=c, name=c.replace("-", "_"), timeout=t) for c, t in timeouts.items())
    (root / "claims" / "SOTA-001.yaml").write_text(CLAIM.format(checks=checks))
    (root / "verify" / "__init__.py").write_text("")
    body = "".join(VERIFIER.format(id=c, name=c.replace("-", "_")) for c in timeouts)
    (root / "verify" / "test_kb.py").write_text(HEADER + body)
    (root / "pyproject.toml").write_text(
        textwrap.dedent(f"""\
        [tool.pytest.ini_options]
        pythonpath = ["."]
        addopts = "-p no:cacheprovider"

        [tool.assay.slurm]
        {slurm}
        """)
    )
    return root
