"""What a command-line argument names: a record or a check of the knowledge base, or a usage error with the way out.

Every command that takes an id resolves it here (``assay show ID``, ``history ID/CHECK``, ``graph --focus``,
``check|plan|verify --claim``, ``sources verify|fetch ID``, ``new claim --source``, ``pytest verify --claim --check``):
one line that names the argument, and a "did you mean" where an id is near. An id that differs from one here only by
case or by leading zeros (``sota-364``, ``SOTA-0364``) is not taken for it, since ids match exactly everywhere
else; it is the one suggested.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterable

from assay.diagnostics import UsageProblem
from assay.records.knowledge_base import KnowledgeBase


def record_id(kb: KnowledgeBase, given: str, *, kind: str = "record", option: str = "", valid: bool = True) -> str:
    """``given`` where it is the id of a ``kind`` of record here (a valid one, unless ``valid`` is false); else raise
    ``UsageProblem``: ``--claim SOTA-36: 'SOTA-36' is not a claim of this knowledge base; did you mean 'SOTA-364'?``.
    ``option``: the option that gave it, named first (none for a positional argument)."""
    present, usable = _ids(kb, kind)
    wanted = usable if valid else present
    if given in wanted:
        return given
    said = f"{option} {given}: " if option else ""
    if given in present:
        raise UsageProblem(f"{said}{given!r} is not a valid {kind}; run `assay check` to see why")
    raise UsageProblem(f"{said}{given!r} is not a {kind} of this knowledge base{near(given, wanted)}")


def record_ids(kb: KnowledgeBase, given: Iterable[str], *, kind: str = "claim", option: str = "--claim") -> list[str]:
    """``record_id`` of each of ``given``, in order."""
    return [record_id(kb, g, kind=kind, option=option) for g in given]


def check_id(kb: KnowledgeBase, claim_id: str, given: str, *, option: str = "") -> str:
    """``given`` where it is a check of the valid claim ``claim_id``; else raise ``UsageProblem`` naming its checks."""
    checks = [c.id for c in kb.claims[claim_id].checks]
    if given in checks:
        return given
    said = f"{option} {given}: " if option else ""
    hint = near(given, checks) or f"; its checks: {', '.join(checks) or 'none'}"
    raise UsageProblem(f"{said}{claim_id} has no check {given!r}{hint}")


def near(given: str, known: Collection[str]) -> str:
    """``; did you mean 'X'?`` for the id of ``known`` nearest ``given`` (the same but for case or leading zeros
    first), or empty."""
    key = _canonical(given)
    same = sorted(k for k in known if _canonical(k) == key) if key else []
    close = same or difflib.get_close_matches(given.upper() if key else given, sorted(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


_ID = re.compile(r"([A-Za-z]+)-0*([0-9]+)")


def _canonical(rid: str) -> tuple[str, int] | None:
    m = _ID.fullmatch(rid.strip())
    return (m[1].upper(), int(m[2])) if m else None


def _ids(kb: KnowledgeBase, kind: str) -> tuple[Collection[str], Collection[str]]:
    """The ids of ``kind`` that are here (any file of its folder, or of any folder for a record), and the valid ones."""
    if kind == "claim":
        return {f.id for f in kb.files if f.folder == "claims"}, kb.claims
    if kind == "source":
        return {f.id for f in kb.files if f.folder == "sources"}, kb.sources
    return kb.by_id, kb.by_id
