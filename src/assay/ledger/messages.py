"""What a failure says, made fit for a page: no engine frames, no machine paths."""

from __future__ import annotations

import re

_ENGINE = re.compile(r"(site-packages|dist-packages|_pytest|pluggy|/assay/|\\assay\\|<frozen )")


_FRAME = re.compile(r'^\s*File "([^"]+)", line \d+')


_ABSOLUTE = re.compile(r"(?<![\w.:/])(/(?:[\w.@+-]+/)+)([\w.@+-]+)|[A-Za-z]:\\(?:[\w.@+ -]+\\)+([\w.@+-]+)")


def clean_message(text: str) -> str:
    """A failure or crash message as a page shows it: the engine's frames dropped (with the source line under
    each), every absolute path cut to the file's name below the knowledge base (``verify/x.py``) or to its
    last part. Applied to whatever the ledger says, since a page never shows a machine path."""
    out, skip = [], False
    for line in text.splitlines():
        frame = _FRAME.match(line)
        if frame:
            skip = bool(_ENGINE.search(frame.group(1))) or not _is_verifier(frame.group(1))
        elif skip and line.startswith("    ") and not line.strip().startswith("File "):
            continue  # the code line under a dropped frame
        else:
            skip = False
        if skip or line.strip() == "Traceback (most recent call last):":
            continue
        out.append(_ABSOLUTE.sub(_relative, line))
    return "\n".join(out).strip()


def first_line(e: Exception) -> str:
    """An exception's message in one line: its first, or its type's name where it says nothing."""
    return str(e).splitlines()[0] if str(e) else type(e).__name__


def _is_verifier(path: str) -> bool:
    return "/verify/" in path.replace("\\", "/") or path.replace("\\", "/").startswith("verify/")


def _relative(m: re.Match) -> str:
    whole = m.group(0).replace("\\", "/")
    if "/verify/" in whole:
        return "verify/" + whole.split("/verify/", 1)[1]
    return m.group(2) or m.group(3) or whole.rsplit("/", 1)[-1]
