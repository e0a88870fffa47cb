"""Attacks through a ledger figure: SVG that would run script or fetch from outside when a reader opens it."""

from __future__ import annotations

import base64
import re

import pytest

from assay import audit
from assay.evidence.judge import VerifierError
from assay.evidence.recorder import Evidence
from assay.fingerprints import sha256
from assay.ledger import layout, store
from assay.ledger.result import Figure, Result
from assay.records.knowledge_base import load
from assay.site import generate
from assay.svg import NotSVG, sanitise, unsafe
from tests.browser import CHROMIUM
from tests.conftest import write_result
from tests.test_site import REPO, build_site

NS = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'
OUT = "http://127.0.0.1:9"  # nothing listens there: a request to it is the attempt that counts
NESTED = base64.b64encode(f"<svg {NS}><script>alert(1)</script></svg>".encode()).decode()
ATTACKS = {
    "script": f"<svg {NS}><script>alert(document.domain)</script></svg>",
    "onload": f'<svg {NS} onload="alert(1)"><path d="M0 0"/></svg>',
    "foreign": f"<svg {NS}><foreignObject><iframe src='https://example.org'/></foreignObject></svg>",
    "file": f'<svg {NS}><image xlink:href="file:///etc/passwd"/></svg>',
    "remote": f'<svg {NS}><image href="http://example.org/t.png"/></svg>',
    "entity": f'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x "y">]><svg {NS}>&x;</svg>',
    "css": f"<svg {NS}><style>@import url(http://example.org/x.css);</style></svg>",
    "use": f'<svg {NS}><use href="{OUT}/x.svg#a"/></svg>',
    "nested-svg-image": f'<svg {NS}><image href="data:image/svg+xml;base64,{NESTED}"/></svg>',
    "style-attribute": f'<svg {NS}><rect width="9" height="9" style="background:url({OUT}/q.png)"/></svg>',
    "import-string": f"<svg {NS}><style>@import '{OUT}/x.css';</style></svg>",
    "html-script": f'<svg {NS} xmlns:h="http://www.w3.org/1999/xhtml"><h:script>alert(1)</h:script></svg>',
    "stylesheet-after-root": f'<svg {NS}><rect/></svg><?xml-stylesheet href="{OUT}/x.css"?>',
    "javascript-link": f'<svg {NS}><a xlink:href="javascript:alert(1)"><rect/></a></svg>',
    "xslt-text": f'<svg {NS} xmlns:x="http://www.w3.org/1999/XSL/Transform"><x:text>&lt;script/&gt;</x:text></svg>',
    "external-dtd": f'<!DOCTYPE svg SYSTEM "{OUT}/x.dtd"><svg {NS}/>',
    "deep": f"<svg {NS}>{'<g>' * 101}{'</g>' * 101}</svg>",
}
#: What the ``ledger-figure`` diagnostic says of each attack that the probes do not make: the first thing dropped.
WHY = {
    "use": f"it refers outside itself (href='{OUT}/x.svg#a')",
    "nested-svg-image": "it refers outside itself (href='data:image/svg+xml;base64,PHN2ZyB4bWxucz')",
    "style-attribute": "its attribute style: its CSS calls url(), which may refer outside the figure",
    "import-string": "its stylesheet: its CSS holds an at-rule (@import, @font-face)",
    "html-script": "it holds a <h:script> element",
    "stylesheet-after-root": "it holds a processing instruction (<?xml-stylesheet ...?>)",
    "javascript-link": "it holds a <a> element",
    "xslt-text": "it holds a <x:text> element",
    "external-dtd": f"it has a DOCTYPE other than SVG 1.1's (svg {OUT}/x.dtd)",
    "entity": "it declares the entity x",
    "deep": "it nests elements deeper than 100",
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


@pytest.mark.parametrize("attack", sorted(WHY))
def test_the_diagnostic_of_a_figure_names_the_first_thing_the_sanitiser_drops(kb_root, attack):
    _with_figure(kb_root, ATTACKS[attack])
    found = [d.message for d in audit.run(load(kb_root)) if d.code == "ledger-figure"]
    assert found == [f"log-n-cap.cpu.curve.svg is not shown: {WHY[attack]}"]


@pytest.mark.parametrize(
    "subset",
    [
        '[ <!ENTITY\n\tx   SYSTEM\n"file:///etc/passwd" > ]',  # another spacing, an external entity
        "[<!ENTITY % x \"<!ENTITY y 'z'>\"> %x;]",  # a parameter entity that would declare another
        '[<!NOTATION n SYSTEM "n"><!ENTITY x SYSTEM "a.png" NDATA n>]',  # an unparsed entity
    ],
)
def test_an_entity_declared_in_any_spelling_is_refused_as_it_is_parsed(subset):
    with pytest.raises(NotSVG) as e:
        sanitise(f'<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x.dtd" {subset}><svg {NS}>&x;</svg>'.encode())
    assert str(e.value) == "it declares the entity x"


def test_an_entity_declared_in_lower_case_is_no_xml():
    with pytest.raises(NotSVG) as e:
        sanitise(f'<!DOCTYPE svg [<!entity x "y">]><svg {NS}>&x;</svg>'.encode())
    assert str(e.value) == "it is not well-formed XML (syntax error: line 1, column 15)"


def test_a_plain_figure_is_shown(kb_root):
    _with_figure(kb_root, f'<svg {NS}><g><path d="M0 0L1 1" style="stroke:#000"/><use xlink:href="#a"/></g></svg>')
    assert [d for d in audit.run(load(kb_root)) if d.code == "ledger-figure"] == []
    assert any(o.path == "figures/THEORY-085/log-n-cap.cpu.curve.svg" for o in generate(kb_root))


def test_a_recorded_figure_reaches_the_ledger_with_only_what_can_neither_run_nor_fetch():
    ev = Evidence()
    ev.figures["curve"] = (
        f'<?xml-stylesheet href="{OUT}/x.css"?><svg {NS} onload="alert(1)"><script>alert(2)</script>'
        f'<style>@import "{OUT}/y.css";</style><rect width="5" height="5" fill="url({OUT}/p.svg#p)" '
        f'style="fill: url(#h1); stroke: #000"/><use xlink:href="{OUT}/u.svg#a"/><use xlink:href="#h1" x="2"/>'
        f'<image xlink:href="{OUT}/i.png"/><text x="1">a &amp; b</text></svg>'
    )
    ev.validate()
    assert ev.figures["curve"] == (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
        '<rect width="5" height="5" style="fill: url(#h1); stroke: #000"/><use/><use xlink:href="#h1" x="2"/>'
        '<image/><text x="1">a &amp; b</text></svg>'
    )


def test_a_recorded_figure_that_is_no_svg_is_an_error_of_its_check():
    ev = Evidence()
    ev.figures["curve"] = '<html xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)</script></html>'
    with pytest.raises(VerifierError) as e:
        ev.validate()
    assert str(e.value) == (
        "figure 'curve' cannot be shown: its root <html> is not SVG's <svg> (in the namespace "
        "http://www.w3.org/2000/svg); record figures with evidence.figure()"
    )


def test_a_matplotlib_figure_is_kept_byte_for_byte():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(1, 2)
    ax[0].bar([1, 2], [3, 4], hatch="//", label="bars & <b>")  # hatches: fill url(#...) in a style
    ax[0].legend()
    ax[1].imshow(np.arange(16.0).reshape(4, 4))  # an embedded PNG
    ax[1].set_title(r"$\alpha^2$")
    ev = Evidence()
    ev.figure("curve", fig)
    plt.close(fig)
    drawn = ev.figures["curve"]
    ev.validate()
    assert ev.figures["curve"] == drawn and "data:image/png;base64," in drawn and "url(#" in drawn


def test_every_figure_of_the_repository_ledger_is_kept_byte_for_byte():
    figures = sorted((REPO / "results").glob("*/*.svg"))
    assert figures  # the repository's ledger draws figures
    assert [f.name for f in figures if sanitise(f.read_bytes()) != f.read_bytes()] == []


def test_a_figure_the_sanitiser_rebuilt_is_kept_as_it_is_when_sanitised_again():
    once = sanitise(ATTACKS["xslt-text"].replace("</svg>", '<rect fill="URL(http://x/y)"/><!-- a note --></svg>').encode())
    assert once == (b'<?xml version="1.0" encoding="utf-8"?>\n<svg xmlns="http://www.w3.org/2000/svg"><rect/></svg>')
    assert unsafe(once) is None and sanitise(once) == once


def test_the_full_size_link_leads_to_a_page_that_shows_the_figure_in_an_img(kb_root):
    _with_figure(kb_root, f'<svg {NS}><rect width="9" height="9"/></svg>')
    pages = {o.path: str(o.content) for o in generate(kb_root)}
    claim = pages["claims/THEORY-085.md"]
    assert '<a href="../figures/THEORY-085/log-n-cap.cpu.curve.html" title="Open the figure full size">' in claim
    assert not re.search(r'<a href="[^"]*\.svg"', claim)  # the SVG is only ever an <img>'s source
    own = pages["figures/THEORY-085/log-n-cap.cpu.curve.html"]
    assert '<img src="log-n-cap.cpu.curve.svg" alt=' in own and "<script" not in own
    assert "default-src 'none'; img-src 'self' file: data:;" in own


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (make browser)")
def test_opening_a_claim_with_hostile_figures_runs_nothing_and_requests_nothing_outside(kb_root, tmp_path):
    pytest.importorskip("playwright.sync_api")
    hostile = f'<svg {NS} onload="alert(1)"><script>alert(2)</script><image href="{OUT}/i.png" width="9" height="9"/></svg>'
    ev = Evidence()
    ev.figures["recorded"] = hostile
    ev.validate()  # the recorder keeps what the sanitiser keeps: this one is published
    result = Result.model_validate_json(write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed").read_text())
    figs = {"recorded": ev.figures["recorded"], "forged": hostile}  # forged: written straight into the ledger
    entries = [
        Figure(name=n, file=layout.figure_file("log-n-cap", "cpu", n, sha256(s.encode())), sha256=sha256(s.encode()))
        for n, s in figs.items()
    ]
    store.write_result(kb_root, result.model_copy(update={"figures": entries}), {f.file: figs[f.name] for f in entries})
    site = build_site(kb_root, tmp_path)
    (site / "control.svg").write_text(hostile)  # not the site's: shows that the harness sees a script and a fetch
    assert _opened(site, ["control.svg"]) == (["control.svg"], [f"{OUT}/i.png"], ["2", "1"])
    recorded = f"figures/THEORY-085/{entries[0].file.removesuffix('.svg')}.html"  # its own page, full size
    svgs = [f"figures/THEORY-085/{f.file}" for f in entries]  # opened as documents; the forged one is not published
    opened, outside, dialogs = _opened(site, ["claims/THEORY-085.html", *svgs])
    assert {"claims/THEORY-085.html", recorded, *svgs} <= set(opened)
    assert (outside, dialogs) == ([], [])


def _opened(site, paths: list[str]) -> tuple[list[str], list[str], list[str]]:
    """Open each of ``paths`` of ``site`` (served on 127.0.0.1) in chromium, and after each the pages its "full size"
    links lead to: what was opened, what was requested from anywhere but the site's server, and each dialog."""
    from playwright import sync_api

    from tests.browser import ARGS, serve

    served = serve(site)
    base = next(served)
    opened: list[str] = []
    outside: list[str] = []
    dialogs: list[str] = []
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            context = browser.new_context()
            context.on("request", lambda r: outside.append(r.url) if not r.url.startswith(base) else None)
            page = context.new_page()
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            for path in paths:
                page.goto(f"{base}/{path}", wait_until="load")
                opened.append(path)
                links = page.eval_on_selector_all("a[title='Open the figure full size']", "as => as.map(a => a.href)")
                for url in dict.fromkeys(links):  # a thumbnail and its figure lead to one page
                    page.goto(url, wait_until="load")
                    opened.append(url.removeprefix(f"{base}/"))
                page.wait_for_timeout(500)
            browser.close()
    finally:
        served.close()
    return opened, sorted(set(outside)), dialogs
