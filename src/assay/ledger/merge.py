"""Which of two results of one check and device stands: the supersede rules, and ``assay merge``.

A result whose inputs match this repository beats one that does not, then the later finished wins, and an error
never replaces a completed measurement (it is kept beside it). Two measurements of the same inputs with
different verdicts mark the kept result unstable. ``assay merge DIR...`` brings other machines' folders in by
these rules.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from assay.diagnostics import Diagnostic, UsageProblem
from assay.experiment import Check
from assay.fingerprints import input_hash
from assay.ledger import store, vetting
from assay.ledger.inputs import InputParts
from assay.ledger.layout import RESULTS
from assay.ledger.result import Environment, Figure, Inputs, Key, Result, Unstable
from assay.ledger.store import LedgerProblem
from assay.model import Claim
from assay.records.knowledge_base import KnowledgeBase


def comparable(inputs: InputParts, result: Result) -> Result:
    """``result`` with its input parts as they compare with today's (``InputParts.upgrade``: a part recorded from a
    module's bytes that the module still has) and their hash: how a result read from a ledger is compared with another
    by the rules here, which compare input hashes."""
    parts = inputs.upgrade(result.inputs.parts)
    if parts is result.inputs.parts:
        return result
    return result.model_copy(update={"inputs": Inputs(hash=input_hash(parts), parts=parts)})


def supersede(old: Result | None, new: Result) -> Result:
    """What the ledger holds after ``new`` ran where ``old`` was.

    An error never replaces a completed measurement: it is kept beside it as ``last_error``. A
    verdict that changed while the inputs did not marks the result unstable, and stays marked
    until the inputs change.
    """
    if new.verdict == "error":
        if old is not None and old.measured:
            return old.model_copy(update={"last_error": new.last_error})
        return new
    unstable = old.unstable if old is not None and old.inputs.hash == new.inputs.hash else None
    return new.model_copy(update={"unstable": moved(old, new) or unstable})


def moved(old: Result | None, new: Result) -> Unstable | None:
    """The unstable mark for ``new`` run after ``old`` with the same inputs and another verdict; None otherwise."""
    if old is None or not old.measured or not new.measured or old.inputs.hash != new.inputs.hash:
        return None
    if other_seeds(old, new):  # another measurement, not a rerun
        return None
    if old.verdict == new.verdict or not _measured_apart(old, new):
        return None
    seen = old.unstable.verdicts if old.unstable else [old.verdict]
    return Unstable(verdicts=[*seen, new.verdict], since=old.unstable.since if old.unstable else new.finished)


def _measured_apart(old: Result, new: Result) -> bool:
    """Whether ``old``'s measurements, judged as ``new`` was (its comparisons and readings), come out otherwise than
    ``new``'s: a verdict that moved only because the record's expectations moved between the runs is no instability
    (registration sees that move), one that moved because the numbers did is."""
    apart = (e.metric not in old.metrics or e.outcome_on(old.metrics[e.metric]) != e.outcome for e in new.expectation)
    return not new.expectation or any(apart)


def other_seeds(a: Result, b: Result) -> bool:
    """Whether one of two results is a settling run that read other seeds than the other: then they are two
    measurements, and different verdicts are no instability. (A merge believes a settling block only once it is
    vetted: ``assay.ledger.vetting``.)"""
    settling = a.settling is not None or b.settling is not None
    return settling and not set(a.seeds_used or []) & set(b.seeds_used or [])


def largest_change(old: Result, new: Result) -> str:
    """The metric that moved most between two results, in words."""
    shared = sorted(set(old.metrics) & set(new.metrics))
    if not shared:
        return "no metric in common"
    name = max(shared, key=lambda m: (abs(new.metrics[m].value - old.metrics[m].value), m))
    delta = abs(new.metrics[name].value - old.metrics[name].value)
    same = sum(old.metrics[m].value == new.metrics[m].value for m in shared)
    return f"largest metric change |Δ| {delta:.3g} ({name}); {same} of {len(shared)} metrics identical"


#: What an environment says of the machine: every field but the run's own seed and commit.
_MACHINE = tuple(f for f in Environment.model_fields if f not in ("seed", "git_commit"))


def environment_change(old: Result, new: Result) -> str:
    """Which parts of the machine differ between two results, or that none does."""
    a, b = old.environment, new.environment
    differs = [
        f"{name} {getattr(a, name)!s} -> {getattr(b, name)!s}" for name in _MACHINE if getattr(a, name) != getattr(b, name)
    ]
    return "environment differs: " + ", ".join(differs) if differs else "same environment"


@dataclass
class MergeReport:
    """What a merge did, per result, in words; and the files it could not read."""

    added: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # results that could not be written, and why


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
    mark = moved(earlier, later)
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
        return (
            (_with_error(theirs, ours), "theirs matches the repository's inputs")
            if theirs_fresh
            else (None, "ours matches the repository's inputs")
        )
    if theirs.finished > ours.finished:
        return _with_error(theirs, ours), "theirs finished later"
    return None, "ours finished later"


def _with_error(new: Result, old: Result) -> Result:
    """``new``, keeping ``old``'s last error when that error came after ``new`` finished."""
    if old.last_error is not None and new.last_error is None and old.last_error.finished > new.finished:
        return new.model_copy(update={"last_error": old.last_error})
    return new


