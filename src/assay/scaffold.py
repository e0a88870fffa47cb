"""``assay init``: a new, empty knowledge base that works.

The folders, a ``mkdocs.yml`` with the plugin, the JSON Schemas, one example source, claim and verifier
(a check with its control), a lock file of the pinned packages as installed here, a pytest
configuration and a README stub. In it, ``assay check`` is clean, ``pytest verify`` writes a ledger and
``mkdocs build --strict`` passes.
"""

from __future__ import annotations

import contextlib
from importlib import metadata
from pathlib import Path

from assay import schema
from assay.diagnostics import UsageProblem
from assay.files import TEMPORARY, write_atomic
from assay.ledger.inputs import LOCK_FILE, PINNED

MKDOCS = """\
site_name: {name}
docs_dir: site
site_dir: build/site
use_directory_urls: false  # pages open from disk: every link names its .html file

theme:
  name: material
  font: false  # no remote fonts: the site works offline
  features: [content.code.copy, navigation.top, search.suggest]

plugins:
  - search
  - offline
  - assay

extra:
  polyfills: [assets/vendor/iframe-worker-shim.js]  # the engine's vendored copy: search works from disk
extra_css: [assets/assay.css, assets/assay-icons.css]
extra_javascript: [assets/assay.js]

markdown_extensions: [admonition, attr_list, md_in_html, tables]

not_in_nav: |
  /claims/
  /sources/
  /decisions/
  /anthologies/
  /tags/
  /figures/
  /code/

nav:
  - Dashboard: index.md
  - Graph: graph.md
  - Sources: sources/index.md
  - Decisions: decisions/index.md
  - Anthologies: anthologies/index.md
  - Tags: tags/index.md
  - Reference:
      - Records: reference/records.md
      - Diagnostics: reference/diagnostics.md
"""

SOURCE = """\
# yaml-language-server: $schema=../schema/source.schema.json
id: LIT-001
kind: paper
title: "Batch Normalization: Accelerating Deep Network Training by Reducing Internal Covariate Shift"
authors: [Sergey Ioffe, Christian Szegedy]
year: 2015
venue: ICML 2015
identifiers:
  arxiv: 1502.03167v3
takeaways:
  - Normalising each layer's inputs with statistics of the mini-batch speeds up training.
read_from: arXiv v3
passages:
  - locator: Abstract
    exact: >-
      Training Deep Neural Networks is complicated by the fact that the distribution of each layer's inputs
      changes during training, as the parameters of the previous layers change.
    suffix: This slows down the training by requiring lower learning rates
"""

CLAIM = """\
# yaml-language-server: $schema=../schema/claim.schema.json
id: SOTA-001
title: Batch norm couples the samples of a batch (example)
statement: >-
  In training mode, batch normalization makes one sample's output depend on the other samples of its batch.
citations:
  - source: LIT-001
    locator: Abstract
    quote: >-
      Training Deep Neural Networks is complicated by the fact that the distribution of each layer's inputs
      changes during training, as the parameters of the previous layers change.
    note: An example citation. The coupling follows from normalising with the statistics of the mini-batch.
assertions:
  - id: couples-samples
    filed: [batch normalization makes one sample's output depend on the other samples of its batch]
    source:
      kind: not-in-source
      citations: [1]
      note: The paper normalises with mini-batch statistics; that this couples the samples is our reading.
    evidence:
      - {check: cross-sample, stance: supports}
  - id: training-mode
    filed: [In training mode]
    source: {kind: paraphrased, citations: [1], note: At inference the paper uses population statistics instead.}
    cited_only: an example of an assertion no check tests; the check above runs in training mode only.
checks:
  - id: cross-sample
    tests: In training mode, batch normalization makes one sample's output depend on the other samples of its batch.
    verifier: verify/test_sota001_example.py::test_batch_norm_couples_samples
    tier: analytic
    devices: [cpu, cuda]
    metrics:
      - name: bn_cross_sample
        unit: absolute Jacobian entry
        measures: Largest |d out[0] / d x[1]| of batch norm in training mode on a batch of 8 random inputs.
      - name: ln_cross_sample
        unit: absolute Jacobian entry
        measures: The same for layer norm, which normalises each sample alone (the control).
    expect:
      - {metric: bn_cross_sample, op: ">", value: 0.01}
      - {metric: ln_cross_sample, op: "==", value: 0, tol: 1.0e-6, control: true}
    note: >-
      Control: layer norm normalises each sample alone, so its cross-sample Jacobian is zero (exactly 0 on
      seeds 0-4). Batch norm gave 0.175-0.426 on seeds 0-4; the threshold sits far below that spread.
"""

