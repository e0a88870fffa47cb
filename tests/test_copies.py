"""assay.copies: a copy of a source's text read as words, its formulas as their symbols, in bounded time, never a crash."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from assay import cli
from assay.copies import html_text, latex_text, markdown_text

#: An arXiv abstract with inline math (the source keeps it as arXiv's listing prints it, TeX between dollars).
ABSTRACT = (
    "We show that a $k$-NN monitor on $\\mathcal{O}(n \\log n)$ features tracks the loss, and that $\\alpha \\leq 0.5$ suffices."
)
SOURCE = f"""\
# yaml-language-server: $schema=../schema/source.schema.json
id: LIT-650
kind: preprint
title: A paper with inline math
authors: [A. Author]
year: 2024
identifiers:
  arxiv: 2401.00001v1
takeaways: []
read_from: arXiv v1
passages:
  - locator: Abstract
    exact: '{ABSTRACT}'
"""
KATEX = (
    '<span class="katex"><span class="katex-mathml"><math xmlns="http://www.w3.org/1998/Math/MathML"><semantics>'
    '<mrow>{mathml}</mrow><annotation encoding="application/x-tex">{tex}</annotation></semantics></math></span>'
    '<span class="katex-html" aria-hidden="true"><span class="base"><span class="strut"></span>'
    '<span class="mord mathnormal">{drawn}</span></span></span></span>'
)
MATHJAX = (
    '<mjx-container class="MathJax" jax="CHTML"><mjx-math class="MJX-TEX" aria-hidden="true"><mjx-mi class="mjx-i">'
    '<mjx-c class="mjx-c1D458 TEX-I">{drawn}</mjx-c></mjx-mi></mjx-math><mjx-assistive-mml unselectable="on" '
    'display="inline"><math xmlns="http://www.w3.org/1998/Math/MathML">{mathml}</math></mjx-assistive-mml>'
    "</mjx-container>"
)
#: Each formula of the abstract: its TeX, its MathML and what a renderer draws.
FORMULAS = [
    ("k", "<mi>k</mi>", "k"),
    (
        "\\mathcal{O}(n \\log n)",
        '<mi class="mathcal">O</mi><mo stretchy="false">(</mo><mi>n</mi>\n  <mi>log</mi><mo>⁡</mo><mi>n</mi><mo>)</mo>',
        "O(nlogn)",
    ),
    ("\\alpha \\leq 0.5", "<mi>α</mi><mo>≤</mo><mn>0.5</mn>", "α≤0.5"),
]


def _page(template: str) -> str:
    parts = [template.format(tex=t, mathml=m, drawn=d) for t, m, d in FORMULAS]
    body = "We show that a {}-NN monitor on {} features tracks the loss, and that {} suffices."
    return f"<html><body><blockquote class='abstract'>{body.format(*parts)}</blockquote></body></html>"


COPIES = {
    "abstract.tex": "\\begin{abstract}\n"
    + ABSTRACT.replace("$\\alpha", "\\(\\alpha").replace("0.5$", "0.5\\)")
    + "\n\\end{abstract}\n",
    "katex.html": _page(KATEX),
    "mathjax.html": _page(MATHJAX),
    "latexml.html": _page('<math alttext="{tex}" display="inline"><semantics><mrow>{mathml}</mrow></semantics></math>'),
}


def verify(root: Path, *argv: str) -> int:
    return cli.main(["--root", str(root), "sources", "verify", *argv])


@pytest.mark.parametrize("name", sorted(COPIES))
def test_an_abstract_with_inline_math_is_found_in_its_latex_and_its_rendered_html(kb_root, tmp_path, capsys, name):
    (kb_root / "sources" / "LIT-650.yaml").write_text(SOURCE, encoding="utf-8")
    copy = tmp_path / name
    copy.write_text(COPIES[name], encoding="utf-8")
    assert verify(kb_root, "LIT-650", "--copy", str(copy)) == 0
    assert capsys.readouterr().out.startswith(f"LIT-650: 1 of 1 passages read from 'arXiv v1' are in {name} (")


def test_a_rendered_formula_reads_as_its_tex_symbols_not_as_what_draws_it():
    assert html_text(_page(KATEX)).strip() == (
        "We show that a k-NN monitor on O(nlogn) features tracks the loss, and that α≤0.5 suffices."
    )


# --- bounded time, never a crash ------------------------------------------------------------------

HOSTILE = {
    "marked-sections.html": "<![" * 1000,
    "divs.html": "<div>" * 50_000,
    "open-comment.html": "<!--" + "<p>words</p>" * 10_000,
    "open-quotes.html": '<a "' * 50_000,
    "hidden-divs.html": "<head>" + "<div>" * 50_000 + "</div>" * 50_000,
    "spaces.tex": " " * 200_000,
    "braces.tex": "{" * 100_000 + "}" * 100_000,
    "open-citations.tex": "\\cite[" * 50_000,
    "open-formulas.tex": "\\(" * 50_000 + "$" * 50_000,
    "spaces.txt": " \n" * 100_000,
    "open-links.md": "[" * 100_000 + "](" * 50_000,
    "stars.md": "*a_" * 100_000,
    "open-entities.md": "&#" * 100_000,
    "quotes.md": "> " * 100_000 + "\n- " * 50_000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_copy_is_read_in_well_under_a_second_and_fails_as_a_copy_without_the_passage(kb_root, tmp_path, capsys, name):
    copy = tmp_path / name
    copy.write_text(HOSTILE[name], encoding="utf-8")
    start = time.monotonic()
    assert verify(kb_root, "LIT-590", "--copy", str(copy)) == 1
    assert time.monotonic() - start < 5  # the quadratic readers took minutes on these
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith(f"LIT-590: 0 of 2 passages read from 'arXiv v3' are in {name} (")


def test_latex_input_and_include_read_no_other_file(tmp_path):
    (tmp_path / "other.tex").write_text("Using BN prevents the model from learning good representations.\n")
    assert latex_text("Before.\n\\input{other}\n\\include{other}\nAfter.") == "Before.\n\n\nAfter."


def test_an_unterminated_comment_at_the_start_of_a_page_hides_the_rest_of_it():
    assert html_text("<!-- <p>Using BN prevents the model</p>") == ""


def test_a_page_that_leaves_out_its_head_s_end_tag_keeps_its_body():
    assert html_text("<html><head><title>t</title><meta charset=utf-8><body><p>words</p>").strip() == "words"


def test_mathjax_2_gives_its_formula_as_the_tex_of_its_script():
    page = '<span class="MathJax_Preview">k</span><span class="MathJax">k</span><script type="math/tex">k_i</script>-NN'
    assert html_text(page) == "ki-NN"


# --- Markdown ----------------------------------------------------------------------------------------

#: A Markdown copy of an abstract, as a contributor saves one (the SimSiam abstract, arXiv 2011.10566v1).
MARKDOWN = """\
# Exploring Simple Siamese Representation Learning