def merge(kb: KnowledgeBase, folders: list[Path]) -> MergeReport:
    """Merge the results under each of ``folders`` into ``kb``'s ledger, in order. Raises ``UsageProblem`` before
    anything is merged where one of them holds no ``results/`` (a file, a folder that is not there)."""
    sources = [_source(Path(folder)) for folder in folders]
    report = MergeReport()
    inputs = InputParts(kb.root)
    for source in sources:
        incoming = store.read_ledger(source)
        report.problems += [_named_theirs(d, source) for d in incoming.diagnostics]
        for key, theirs in sorted(incoming.results.items()):
            _merge_one(kb, inputs, source, key, theirs, report)
    return report


def _source(folder: Path) -> Path:
    """The folder whose ``results/`` holds what to merge: ``folder`` itself, or its parent when it is a results folder."""
    if (folder / RESULTS).is_dir():
        return folder
    if folder.name == RESULTS and folder.is_dir():
        return folder.parent
    what = "a file" if folder.is_file() else "a folder without results/ in it" if folder.is_dir() else "not there"
    raise UsageProblem(
        f"{folder} is {what}, so it holds no results to merge; give another checkout's folder or its results/ "
        "folder (assay merge ../gpu-box/results)"
    )


def _named_theirs(d: Diagnostic, source: Path) -> Diagnostic:
    """A diagnostic of the ledger read under ``source``, naming the incoming file there (path and message), not ours:
    the reader names a file by its path under the root it read, which is ours too."""
    shown = (source / d.path).as_posix()
    message = shown + d.message[len(d.path) :] if d.message.startswith(d.path) else d.message
    return dataclasses.replace(d, path=shown, message=message)


def _theirs_path(source: Path, key: Key) -> str:
    return store.ledger_path(source, *key).as_posix()


def _merge_one(kb: KnowledgeBase, inputs: InputParts, source: Path, key: Key, theirs: Result, report: MergeReport) -> None:
    label = "/".join(key)
    check = kb.check(key[0], key[1])
    if check is None or key[2] not in check.devices:
        report.skipped.append(f"{label}: not a check and device of this knowledge base ({_theirs_path(source, key)})")
        return
    try:
        with store.locked(kb.root, key[0]):  # what we replace is read under the lock we write under
            _merge_locked(kb, inputs, (kb.claims[key[0]], check), source, theirs, report)
    except OSError as e:  # nothing of it was counted: a conflict is counted only once the result is written
        report.failed.append(f"{label}: could not write results/{key[0]}/: {e.strerror or e}")


