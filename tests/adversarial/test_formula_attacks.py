"""Attacks through a formula in record text: TeX that KaTeX would draw over the page, the verdict included."""

from __future__ import annotations

import re

import pytest

from assay import audit
from assay.records.formula_limits import MAX_EM
from assay.records.knowledge_base import load
from tests.browser import CHROMIUM
from tests.test_site import REPO, build_site

HINT = "  hint: write the formula without it, with sizes up to 10em: record text holds no boxes, links or macros"


def _titled(root, title: str) -> None:
    path = root / "claims" / "THEORY-085.yaml"
    path.write_text(path.read_text().replace("title: The InfoNCE estimate is capped at log N", f"title: '{title}'"))


def _formula_diagnostics(root) -> list[str]:
    return [d.render() for d in audit.run(load(root)) if d.code == "unbounded-formula"]


def test_a_link_in_a_title_is_an_error_naming_the_formula(kb_root):
    _titled(kb_root, r"Capped $\href{javascript:alert(1)}{at log N}$")
    assert _formula_diagnostics(kb_root) == [
        "claims/THEORY-085.yaml:3:1: error[unbounded-formula]: title: the formula '\\href{javascript:alert(1)}{at log N}' "
        "uses \\href, which links out of the page\n" + HINT
    ]


def test_a_kern_past_the_bound_between_katex_delimiters_in_a_citation_note_is_an_error(kb_root):
    path = kb_root / "claims" / "THEORY-085.yaml"
    path.write_text(
        path.read_text().replace(
            "    quote: the NT-Xent loss (the normalized temperature-scaled cross entropy loss)",
            "    quote: the NT-Xent loss (the normalized temperature-scaled cross entropy loss)\n"
            "    note: 'Shifted \\(\\kern-3000px\\colorbox{white}{x}\\)'",
        )
    )
    assert _formula_diagnostics(kb_root) == [
        "claims/THEORY-085.yaml:10:5: error[unbounded-formula]: citations[0].note: the formula "
        "'\\kern-3000px\\colorbox{white}{x}' gives the size 3000px (about 301em, over 10em)\n" + HINT
    ]


def test_a_macro_that_would_hide_a_size_and_a_smash_are_errors_of_one_formula(kb_root):
    _titled(kb_root, r"Capped $\def\far{9000}\smash{\kern\far px x}$")
    assert _formula_diagnostics(kb_root) == [
        "claims/THEORY-085.yaml:3:1: error[unbounded-formula]: title: the formula '\\def\\far{9000}\\smash{\\kern\\far px x}' "
        "uses \\def, which defines a macro, which can hide a refused command or size; it uses \\smash, which paints "
        "outside the formula's own place\n" + HINT
    ]


def test_numbers_in_plain_words_and_sizes_within_the_bound_are_no_error(kb_root):
    _titled(kb_root, r"Capped at $\log N$ over $\text{1000 in all}$ with $a\hspace{2em}b$ and $\lbrace x \rbrace$")
    assert _formula_diagnostics(kb_root) == []


def test_the_site_caps_every_formula_size_at_the_bound_the_records_are_held_to():
    script = (REPO / "src" / "assay" / "site" / "assets" / "assay.js").read_text(encoding="utf-8")
    assert re.findall(r"maxSize: (\d+)", script) == [f"{MAX_EM:g}"]


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (make browser)")
def test_a_title_that_would_paint_over_the_page_leaves_the_verdict_on_top(kb_root, tmp_path):
    pytest.importorskip("playwright.sync_api")
    from tests.browser import launch, new_page

    # every way past the record rule at once (the page still builds): a smashed white box lowered over what follows,
    # a rule of 3000 by 6000 px lowered 3000 px, and a white box kerned far to the left
    _titled(
        kb_root,
        r"Capped $\color{white}\smash{\raisebox{-6em}{\colorbox{white}{\Huge\phantom{MMMMMMMMMMMMMMMMMMMMMMMMMMMMMM}}}}"
        r"\rule[-3000px]{3000px}{6000px}\kern-40em\colorbox{white}{\Huge\phantom{MMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMM}}$",
    )
    site = build_site(kb_root, tmp_path, strict=False)
    launched = launch()
    browser = next(launched)
    try:
        page, errors = new_page(browser, 1280)
        page.goto((site / "claims" / "THEORY-085.html").as_uri())
        page.wait_for_function("document.body.dataset.mathReady === '1'", timeout=10_000)
        covered = page.evaluate("""() => {
            const v = document.querySelector('.assay-verdict'), r = v.getBoundingClientRect();
            return [[.1, .5], [.5, .5], [.9, .5]].map(([x, y]) => v.contains(
                document.elementFromPoint(r.left + x * r.width, r.top + y * r.height)))}""")
        rule, em = page.evaluate("""() => { const k = document.querySelector('h1 .katex-rule'), r = k.getBoundingClientRect();
            return [Math.max(r.width, r.height), parseFloat(getComputedStyle(k).fontSize)] }""")
    finally:
        launched.close()
    assert covered == [True, True, True]
    assert rule <= MAX_EM * em + 1  # KaTeX caps the rule's 3000 by 6000 px at the bound, in the title's font
    assert errors == []
