"""assay.records.passages: the normalisation quotes, passages and copies are compared after, and what "in" means."""

from __future__ import annotations

import pytest

from assay.records.passages import BREAK, difference, holds, key, normalise


def within(quote: str, passage: str) -> bool:
    return holds(normalise(quote), normalise(passage))


def test_every_run_of_whitespace_is_one_space_line_breaks_and_no_break_spaces_included():
    assert normalise("  two\n\t words\u00a0and\u2009three  ") == "two words and three"


def test_ligatures_are_their_letters_and_curly_quotes_are_straight():
    assert normalise("the ﬁrst “cheat” isn’t ‘ﬂat’") == "the first \"cheat\" isn't 'flat'"


def test_zero_width_characters_are_dropped_and_an_ellipsis_is_three_dots():
    assert normalise("zero\u200bwidth\ufeff …") == "zerowidth ..."


def test_case_and_dashes_are_compared_as_they_are():
    assert not within("Using BN", "using BN")
    assert not within("end–to–end", "end-to-end")


@pytest.mark.parametrize("broken", ["pre-\ndiction", "pre-  \n   diction", "pre\u00addiction"])
def test_a_hyphen_at_a_line_end_or_a_soft_hyphen_matches_nothing(broken):
    assert normalise(broken) == f"pre{BREAK}diction"
    assert within("better prediction", f"a better {broken} accuracy")


def test_a_hyphen_at_a_line_end_also_matches_a_hyphen():
    assert within("self-supervised learning", "self-\nsupervised learning")


def test_a_hyphen_between_words_on_one_line_stays_a_hyphen():
    assert not within("selfsupervised", "self-supervised")
    assert normalise("pre- and post-training") == "pre- and post-training"


def test_a_quote_is_in_a_passage_when_it_is_a_span_of_it():
    assert within("prevents the model", "Using BN prevents the model from learning.")
    assert not within("prevents a model", "Using BN prevents the model from learning.")


@pytest.mark.parametrize("elision", ["…", "...", "[…]", "[...]", " … "])
def test_a_quote_that_elides_is_in_a_passage_when_its_parts_are_in_order(elision):
    passage = "We resolve this problem by shuffling BN. We train with multiple GPUs."
    assert within(f"We resolve this problem{elision}multiple GPUs.", passage)
    assert not within(f"multiple GPUs{elision}We resolve this problem", passage)


def test_a_quote_that_is_only_an_elision_is_in_no_passage():
    assert not within("…", "anything at all")


def test_equal_texts_have_equal_keys_after_normalising():
    assert key("the “cheat”\n  task") == key('the "cheat" task') != key("the cheat task")


def test_the_difference_shows_what_only_the_passage_has_what_only_the_quote_has_and_24_characters_around():
    passage = normalise("In experiments, we found that using BN prevents the model from learning good representations.")
    assert difference(normalise("using BN prevent the model"), passage) == (
        pytest.approx(0.98, abs=0.01),
        "using BN prevent[-s-] the model",
    )
    assert difference(normalise("Using BN prevents the model"), passage)[1] == "[-u-]{+U+}sing BN prevents the mod…"


def test_the_difference_is_that_of_the_first_part_of_an_elided_quote_not_in_the_passage():
    passage = normalise("One composition stands out: random cropping and random color distortion.")
    assert difference(normalise("One composition … random colour distortion."), passage)[1] == "random colo{+u+}r distortion."


# --- Markdown's inline markup, on both sides ---------------------------------------------------------


@pytest.mark.parametrize(
    ("marked", "shown"),
    [
        ("a **bold** claim", "a bold claim"),
        ("an *emphasised* and _underscored_ word", "an emphasised and underscored word"),
        ("the `stop-gradient` branch", "the stop-gradient branch"),
        ("see [the code](https://github.com/x/y_z) and ![a figure](fig_1.png)", "see the code and a figure"),
        ("Tom &amp; Jerry&#39;s &ldquo;cheat&rdquo;", 'Tom & Jerry\'s "cheat"'),
        ("an escaped \\*star\\* and \\_under\\_", "an escaped star and under"),
    ],
)
def test_markdown_s_inline_markup_is_what_the_rendered_page_does_not_show(marked, shown):
    assert normalise(marked) == shown
    assert within(shown, marked) and within(marked, shown)  # a quote from either side is in a passage from the other


def test_a_star_between_spaces_is_arithmetic_and_stays():
    assert normalise("2 * 3 = 6") == "2 * 3 = 6"
    assert not within("2 * 3 = 6", "2 3 = 6")


def test_an_underscore_inside_a_word_stays():
    assert normalise("batch_size and snake_case_name") == "batch_size and snake_case_name"
    assert not within("batchsize", "batch_size")


def test_a_star_touching_a_word_goes_from_both_sides_alike():
    # `2*3` is no emphasis, and a page shows it as it is; the quote copied from that page drops it as the copy does
    assert normalise("the product 2*3") == "the product 23"
    assert within("product 2*3", "the product 2*3 is six")


def test_a_bracket_that_opens_no_link_and_an_elision_stay():
    assert normalise("[the model] learns [...] (in §3)") == "[the model] learns [...] (in §3)"
