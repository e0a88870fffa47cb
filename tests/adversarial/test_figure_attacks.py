"""Attacks through a ledger figure: SVG that would run script or fetch from outside when a reader opens it."""

from __future__ import annotations

import pytest

from assay import audit
from assay.fingerprints import sha256
from assay.ledger import store
from assay.ledger.result import Figure, Result
from assay.records.knowledge_base import load
from assay.site import generate
from tests.conftest import write_result

NS = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'
ATTACKS = {
    "script": f"<svg {NS}><script>alert(document.domain)</script></svg>",
    "onload": f'<svg {NS} onload="alert(1)"><path d="M0 0"/></svg>',
    "foreign": f"<svg {NS}><foreignObject><iframe src='https://example.org'/></foreignObject></svg>",
    "file": f'<svg {NS}><image xlink:href="file:///etc/passwd"/></svg>',
    "remote": f'<svg {NS}><image href="http://example.org/t.png"/></svg>',
    "entity": f'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x "y">]><svg {NS}>&x;</svg>',
    "css": f"<svg {NS}><style>@import url(http://example.org/x.css);</style></svg>",
}


def _with_figure(root, svg: str) -> Figure:
    path = write_result(root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    r = Result.model_validate_json(path.read_text())
    fig = Figure(name="curve", file="log-n-cap.cpu.curve.svg", sha256=sha256(svg.encode()))  # its hash fixed
    store.write_result(root, r.model_copy(update={"figures": [fig]}), {fig.file: svg})
    return fig


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_figure_that_could_run_or_fetch_is_a_diagnostic_and_never_reaches_the_site(kb_root, attack):
    _with_figure(kb_root, ATTACKS[attack])
    found = [d for d in audit.run(load(kb_root)) if d.code == "ledger-figure"]
    assert [d.message.split(":")[0] for d in found] == ["log-n-cap.cpu.curve.svg is not shown"]
    assert not any(o.path.startswith("figures/THEORY-085") for o in generate(kb_root))


def test_a_plain_figure_is_shown(kb_root):
    _with_figure(kb_root, f'<svg {NS}><g><path d="M0 0L1 1" style="stroke:#000"/><use xlink:href="#a"/></g></svg>')
    assert [d for d in audit.run(load(kb_root)) if d.code == "ledger-figure"] == []
    assert any(o.path == "figures/THEORY-085/log-n-cap.cpu.curve.svg" for o in generate(kb_root))
