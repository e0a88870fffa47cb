"""What ``assay check`` says of the ledger: files that cannot be trusted (``store.read_ledger`` finds them), results
of a claim, check or device this knowledge base does not have, and figures that are missing or do not match the
hash their result names.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator
from pathlib import Path

from assay import corpus
from assay.diagnostics import Diagnostic
from assay.files import Unreadable, read_regular
from assay.fingerprints import sha256, stamp
from assay.ledger.layout import ledger_path, result_file
from assay.ledger.result import Key
from assay.ledger.store import Ledger, leftovers, read_ledger
from assay.records.knowledge_base import KnowledgeBase
from assay.svg import unsafe


def figure_problems(
    root: Path, key: Key, figures: tuple[tuple[str, str], ...], store: corpus.ParseCache | None = None
) -> list[str]:
    """Figures (file, hash) the result of ``key`` names that are missing or do not match their hash (a run
    killed between writes). ``store``: keep each figure's hash under its stamp between runs (``assay.corpus``),
    so a large ledger's figures are read once per change, not on every check; only where no link lies on
    the way to the file."""
    out = []
    folder = ledger_path(root, *key).parent
    direct = store is not None and os.path.realpath(folder) == str(folder)
    for file, sha in figures:
        rel = Path(result_file(*key)).with_name(file).as_posix()
        current = stamp(folder / file) if direct else None
        try:
            digest, why = (store or corpus.UNCACHED).memo(rel, current, lambda: _figure_reading(root, folder / file))
        except Unreadable as e:
            out.append(f"{file} {e}")
            continue
        if why is not None:
            out.append(f"{file} is not shown: {why}")
            continue
        if digest != sha:
            out.append(f"{file} is not the figure this result drew (its hash differs)")
    return out


def _figure_reading(root: Path, path: Path) -> tuple[str, str | None]:
    """A figure's hash, and why it may not reach a page (``assay.svg``), from one read."""
    data = read_regular(root, path)
    return sha256(data), unsafe(data)


#: A figure's reading as the cache keeps it: its hash, and why it may not reach a page.
FIGURE = tuple[str, str | None]

#: The modules a figure's reading in the cache depends on, besides those of every parse (``assay.corpus``).
FIGURES_ALSO = ("svg", "ledger.result", "ledger.store", "ledger.problems")

_ORPHAN_HINT = "delete it (git rm), or restore the check it belongs to; nothing reads it"


def _orphan(kb: KnowledgeBase, key: Key, devices: dict[str, dict[str, tuple[str, ...]] | None]) -> str:
    """Whose result ``key`` is, where this knowledge base has no such claim, check or device (else empty). A claim
    whose record is invalid is not judged: its checks cannot be told. ``devices``: each claim's checks and their
    devices, as far as made (from the outline: no record is thawed), kept between keys."""
    cid, check_id, device = key
    if cid not in kb.by_id:
        return f"{cid}, which is not a record here"
    if cid not in devices:
        loaded = kb.claim_files.get(cid)
        checks = None if loaded is None or loaded.outline is None else loaded.outline.checks
        devices[cid] = None if checks is None else {}
        for c in checks or ():
            devices[cid].setdefault(c.id, tuple(c.devices))  # type: ignore[union-attr]  # of a duplicate id, the first
    known = devices[cid]
    if known is None:
        return ""
    if check_id not in known:
        return f"check '{check_id}', which {cid} does not have"
    return "" if device in known[check_id] else f"{cid}/{check_id} on {device}, a device the check does not declare"


def diagnostics(kb: KnowledgeBase, ledger: Ledger | None = None) -> Iterator[Diagnostic]:
    """Ledger files that cannot be trusted (they count as errors), and results whose figures do not match
    (``ledger``: as ``read_ledger`` reads it, where the caller has it)."""
    big = corpus.large(len(kb.files))
    ledger = read_ledger(kb.root, cache=big) if ledger is None else ledger
    yield from ledger.diagnostics
    devices: dict[str, dict[str, tuple[str, ...]] | None] = {}
    for key in ledger.results:  # the keys only: no result is validated for this
        whose = _orphan(kb, key, devices)
        if whose:
            path = result_file(*key)
            yield Diagnostic(path, 1, 1, "ledger-orphan", f"{path} is a result of {whose}", _ORPHAN_HINT)
    store = corpus.ParseCache(kb.root, "figures", also=FIGURES_ALSO, value=FIGURE) if big and ledger.figures else None
    for key, figures in ledger.figures.items():
        for problem in figure_problems(kb.root, key, figures, store):
            path = result_file(*key)
            yield Diagnostic(path, 1, 1, "ledger-figure", problem, "rerun the check; the page shows no figure until then")
    if store is not None:
        store.save()
    for path in leftovers(kb.root):
        yield Diagnostic(
            path,
            1,
            1,
            "ledger-leftover",
            f"{path} is a temporary file left by a run killed between writing a file of the ledger and renaming it; "
            "nothing reads it",
            f"delete it (rm {shlex.quote(path)}); it is no result, and .gitignore keeps it out of a commit",
        )
