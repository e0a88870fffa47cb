"""Merging result folders from other machines, shards or checkouts into ``results/``, by rules.

For one check on one device: a result whose inputs match the repository beats one that does not;
between two that both match (or both do not) the later finished wins; an error never replaces a
completed measurement, it is kept beside it as ``last_error`` when it is the later. Two fresh
measurements with different verdicts are a conflict, printed with both; two measurements of the same
inputs with different verdicts mark the result kept unstable, as a rerun does. Each file is written
atomically (figures first); merging the same folder twice changes nothing the second time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from assay import results
from assay.diagnostics import Diagnostic
from assay.inputs import Inputs, input_hash
from assay.loader import KnowledgeBase
from assay.results import Result


@dataclass
class MergeReport:
    """What a merge did, per result, in words; and the files it could not read."""

    added: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)


def pick(ours: Result | None, theirs: Result, current: str | None) -> tuple[Result | None, str]:
    """What the ledger holds after ``theirs`` is merged where ``ours`` is; None to keep ``ours`` unchanged.

    ``current`` is the hash of the check's inputs in this repository (None when it has no such check).
    Returns the result to write and the rule that decided, in words. Two measurements of the same inputs
    with different verdicts mark the result kept unstable, as a rerun on one machine does
    (``results.supersede``); the mark stays while the inputs do.
    """
    chosen, why = _pick(ours, theirs, current)
    if ours is None or not ours.measured or not theirs.measured or ours.inputs.hash != theirs.inputs.hash:
        return chosen, why
    earlier, later = (ours, theirs) if ours.finished <= theirs.finished else (theirs, ours)
    mark = results.moved(earlier, later)
    unstable = mark or later.unstable or earlier.unstable
    kept = ours if chosen is None else chosen
    if kept.unstable == unstable:
        return chosen, why
    return kept.model_copy(update={"unstable": unstable}), why + ("; the verdict moved with the same inputs" if mark else "")


def _pick(ours: Result | None, theirs: Result, current: str | None) -> tuple[Result | None, str]:
    if ours is None:
        return theirs, "new"
    if ours == theirs:
        return None, "the same result"
    if not theirs.measured:
        later = theirs.finished > (ours.last_error.finished if ours.last_error else ours.finished)
        if ours.measured:
            if later:
                return ours.model_copy(update={"last_error": theirs.last_error}), "their later error kept beside our measurement"
            return None, "their error is older than our result"
        return (theirs, "their error is later") if later else (None, "our error is later")
    if not ours.measured:
        return _with_error(theirs, ours), "their measurement replaces our error"
    ours_fresh, theirs_fresh = ours.inputs.hash == current, theirs.inputs.hash == current
    if ours_fresh != theirs_fresh:
        return (_with_error(theirs, ours), "theirs matches the repository's inputs") if theirs_fresh \
            else (None, "ours matches the repository's inputs")
    if theirs.finished > ours.finished:
        return _with_error(theirs, ours), "theirs finished later"
    return None, "ours finished later"


def _with_error(new: Result, old: Result) -> Result:
    """``new``, keeping ``old``'s last error when that error came after ``new`` finished."""
    if old.last_error is not None and new.last_error is None and old.last_error.finished > new.finished:
        return new.model_copy(update={"last_error": old.last_error})
    return new


def incoming_root(folder: Path) -> Path | None:
    """The folder whose ``results/`` holds what to merge: ``folder`` itself, or its parent when it is a results folder."""
    folder = Path(folder)
    if (folder / "results").is_dir():
        return folder
    if folder.name == "results" and folder.is_dir():
        return folder.parent
    return None


def merge(kb: KnowledgeBase, folders: list[Path]) -> MergeReport:
    """Merge the results under each of ``folders`` into ``kb``'s ledger, in order."""
    report = MergeReport()
    inputs = Inputs(kb.root)
    for folder in folders:
        source = incoming_root(folder)
        if source is None:
            report.skipped.append(f"{folder}: no results/ folder here")
            continue
        incoming = results.read_ledger(source)
        report.problems += incoming.diagnostics
        for key, theirs in sorted(incoming.results.items()):
            _merge_one(kb, inputs, source, key, theirs, report)
    return report


def _merge_one(kb: KnowledgeBase, inputs: Inputs, source: Path, key: results.Key, theirs: Result,
               report: MergeReport) -> None:
    label = "/".join(key)
    claim = kb.claims.get(key[0])
    check = claim.check(key[1]) if claim else None
    if claim is None or check is None or key[2] not in check.devices:
        report.skipped.append(f"{label}: not a check and device of this knowledge base")
        return
    path = results.ledger_path(kb.root, *key)
    try:
        ours = results.read_result(kb.root, path) if path.exists() else None
    except results.LedgerProblem:
        ours = None  # an unreadable file of ours is replaced
    current = input_hash(inputs.parts(claim, check, key[2]))
    chosen, why = pick(ours, theirs, current)
    if ours is not None and ours.measured and theirs.measured and ours.inputs.hash == theirs.inputs.hash == current \
            and ours.verdict != theirs.verdict:
        report.conflicts.append(f"{label}: ours {ours.verdict} ({ours.finished}), theirs {theirs.verdict} "
                                f"({theirs.finished}) with the same inputs; {why}")
    if chosen is None:
        report.kept.append(f"{label}: {why}")
        return
    svgs = {}
    for fig in chosen.figures:
        data = results.figure_bytes(source, theirs, fig) if chosen.figures == theirs.figures else None
        if data is not None:
            svgs[fig.file] = data.decode("utf-8")
    results.write_result(kb.root, chosen, svgs)
    (report.added if ours is None else report.replaced).append(f"{label}: {why}")
