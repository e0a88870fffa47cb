"""The knowledge base: every record file under a root, loaded (in parallel and from the cache when large)."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from operator import attrgetter
from pathlib import Path
from typing import Any

from assay import corpus
from assay.diagnostics import Diagnostic
from assay.files import link_out
from assay.fingerprints import Stamp, stamp
from assay.model import MODELS, SERIES, Check, Claim, Decision, Source
from assay.records.document import STATE, Loaded
from assay.records.validation import load_record


@dataclass
class KnowledgeBase:
    """Every record file under a root, loaded; diagnostics of reading and of each record.

    The indices are built once, when the knowledge base is made: ``files`` is not to change after. They
    hold files, not records: a record taken from the parse cache is validated from its data only when looked at.
    """

    root: Path
    files: list[Loaded]
    #: The first file of each id, one named by its id before any other (a duplicate is reported by
    #: ``assay.records.across``).
    by_id: dict[str, Loaded] = field(init=False, repr=False)
    #: The files of the valid records of each kind by id; the first of a duplicated id wins, as in ``by_id``.
    claim_files: dict[str, Loaded] = field(init=False, repr=False)
    source_files: dict[str, Loaded] = field(init=False, repr=False)
    decision_files: dict[str, Loaded] = field(init=False, repr=False)
    #: Their records, by id: ``Claim``, ``Source`` and ``Decision`` objects, validated when looked at and let go when
    #: their consumer is done (``corpus.Lazy.using``).
    claims: corpus.Lazy[str, Any] = field(init=False, repr=False)
    sources: corpus.Lazy[str, Any] = field(init=False, repr=False)
    decisions: corpus.Lazy[str, Any] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.by_id, self.claim_files, self.source_files, self.decision_files = {}, {}, {}, {}
        valid: dict[Any, dict[str, Loaded]] = {Claim: self.claim_files, Source: self.source_files, Decision: self.decision_files}
        for f in named_first(self.files):
            self.by_id.setdefault(f.id, f)
            index = valid.get(f.model)
            if index is not None:
                index.setdefault(f.id, f)
        self.claims, self.sources, self.decisions = (
            corpus.Lazy(attrgetter("record"), files, Loaded.release)
            for files in (self.claim_files, self.source_files, self.decision_files)
        )

    def check(self, claim_id: str, check_id: str) -> Check | None:
        """The check ``check_id`` of the valid claim ``claim_id``, or None."""
        claim = self.claims.get(claim_id)
        return claim.check(check_id) if claim else None


def load(root: Path, cache: bool | None = None) -> KnowledgeBase:
    """Load every ``*.yaml`` record under ``root``'s claims/, sources/ and decisions/.

    ``cache``: reuse the parse of every file unchanged since the last run; by default where the files are
    ``corpus.large``. The files it lacks are then parsed by as many processes as the machine has cores, each made as
    the cache keeps it: 50,000 records parsed at once would not fit otherwise (``corpus.kept_or_read``).
    """
    root = Path(root).resolve()
    paths = record_names(root)
    direct = _direct(root)
    if not (corpus.large(len(paths)) if cache is None else cache):
        return KnowledgeBase(root, [load_record(root, f"{folder}/{name}", folder in direct) for folder, name in paths])
    store = corpus.ParseCache(root, "records", value=STATE, dump=Loaded.state, load=Loaded.from_state)
    rels = [f"{folder}/{name}" for folder, name in paths]
    stamped = partial(_stamp, root, frozenset(direct))
    return KnowledgeBase(root, corpus.kept_or_read(store, rels, stamped, partial(_parse_chunk, root, frozenset(direct))))


def ahead(root: Path, paths: list[tuple[str, str]] | None = None) -> None:
    """Start parsing every record under the resolved ``root`` (``corpus.ahead``) if the records' cache keeps none:
    ``load`` takes the parses. ``paths``: ``record_names(root)``, where the caller has them."""
    paths = record_names(root) if paths is None else paths
    if corpus.large(len(paths)) and not corpus.kept(root, "records"):
        corpus.ahead(partial(_parse_chunk, root, frozenset(_direct(root))), [f"{f}/{n}" for f, n in paths])


def _direct(root: Path) -> set[str]:
    """The record folders known to be no link and to lie inside the resolved ``root``: a file's stamp stands for
    its content only where no link lies between the root and the file."""
    return {folder for folder in MODELS if (root / folder).resolve() == root / folder}


def _stamp(root: Path, direct: frozenset[str], rel: str) -> Stamp | None:
    """The stamp of the record file at ``rel`` where it stands for its content (``_direct``), else None."""
    return stamp(f"{root}/{rel}") if rel.split("/", 1)[0] in direct else None


def _parse_chunk(root: Path, direct: frozenset[str], rels: Sequence[str]) -> list[tuple[Stamp | None, Loaded]]:
    """Each record file parsed (``load_record``, which stamps it as it is read) and made as the cache keeps it
    (``Loaded.state``: its data, encoded; its record validated again when looked at)."""
    corpus.read_ahead(f"{root}/{rel}" for rel in rels if rel.split("/", 1)[0] in direct)  # a run's files asked for at once
    out = []
    for rel in rels:
        loaded = load_record(root, rel, rel.split("/", 1)[0] in direct)
        out.append((loaded.stamp, Loaded.from_state(loaded.state())))
    return out


def named_first(files: list[Loaded]) -> list[Loaded]:
    """The files in name order, those whose name is their id before the others: of two files with one id, the
    one named by it is the record (``SOTA-366 (copy).yaml``, sorting first, is the duplicate)."""
    return sorted(files, key=lambda f: f.path.rsplit("/", 1)[-1] != f"{f.id}.yaml")


def record_names(root: Path) -> list[tuple[str, str]]:
    """``(folder, name)`` of every record file under ``root``, folder by folder, in name order; a folder that a link
    takes outside the root is not listed (``linked_out``)."""
    return [(folder, name) for folder in MODELS if inside(root, folder) for name in _yaml_names(root / folder)]


#: The top-level folders of a knowledge base that Assay reads, and writes (results/).
FOLDERS = (*MODELS, "verify", "results")


def inside(root: Path, folder: str) -> bool:
    """Whether the top-level ``folder`` of ``root`` stays inside it: one that a link takes out is neither listed nor
    read, and ``linked_out`` reports it."""
    return link_out(root, Path(folder)) is None


def linked_out(root: Path) -> list[Diagnostic]:
    """An unreadable-file diagnostic for each of ``FOLDERS`` that a link takes outside ``root``: nothing in it is read."""
    return [
        Diagnostic(
            f"{folder}/",
            1,
            1,
            "unreadable-file",
            f"{why}; nothing in it is read",
            f"make {folder}/ a folder of the knowledge base: move its files in and remove the link",
        )
        for folder in FOLDERS
        if (why := link_out(root, Path(folder))) is not None
    ]


def _yaml_names(folder: Path) -> list[str]:
    """Names ending in .yaml in ``folder``, sorted (what ``sorted(folder.glob('*.yaml'))`` gives, faster)."""
    try:
        return sorted(
            n for n in os.listdir(folder) if n.endswith(".yaml") and not n.startswith(".")
        )  # a hidden file is no record
    except OSError:  # missing, or not a folder
        return []


def next_id(root: Path, prefix: str) -> str:
    """The next free id of a series: one past the highest number in use."""
    folder = root / SERIES[prefix].folder
    numbers = [int(m.group(1)) for p in folder.glob(f"{prefix}-*.yaml") if (m := re.fullmatch(rf"{prefix}-([0-9]+)", p.stem))]
    return f"{prefix}-{(max(numbers) + 1 if numbers else 1):03d}"


def is_knowledge_base(path: Path) -> bool:
    """Whether ``path`` is a folder holding claims/ or sources/."""
    return path.is_dir() and ((path / "claims").is_dir() or (path / "sources").is_dir())


def find_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that is a knowledge base, as git finds its repository."""
    start = start.resolve()
    return next((d for d in (start, *start.parents) if is_knowledge_base(d)), None)