VERIFIER = '''\
"""Example verifier for SOTA-001: batch norm couples samples, layer norm (the control) does not."""

import pytest
import torch


def cross_sample(norm: torch.nn.Module, x: torch.Tensor) -> float:
    """Largest |d out[0] / d x[1]|: how much sample 0's output moves with sample 1's input."""
    jac = torch.autograd.functional.jacobian(lambda inp: norm(inp)[0], x)  # D x N x D
    return jac[:, 1, :].abs().max().item()


@pytest.mark.claim("SOTA-001", "cross-sample")
def test_batch_norm_couples_samples(evidence, device):
    """Batch norm in training mode makes one sample's output depend on another's input."""
    x = torch.randn(8, 4, device=device)  # N x D, seeded by the evidence fixture
    evidence.metric("bn_cross_sample", cross_sample(torch.nn.BatchNorm1d(4).to(device).train(), x))
    evidence.metric("ln_cross_sample", cross_sample(torch.nn.LayerNorm(4).to(device), x))  # control
'''

PYPROJECT = """\
[tool.pytest.ini_options]
pythonpath = ["."]
addopts = "--strict-markers -p no:cacheprovider"
"""

README = """\
# {name}

A knowledge base of literature claims that can be run, made with Assay.

```sh
assay check                 # validate every record and verifier
pytest verify -n 2          # run the checks, write results/ (commit it: it is the evidence)
mkdocs serve                # the site
```

Add a source with `assay new source`, a claim with `assay new claim --source LIT-NNN` (it writes a verifier stub
under `verify/` too).
"""

#: What a knowledge base keeps out of git: the build, Python's caches, and the ledger's temporary files.
GITIGNORE = f"build/\n__pycache__/\nresults/**/.*{TEMPORARY}\n"


def lock_text() -> str:
    """A lock of the packages whose pins are inputs of every result, at the versions installed here."""
    lines = [
        "# Exact versions of the packages every result depends on (their pins are inputs of each result).",
        "# Regenerate with `pip freeze > requirements.lock` in the environment you verify with.",
    ]
    for name in PINNED:
        with contextlib.suppress(metadata.PackageNotFoundError):
            lines.append(f"{name}=={metadata.version(name)}")
    return "\n".join(lines) + "\n"


def files(name: str) -> dict[str, str]:
    """Every file of a new knowledge base, by path."""
    out = {
        "mkdocs.yml": MKDOCS.format(name=name),
        "sources/LIT-001.yaml": SOURCE,
        "claims/SOTA-001.yaml": CLAIM,
        "verify/__init__.py": "",
        "verify/test_sota001_example.py": VERIFIER,
        "pyproject.toml": PYPROJECT,
        "README.md": README.format(name=name),
        ".gitignore": GITIGNORE,
        LOCK_FILE: lock_text(),
        "decisions/.keep": "",
        "results/.keep": "",
        "site/.keep": "",
    }
    out.update({f"schema/{n}": text for n, text in schema.schema_files().items()})
    return out


def init(dest: Path) -> list[Path]:
    """Write a new knowledge base into ``dest`` (created; must be empty, else ``UsageProblem``); returns the files written."""
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UsageProblem(f"{dest} is not an empty folder; pick a new one")
    written = {dest / rel: text for rel, text in files(dest.resolve().name or "Knowledge base").items()}
    for path, text in written.items():
        write_atomic(path, text)  # a killed init leaves no half-written file
    return list(written)
