"""Passages: a source's words as its claims quote them, compared after one stated normalisation.

Two texts are compared after ``normalise``: every run of whitespace (line breaks, no-break and thin spaces
included) is one space; the ligatures ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ are their letters; curly single and double quotes
(‘ ’ ‚ ‛ “ ” „ ‟, and the primes ′ ″) are straight ones; "…" is "..."; zero-width characters are dropped; and a
hyphen that ends a line between two letters, like a soft hyphen (U+00AD), is a place where a word may break: it
matches nothing or a hyphen (`pre-⏎diction` is `prediction`, `self-⏎supervised` is `self-supervised`). Case,
dashes and every other character are compared as they are. A formula between TeX's delimiters (`$f_k$`, `\\(f_k\\)`)
is its symbols alone, as ``assay.records.formulas`` says (`fk`), so a quote that writes it in TeX matches a copy
that renders it.

Markdown's inline markup is what a rendered page does not show, so it goes on both sides (``markup``): a link or an
image `[text](url)` is its text; a backquote is nothing; a backslash before punctuation (`\\*`) is the punctuation;
an HTML entity (`&amp;`, `&#39;`) is its character; and a run of `*` or `_` goes where Markdown could read it as
emphasis (`**bold**`, `*em*`, `_em_`): where it touches a word on one side. A `*` between spaces (`2 * 3`) stays, and
so does an `_` between two letters or digits (`batch_size`), as Markdown leaves them. The rule reads the characters
alone, never whether the page rendered them: a `*` a page shows (`2*3`, rendered as it is) is in the quote too, and
goes there as it goes from the copy. Line markup (headings, list bullets, block quotes) begins a line, which only a
copy has: ``assay.copies.markdown`` reads it.

A quote is in a passage when its normalised words are a span of the passage's. A quote that elides (`…`,
`...`, `[…]` or `[...]`) is in a passage when its parts are, in order.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import html
import re

from assay.records.formulas import unwrap

#: Where a word may break: a soft hyphen, or what ``normalise`` makes of a hyphen at the end of a line.
BREAK = "\u00ad"

_FOLD = str.maketrans(
    {"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st", "…": "..."}
    | dict.fromkeys("‘’‚‛′", "'")
    | dict.fromkeys("“”„‟″", '"')
    | dict.fromkeys("\u200b\u200c\u200d\u2060\ufeff")
)
#: The hyphen is matched first and the letter before it looked back at: a pattern that begins with a literal is
#: searched for as one (17 times faster on a line with no hyphen than the letter looked back at everywhere).
_LINE_END_HYPHEN = re.compile(r"-(?<=[^\W\d_]-)[ \t]*\r?\n\s*(?=[^\W\d_])")
_SPACE = re.compile(r"\s+")
#: An elision in a quote, once normalised: `...` or `[...]`, with the spaces around it.
_ELISION = re.compile(r"\s*(?:\[\s*\.\.\.\s*\]|\.\.\.)\s*")


#: A backslash escape of Markdown (and TeX's `\\%`): the backslash before an ASCII punctuation character.
_ESCAPE = re.compile(r"\\(?=[!-/:-@\[-`{-~])")
#: One piece of inline markup: a link or image (its text holds no bracket and no line break, so no text is scanned
#: twice), an HTML entity, a run of `*` or `_`, or backquotes.
_MARKUP = re.compile(
    r"!?\[(?P<text>[^\[\]\n]*)\]\([^()\s]*(?:[ \t]+\"[^\"\n]*\")?\)"
    r"|(?P<entity>&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});)"
    r"|(?P<run>\*+|_+)"
    r"|`+"
)
_MARKED = frozenset("*_`[&\\")


def normalise(text: str) -> str:
    """``text`` as it is compared (see the module's docstring)."""
    return _SPACE.sub(" ", _LINE_END_HYPHEN.sub(BREAK, markup(unwrap(text.translate(_FOLD))))).strip()


def markup(text: str) -> str:
    """``text`` without Markdown's inline markup (see the module's docstring); its formulas are unwrapped first."""
    if _MARKED.isdisjoint(text):
        return text
    return _MARKUP.sub(_unmarked, _ESCAPE.sub("", text))


def _unmarked(m: re.Match[str]) -> str:
    if m["text"] is not None:
        return markup(m["text"])
    if m["entity"]:
        return html.unescape(m["entity"]).translate(_FOLD)  # `&rsquo;` is ’, which is '

    run = m["run"]
    if run is None:
        return ""  # backquotes
    text, start, end = m.string, m.start(), m.end()
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    if before.isspace() and after.isspace():
        return run  # touches no word: a `*` of arithmetic, a rule drawn with `___`
    if run[0] == "_" and before.isalnum() and after.isalnum():
        return run  # inside a word: `batch_size`
    return ""


def key(text: str) -> str:
    """A short digest of ``text`` normalised: what the rules across records compare without reading a record."""
    return hashlib.blake2b(normalise(text).encode(), digest_size=8).hexdigest()


def parts(quote: str) -> list[str]:
    """The parts of a normalised quote between its elisions (one part where it elides nothing)."""
    return [p for p in _ELISION.split(quote) if p]


def find(part: str, text: str, start: int = 0) -> tuple[int, int] | None:
    """Where the normalised ``part`` first lies in the normalised ``text`` at or after ``start``; None if nowhere."""
    if BREAK not in text and BREAK not in part:
        at = text.find(part, start)
        return None if at < 0 else (at, at + len(part))
    found = _breakable(part).search(text, start)
    return found.span() if found else None


@functools.lru_cache(maxsize=4096)
def _breakable(part: str) -> re.Pattern[str]:
    """``part`` as a pattern in which a word may break between any two letters, and a hyphen may be a break."""
    out = []
    for i, c in enumerate(part):
        if c == BREAK:
            out.append(f"[-{BREAK}]?")
            continue
        between = 0 < i < len(part) - 1 and part[i - 1].isalpha() and part[i + 1].isalpha()
        out.append(f"[-{BREAK}]" if c == "-" and between else re.escape(c))
        if c.isalpha() and i + 1 < len(part) and part[i + 1].isalpha():
            out.append(f"{BREAK}?")
    return re.compile("".join(out))


def holds(quote: str, passage: str) -> bool:
    """Whether the normalised ``quote`` is in the normalised ``passage``: as a span, or its parts in order."""
    pieces, at = parts(quote), 0
    for part in pieces:
        span = find(part, passage, at)
        if span is None:
            return False
        at = span[1]
    return bool(pieces)


def closeness(quote: str, passage: str) -> float:
    """How much of the normalised ``quote`` the normalised ``passage`` holds, 0 to 1: the share of the quote's
    characters in runs of three or more that the passage has in the same order."""
    words = "".join(parts(quote))
    blocks = difflib.SequenceMatcher(None, passage, words, autojunk=False).get_matching_blocks()
    return sum(b.size for b in blocks if b.size >= 3) / max(len(words), 1)


def difference(quote: str, passage: str) -> tuple[float, str]:
    """How alike the first part of ``quote`` that ``passage`` does not hold is to the passage's nearest words
    (0 to 1), and their difference character by character: ``[-x-]`` the passage's, ``{+x+}`` the quote's."""
    at = 0
    for part in parts(quote):
        span = find(part, passage, at)
        if span is None:
            window = _nearest(part, passage[at:]).replace(BREAK, "")  # a break shows as nothing
            return _alike(window, part), marked(window, part)
        at = span[1]
    return 1.0, ""


def alike(ratio: float) -> str:
    """A likeness as a reader sees it, rounded down: what differs by a character is never `100% alike`."""
    return f"{int(ratio * 100)}% alike"


def _nearest(part: str, text: str) -> str:
    """The span of ``text`` that lines up with ``part``: from its first long common run to its last, widened by
    what the part has beyond them, as far as that makes the two more alike."""
    blocks = [b for b in difflib.SequenceMatcher(None, text, part, autojunk=False).get_matching_blocks() if b.size >= 3]
    if not blocks:
        return text[: len(part)]
    first, last = blocks[0], blocks[-1]
    head, tail = first.b, len(part) - last.b - last.size  # what of the part lies before and after the common runs
    aligned = max(0, first.a - head)
    starts = range(max(0, aligned - 3), aligned + 1)
    start = max(starts, key=lambda a: (_alike(text[a : last.a + last.size], part[: last.b + last.size]), a))
    aligned = min(len(text), last.a + last.size + tail)
    ends = range(aligned, min(len(text), aligned + 3) + 1)
    end = max(ends, key=lambda b: (_alike(text[start:b], part), -b))
    return text[start:end].strip()


def _alike(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def marked(source: str, quote: str, context: int = 24) -> str:
    """``source`` turned into ``quote``, character by character: what only the source has as ``[-x-]``, what only
    the quote has as ``{+x+}``, and at most ``context`` characters of what they share on each side of a change."""
    ops = difflib.SequenceMatcher(None, source, quote, autojunk=False).get_opcodes()
    out = []
    for n, (tag, a0, a1, b0, b1) in enumerate(ops):
        if tag != "equal":
            out.append((f"[-{source[a0:a1]}-]" if a1 > a0 else "") + (f"{{+{quote[b0:b1]}+}}" if b1 > b0 else ""))
            continue
        same = source[a0:a1]
        if n == 0 and len(same) > context:
            same = "…" + same[-context:]
        elif n == len(ops) - 1 and len(same) > context:
            same = same[:context] + "…"
        elif 0 < n < len(ops) - 1 and len(same) > 2 * context:
            same = same[:context] + "…" + same[-context:]
        out.append(same)
    return "".join(out)


def starts(text: str, part: str) -> bool:
    """Whether the normalised ``text`` begins with the normalised ``part``."""
    if BREAK not in text and BREAK not in part:
        return text.startswith(part)
    return _breakable(part).match(text) is not None


def ends(text: str, part: str) -> bool:
    """Whether the normalised ``text`` ends with the normalised ``part``."""
    if BREAK not in text and BREAK not in part:
        return text.endswith(part)
    return re.search(f"(?:{_breakable(part).pattern})$", text) is not None
