"""Passages: a source's words as its claims quote them, compared after one stated normalisation.

Two texts are compared after ``normalise``: every run of whitespace (line breaks, no-break and thin spaces
included) is one space; the ligatures ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ are their letters; curly single and double quotes
(‘ ’ ‚ ‛ “ ” „ ‟, and the primes ′ ″) are straight ones; "…" is "..."; zero-width characters are dropped; and a
hyphen that ends a line between two letters, like a soft hyphen (U+00AD), is a place where a word may break: it
matches nothing or a hyphen (`pre-⏎diction` is `prediction`, `self-⏎supervised` is `self-supervised`). Case,
dashes and every other character are compared as they are. A formula between TeX's delimiters (`$f_k$`, `\\(f_k\\)`)
is its symbols alone, as ``assay.records.formulas`` says (`fk`), so a quote that writes it in TeX matches a copy
that renders it.

A quote is in a passage when its normalised words are a span of the passage's. A quote that elides (`…`,
`...`, `[…]` or `[...]`) is in a passage when its parts are, in order.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
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


def normalise(text: str) -> str:
    """``text`` as it is compared (see the module's docstring)."""
    return _SPACE.sub(" ", _LINE_END_HYPHEN.sub(BREAK, unwrap(text.translate(_FOLD)))).strip()


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
            return difflib.SequenceMatcher(None, window, part, autojunk=False).ratio(), marked(window, part)
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
