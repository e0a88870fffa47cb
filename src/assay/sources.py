"""``assay sources verify``: a source's passages against a local copy of its text (``assay.copies``).

Each passage read from the copy's version (the source's ``read_from`` unless ``--version`` names another; a
passage with its own ``read_from``, its code say, is checked against a copy of that) must be in the copy, compared
as ``assay.records.passages`` says, and between its prefix and suffix where it gives them. When every one is, the
copy's SHA-256, version and format and the day are recorded under the source's ``copies:``, the rest of its file
left as it is written; when one is not, nothing is written and the command exits 1.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from assay import copies
from assay.bibliography import Copy, Passage
from assay.diagnostics import Diagnostic, UsageProblem, printable
from assay.files import write_atomic
from assay.fingerprints import sha256
from assay.model import Source
from assay.records.document import Loaded
from assay.records.knowledge_base import KnowledgeBase, load
from assay.records.lookup import record_id
from assay.records.passages import BREAK, alike, difference, ends, find, normalise, starts
from assay.records.yaml_safe import read_yaml


def cmd_sources(args: argparse.Namespace) -> int:
    """Check a source's passages against a local copy of its text: verify [ID] --copy FILE; fetch ID downloads one.

    Every passage read from the copy's version must be in the copy (plain text, Markdown, HTML, LaTeX source or PDF),
    compared after the normalisation `assay check` compares quotes with (whitespace, ligatures, quote marks, line-end
    hyphens, formulas, Markdown's markup), between its prefix and suffix. When every one is, the copy's sha256,
    version and format are recorded under the source's copies:. Without ID, the source is the one whose passages the
    copy holds most. Exit status 1 when a passage is not in the copy.

    fetch ID downloads the pinned version of a source into the user's cache, where there is a network: an arXiv
    preprint's PDF (--format html: its HTML, where arXiv has one), or the page at its url:, and says where it put it.

    example: assay sources verify LIT-590 --copy 1911.05722v3.html
    """
    kb = load(args.root)
    if args.id is not None:
        record_id(kb, args.id, kind="source")  # a usage error where it names no valid source
    if args.action == "fetch":
        return fetch(kb, args.id, args.format)
    if args.copy is None:
        raise UsageProblem("assay sources verify needs --copy FILE: the copy of the source's text to check against")
    copy = copies.read(args.copy)
    text = normalise(copy.text)
    sid = args.id or _likeliest(kb, text, copy.name)
    f, source = kb.source_files[sid], kb.sources[sid]
    version = args.version or source.read_from
    if version is None:
        raise UsageProblem(f"{sid} names no read_from; say which version the copy is with --version")
    outcome = verify(f, source, text, version, copy.name)
    if not outcome.checked:
        raise UsageProblem(f"{sid} keeps no passage read from {version!r}")
    for d in outcome.diagnostics:
        print(d.render())
    ok = outcome.found == outcome.checked
    if ok:
        entry = Copy(version=version, file=copy.name, sha256=copy.sha256, format=copy.format, checked=_today())
        record(kb.root / f.path, source, entry)
    others = f"; {outcome.skipped} read from elsewhere not checked" if outcome.skipped else ""
    print(
        printable(
            f"{sid}: {outcome.found} of {outcome.checked} passages read from {version!r} are in {copy.name} "
            f"({copy.format}, sha256 {copy.sha256}){others}; "
            + (f"recorded under copies: in {f.path}" if ok else "nothing recorded")
        )
    )
    return 0 if ok else 1


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("verify", "fetch"))
    p.add_argument("id", nargs="?", metavar="ID", help="the source (default: the one whose passages the copy holds most)")
    p.add_argument("--copy", type=Path, metavar="FILE", help="verify: the copy (.txt, .md, .html, .tex or .pdf)")
    p.add_argument("--version", help="verify: the version the copy is (default: the source's read_from)")
    p.add_argument("--format", choices=("pdf", "html"), default="pdf", help="fetch: an arXiv preprint as PDF or HTML")


#: Where arXiv is (``$ASSAY_ARXIV_URL`` names a mirror, or a local server in the tests).
ARXIV = "https://arxiv.org"


def fetch(kb: KnowledgeBase, sid: str | None, fmt: str) -> int:
    """Download the pinned version of source ``sid`` into the user's cache (``assay.corpus.folder()/sources``)."""
    import os
    import urllib.error
    import urllib.request

    from assay.corpus import folder

    if sid is None:
        raise UsageProblem("assay sources fetch needs the id of a valid source; assay status lists them")
    ids = kb.sources[sid].identifiers
    base = os.environ.get("ASSAY_ARXIV_URL", ARXIV).rstrip("/")
    if ids.arxiv:
        url, name = f"{base}/{fmt}/{ids.arxiv}", f"{sid}-{ids.arxiv}.{fmt}"
    elif ids.url:
        url, name = ids.url, f"{sid}.html"
    else:
        raise UsageProblem(f"{sid} has no arXiv id or url to download from; save a copy by hand and pass it to verify")
    try:
        with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 - an http(s) address from the record
            data = response.read(copies.MAX_BYTES + 1)
    except (urllib.error.URLError, OSError, ValueError) as e:
        why = getattr(e, "reason", None) or e
        raise UsageProblem(f"could not download {url} ({why}); where there is no network, save a copy by hand") from None
    if len(data) > copies.MAX_BYTES:
        raise UsageProblem(f"{url} is larger than {copies.MAX_BYTES // 2**20} MiB; no source's text is")
    path = folder() / "sources" / name
    write_atomic(path, data)
    print(printable(f"{sid}: {url} saved as {path} ({len(data):,} bytes, sha256 {sha256(data)})"))
    print(printable(f"check its passages against it: assay sources verify {sid} --copy {path}"))
    return 0


@dataclass
class Outcome:
    """What checking a source's passages against a copy found."""

    checked: int = 0  # passages read from the copy's version
    found: int = 0  # of them, those in the copy
    skipped: int = 0  # passages read from another version
    diagnostics: list[Diagnostic] = field(default_factory=list)


def verify(f: Loaded, source: Source, text: str, version: str, name: str) -> Outcome:
    """Each passage of ``source`` read from ``version`` against the normalised ``text`` of the copy ``name``."""
    out = Outcome()
    for n, p in enumerate(source.passages):
        if (p.read_from or source.read_from) != version:
            out.skipped += 1
            continue
        out.checked += 1
        where = f"passage {n + 1} of {source.id} (at {p.locator!r})"
        exact = normalise(p.exact)
        spans = _occurrences(exact, text)
        if not spans:
            out.diagnostics.append(_missing(f, n, where, exact, text, name, version))
            continue
        out.found += 1
        if not any(_context(p, text, span) == [] for span in spans):
            differs = _context(p, text, spans[0])
            out.diagnostics.append(
                f.diag(
                    ("passages", n, differs[0][0]),
                    "passage-context",
                    f"{where} is in {name}, but its " + " and ".join(f"{k} {w!r} is {got!r} there" for k, w, got in differs),
                    "take the prefix and suffix from the copy: the few words on either side of the passage",
                )
            )
    return out


def _occurrences(exact: str, text: str, most: int = 100) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    span = find(exact, text)
    while span is not None and len(spans) < most:
        spans.append(span)
        span = find(exact, text, span[0] + 1)
    return spans


def _context(p: Passage, text: str, span: tuple[int, int]) -> list[tuple[str, str, str]]:
    """(field, its words, the copy's words there) of the prefix and suffix that differ from the copy at ``span``."""
    before, after = text[: span[0]].rstrip(), text[span[1] :].lstrip()
    differs = []
    if p.prefix and not ends(before, prefix := normalise(p.prefix)):
        shown = before.replace(BREAK, "")
        cut = shown.rfind(" ", 0, max(0, len(shown) - len(prefix)))  # from the start of a word
        differs.append(("prefix", p.prefix, shown[cut + 1 :]))
    if p.suffix and not starts(after, suffix := normalise(p.suffix)):
        shown = after.replace(BREAK, "")
        cut = shown.find(" ", len(suffix))  # to the end of a word
        differs.append(("suffix", p.suffix, shown[: cut if cut >= 0 else len(shown)]))
    return differs


def _missing(f: Loaded, n: int, where: str, exact: str, text: str, name: str, version: str) -> Diagnostic:
    window = _nearest(exact, text)
    hint = f"correct the passage, or check that the copy is {version!r}"
    if window is None:
        return f.diag(("passages", n, "exact"), "passage-not-in-copy", f"{where} is not in {name}, nor anything like it", hint)
    ratio, marks = difference(exact, window)
    return f.diag(
        ("passages", n, "exact"),
        "passage-not-in-copy",
        f"{where} is not in {name}; the nearest words there ({alike(ratio)}): {marks}",
        "[-x-] is the copy's, {+x+} the passage's; " + hint,
    )


def _nearest(exact: str, text: str, bucket: int = 64) -> str | None:
    """The stretch of ``text`` where most runs of four of the passage's words are, or None where none is."""
    words = exact.split(" ")
    offsets = [0]
    for w in words[:-1]:
        offsets.append(offsets[-1] + len(w) + 1)
    votes: Counter[int] = Counter()
    for k in range(max(1, len(words) - 3)):
        at = text.find(" ".join(words[k : k + 4]))
        if at >= 0:
            votes[(at - offsets[k]) // bucket] += 1
    if not votes:
        return None
    start = max(0, votes.most_common(1)[0][0] * bucket - bucket)
    return text[start : start + len(exact) + 3 * bucket]


def _likeliest(kb: KnowledgeBase, text: str, name: str) -> str:
    """The source whose passages ``text`` holds most; a usage problem where none or two are first."""
    held = []
    for sid in kb.sources:
        count = sum(find(normalise(p.exact), text) is not None for p in kb.sources[sid].passages)
        if count:
            held.append((count, sid))
    held.sort(key=lambda x: (-x[0], x[1]))
    if not held:
        raise UsageProblem(f"{name} holds no passage of any source; name the source: assay sources verify ID --copy FILE")
    if len(held) > 1 and held[0][0] == held[1][0]:
        raise UsageProblem(f"{name} holds as many passages of {held[0][1]} as of {held[1][1]}; name the source")
    return held[0][1]


def record(path: Path, source: Source, entry: Copy) -> None:
    """Write ``entry`` under the source's ``copies:`` in its file at ``path``, in place of one with its SHA-256."""
    kept = [c for c in source.copies if c.sha256 != entry.sha256] + [entry]
    text = with_copies(path.read_text(encoding="utf-8"), kept)
    data, _, problems = read_yaml(text.encode("utf-8"), path.name)
    try:
        Source.model_validate(data)
    except ValueError as e:
        problems = problems or [str(e)]
    if problems:
        raise UsageProblem(f"{path.name}: its copies: could not be written (the file would not validate); add by hand: {entry}")
    write_atomic(path, text)


def with_copies(text: str, kept: list[Copy]) -> str:
    """The record's ``text`` with its top-level ``copies:`` block (or a new one at its end) holding ``kept``."""
    block = "copies:\n" + "".join(
        f"  - {{version: {json.dumps(c.version, ensure_ascii=False)}, file: {json.dumps(c.file, ensure_ascii=False)}, "
        f'sha256: "{c.sha256}", format: {c.format}, checked: "{c.checked}"}}\n'
        for c in kept
    )
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if re.match(r"copies\s*:", line)), None)
    if start is None:
        return text + ("" if text.endswith("\n") or not text else "\n") + block
    end = start + 1
    while end < len(lines) and (lines[end][:1] in (" ", "\t", "-") or not lines[end].strip()):
        end += 1
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1  # the blank lines after the block stay
    return "".join(lines[:start]) + block + "".join(lines[end:])


def _today() -> str:
    return dt.date.today().isoformat()