def _merge_locked(
    kb: KnowledgeBase, inputs: InputParts, tie: tuple[Claim, Check], source: Path, theirs: Result, report: MergeReport
) -> None:
    (claim, check), key = tie, theirs.key
    label = "/".join(key)
    path = store.ledger_path(kb.root, *key)
    try:
        ours = store.read_result(kb.root, path) if path.exists() else None
    except LedgerProblem:
        ours = None  # an unreadable file of ours is replaced
    refused = vetting.refusal(claim, check, theirs, ours)
    if refused is not None:  # nothing it says of itself is believed that its own measurements do not bear out
        shown = _theirs_path(source, key)
        report.problems.append(Diagnostic(shown, 1, 1, refused.code, f"{shown}: {refused.message}", refused.hint))
        return
    # each compared by its parts as they compare with today's (a part recorded from a module's bytes: ``upgrade``)
    ours, theirs = (comparable(inputs, ours) if ours is not None else None), comparable(inputs, theirs)
    current = input_hash(inputs.parts(claim, check, key[2]))
    chosen, why = pick(ours, theirs, current)
    conflict = (
        f"{label}: ours {ours.verdict} ({ours.finished}), theirs {theirs.verdict} ({theirs.finished}) with the same inputs; {why}"
        if ours is not None and _conflict(ours, theirs, current)
        else None
    )
    if chosen is not None:
        svgs, missing = _figures(kb.root, source, chosen, ours, theirs)
        if missing is not None:
            report.problems.append(_figure_refused(source, theirs, missing))
            return
        store.write_result(kb.root, chosen, svgs)  # raises OSError: then neither this result nor its conflict counts
        (report.added if ours is None else report.replaced).append(f"{label}: {why}")
    else:
        report.kept.append(f"{label}: {why}")
    if conflict is not None:
        report.conflicts.append(conflict)


def _conflict(ours: Result, theirs: Result, current: str) -> bool:
    """Two fresh measurements of the same inputs with different verdicts, on the same seeds (``other_seeds``)."""
    return (
        ours.measured
        and theirs.measured
        and ours.inputs.hash == theirs.inputs.hash == current
        and ours.verdict != theirs.verdict
        and not other_seeds(ours, theirs)
    )


def _figures(
    root: Path, source: Path, chosen: Result, ours: Result | None, theirs: Result
) -> tuple[dict[str, str], Figure | None]:
    """The SVG of each figure ``chosen`` names that it brings (ours did not name it, and it is not here already), read
    from ``source``; and the first figure it brings that cannot be read there (else None)."""
    have = set(ours.figures) if ours is not None else set()
    svgs = {}
    for fig in chosen.figures:
        if fig in have or store.figure_bytes(root, chosen, fig) is not None:
            continue
        data = store.figure_bytes(source, theirs, fig) if fig in theirs.figures else None
        if data is None:
            return svgs, fig
        svgs[fig.file] = data.decode("utf-8")
    return svgs, None


def _figure_refused(source: Path, theirs: Result, fig: Figure) -> Diagnostic:
    shown = store.ledger_path(source, *theirs.key).with_name(fig.file).as_posix()
    return Diagnostic(
        shown,
        1,
        1,
        "merge-figure",
        f"{_theirs_path(source, theirs.key)} names the figure {shown}, which is missing, not a regular file inside its "
        "folder, not the figure it names (its hash) or not a safe SVG; the result is not merged, ours is kept",
        "copy the result with its figures (its whole results/<claim>/ folder), or rerun the check there",
    )


def compare(old: Result | None, new: Result) -> tuple[str, Result | None]:
    """How a rerun (``new``) differs from the ledger's result (``old``), as one line, and the ledger's result
    flagged unstable where only the verdict moved with the same inputs (None: nothing to write)."""
    label = f"{new.claim}/{new.check}.{new.device}"
    if old is None:
        return f"{label}: no result in the ledger; now {new.status}", None
    line = f"{label}: {old.status} -> {new.status}; {largest_change(old, new)}; {environment_change(old, new)}"
    if old.inputs.hash != new.inputs.hash:
        line += "; inputs changed since the ledger's run"
    mark = moved(old, new)
    if mark is None:
        return line, None
    return line + "; verdict changed with the same inputs: flagged unstable", old.model_copy(update={"unstable": mark})