## Abstract

*Siamese networks have become a common structure in various recent models. In this paper, we report surprising
empirical results that **simple Siamese networks** can learn meaningful representations even using **none** of the
following:*

- (i) negative sample pairs,
- (ii) large batches,
- (iii) momentum encoders.

> Our experiments show that collapsing solutions do exist for the loss and structure, but a `stop-gradient`
> operation plays an essential role in preventing collapsing. Our [SimSiam](https://github.com/facebookresearch/simsiam)
> method achieves competitive results with _batch_size_ 256 &amp; 2 * 3 = 6 crops.
"""

#: What a reader copies from the rendered page, one passage for each kind of markup it crosses, with its prefix.
RENDERED = {
    "bold-and-star-emphasis": ("we report surprising empirical results that simple Siamese networks can learn", None),
    "heading": ("Siamese networks have become a common structure", "Exploring Simple Siamese Representation Learning Abstract"),
    "list-bullets": ("even using none of the following: (i) negative sample pairs, (ii) large batches, (iii) momentum", None),
    "block-quote": ("for the loss and structure, but a stop-gradient operation plays an essential role", None),
    "code": ("a stop-gradient operation", None),
    "link": ("Our SimSiam method achieves competitive results", None),
    "underscore-emphasis-and-entity": ("with batch_size 256 & 2 * 3 = 6 crops.", None),
}


def _source(exact: str, prefix: str | None = None) -> str:
    context = f"\n    prefix: '{prefix}'" if prefix else ""
    return (
        SOURCE.replace("LIT-650", "LIT-660")
        .replace("arxiv: 2401.00001v1", "arxiv: 2011.10566v1")
        .replace(f"exact: '{ABSTRACT}'", f"exact: '{exact}'{context}")
    )


@pytest.mark.parametrize("kind", sorted(RENDERED))
def test_a_passage_read_from_the_rendered_page_is_found_in_its_markdown_copy(kb_root, tmp_path, capsys, kind):
    exact, prefix = RENDERED[kind]
    (kb_root / "sources" / "LIT-660.yaml").write_text(_source(exact, prefix), encoding="utf-8")
    copy = tmp_path / "simsiam.md"
    copy.write_text(MARKDOWN, encoding="utf-8")
    assert verify(kb_root, "LIT-660", "--copy", str(copy)) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].startswith("LIT-660: 1 of 1 passages read from 'arXiv v1' are in simsiam.md (markdown,")


def test_a_passage_absent_from_a_markdown_copy_fails_as_it_does_from_the_rendered_text(kb_root, tmp_path, capsys):
    (kb_root / "sources" / "LIT-660.yaml").write_text(_source(RENDERED["link"][0].replace("competitive", "superior")))
    copy = tmp_path / "simsiam.md"
    copy.write_text(MARKDOWN, encoding="utf-8")
    assert verify(kb_root, "LIT-660", "--copy", str(copy)) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == [
        "sources/LIT-660.yaml:13:5: error[passage-not-in-copy]: passage 1 of LIT-660 (at 'Abstract') is not in "
        "simsiam.md; the nearest words there (85% alike): …SimSiam method achieves [-com-]{+su+}pe[-t-]{+r+}i[-tive-]"
        "{+or+} results",
        "  hint: [-x-] is the copy's, {+x+} the passage's; correct the passage, or check that the copy is 'arXiv v1'",
    ]
    assert out[2].endswith("; nothing recorded")
    rendered = tmp_path / "simsiam.txt"  # what the page shows, saved as text: the same message, but for its name
    rendered.write_text(markdown_text(MARKDOWN).replace("**", "").replace("*", "").replace("`", ""), encoding="utf-8")
    assert verify(kb_root, "LIT-660", "--copy", str(rendered)) == 1
    assert capsys.readouterr().out.splitlines()[:2] == [line.replace("simsiam.md", "simsiam.txt") for line in out[:2]]


def test_markdown_loses_the_markup_that_opens_its_lines_and_keeps_its_words():
    page = "# Title #\nText\n===\n> > quoted\n- item\n  * sub\n+ plus\n1. numbered\n---\n```py\ncode\n```\n-1.5 stays"
    assert markdown_text(page).split("\n") == [
        " Title",
        "Text",
        "",
        "quoted",
        " item",
        " sub",
        " plus",
        "1. numbered",
        "",
        "",
        "code",
        "",
        "-1.5 stays",
    ]
