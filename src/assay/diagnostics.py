"""Diagnostics are data: a stable code, a location, a message, and the way out.

``CATALOGUE`` is the one list of codes (declared in ``assay.codes``); the CLI prints from it and the site's diagnostics page is
generated from it. A diagnostic renders as ``path:line:col: severity[code]: message`` with an
optional ``hint:`` line.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from assay.codes import CODES, PER_FILE, Code, Severity  # noqa: F401 - Code, Severity and PER_FILE are read from here too

#: Where a value sits in a record's data: the keys and list indices that lead to it.
Loc = tuple[str | int, ...]
#: Line and column (1-based) in the record file.
Pos = tuple[int, int]


class UsageProblem(Exception):
    """A problem with what the user asked for (a command's arguments); printed as one line, exit status 2."""


CATALOGUE: dict[str, Code] = {c.name: c for c in CODES}


@dataclass(frozen=True, order=True)
class Diagnostic:
    """A problem found at a place in a file."""

    path: str
    line: int
    col: int
    code: str
    message: str
    hint: str | None = None

    def __post_init__(self) -> None:
        if self.code not in CATALOGUE:
            raise ValueError(f"unknown diagnostic code {self.code!r}")

    @property
    def severity(self) -> Severity:
        return CATALOGUE[self.code].severity

    def render(self) -> str:
        """``path:line:col: severity[code]: message``, then ``  hint: ...`` when there is one.

        Path, message and hint pass through ``printable``: what a record says cannot reach the terminal
        as a control sequence, nor fake a line of output.
        """
        text = f"{printable(self.path)}:{self.line}:{self.col}: {self.severity}[{self.code}]: {printable(self.message)}"
        return f"{text}\n  hint: {printable(self.hint)}" if self.hint else text


def printable(text: str) -> str:
    """``text`` with every character Python does not call printable (controls such as ESC and line breaks,
    bidirectional overrides such as U+202E, other invisible format characters) written as its escape:
    ``\\x1b``, ``\\n``, ``\\u202e``. For text from records on its way to a terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def shortened(text: str, width: int = 60, mark: str = "...") -> str:
    """``text`` as a message quotes it: cut to ``width`` characters, the last ones ``mark``, where it is longer."""
    return text if len(text) <= width else text[: width - len(mark)] + mark


def capped(found: Iterable[Diagnostic], unlisted: Mapping[str, int] | None = None) -> list[Diagnostic]:
    """``found`` sorted, with at most ``PER_FILE`` diagnostics of each file listed, errors before warnings.

    The rest of a file's diagnostics, and the ``unlisted[path]`` problems that were counted but never made into
    diagnostics (errors, all of them), become one diagnostic where the first left out was: too-many-problems when
    an error is among them, too-many-warnings when only warnings are.
    """
    unlisted = unlisted or {}
    out: list[Diagnostic] = []
    for path, group in itertools.groupby(sorted(found), key=lambda d: d.path):
        every = list(group)
        ranked = sorted(every, key=lambda d: (d.severity != "error", d))  # errors are never hidden behind warnings
        listed, left = sorted(ranked[:PER_FILE]), ranked[PER_FILE:]
        more = len(left) + unlisted.get(path, 0)
        out += listed
        if not more:
            continue
        where = min(left) if left else listed[-1]
        code = "too-many-problems" if unlisted.get(path) or any(d.severity == "error" for d in left) else "too-many-warnings"
        noun = "problem" if code == "too-many-problems" else "warning"
        out.append(
            Diagnostic(
                path,
                where.line,
                where.col,
                code,
                f"{more} more {noun if more == 1 else noun + 's'} in this file {'is' if more == 1 else 'are'} not listed",
                "fix these and run assay check again",
            )
        )
    return out


#: Bidirectional embeddings, overrides and isolates: text holding them can show in another order than it reads
#: (the "Trojan Source" class). The marks U+200E/U+200F change no order of what is written and are let be.
BIDI_CHARACTERS = "".join(map(chr, [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]))
BIDI_CONTROLS = re.compile(f"[{BIDI_CHARACTERS}]")


#: The same in a record's text: raw, or written as a YAML escape in a double-quoted scalar.
_BIDI_IN_SOURCE = re.compile(r"[\u202a-\u202e\u2066-\u2069]|\\(?:u|U0000)(?:202[a-eA-E]|206[6-9])")


def _code_point(found: str) -> int:
    return ord(found) if len(found) == 1 else int(found[-4:], 16)


def bidi_controls(source: str, path: str) -> list[Diagnostic]:
    """A ``bidi-control`` diagnostic where each of the first few bidirectional controls of a file's ``source``
    stands (one search over the text, in C)."""
    if "\\" not in source:  # no escape of one: only the controls themselves to look for, a search many times faster
        if source.isascii():
            return []  # nor a control: most files, known without the search
        found = BIDI_CONTROLS.finditer(source)
    else:
        found = _BIDI_IN_SOURCE.finditer(source)
    out = []
    for m in found:
        line = source.count("\n", 0, m.start()) + 1
        col = m.start() - (source.rfind("\n", 0, m.start()) + 1) + 1
        out.append(
            Diagnostic(
                path,
                line,
                col,
                "bidi-control",
                f"U+{_code_point(m.group()):04X}, a bidirectional control, can make the text show in another order than it reads",
                "delete it; write the text in the order it is read",
            )
        )
        if len(out) == 5:
            break
    return out
