"""assay.records.formulas: a formula is its symbols, whether written in TeX or in MathML."""

from __future__ import annotations

from assay.records.formulas import plain, unwrap


def test_tex_and_mathml_text_of_one_formula_are_the_same_symbols():
    assert plain("\\mathcal{O}(n^{2} \\log n)") == plain("O ( n 2 log\u2061 n )") == "O(n2logn)"


def test_greek_letters_and_operators_are_their_unicode_characters():
    assert plain("\\alpha_i \\leq \\Lambda\\, x") == "αi≤Λx"


def test_each_delimiter_of_a_formula_is_unwrapped():
    assert unwrap("$f_k$, \\(f_q\\), \\[x^2\\] and $$y_1$$") == "fk, fq, x2 and y1"


def test_prices_and_an_unclosed_dollar_are_not_formulas():
    assert unwrap("it costs $5 and $6, or $ 7") == "it costs $5 and $6, or $ 7"


def test_an_escaped_dollar_opens_no_formula():
    assert unwrap("\\$x$ y") == "\\$x$ y"
