"""The computed state of every claim of a knowledge base, for the commands that list or walk them all.

``claim_states`` computes each claim's checks, assertions and closure by the rules of ``assay.status``;
``States`` makes them one at a time as a walk reaches them; ``briefs`` keeps each claim's status between
runs of a large knowledge base, under what it was computed from.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay import corpus, status
from assay.diagnostics import Diagnostic
from assay.ledger import registration
from assay.ledger.inputs import InputParts
from assay.ledger.registration import Registry
from assay.ledger.store import Ledger, read_ledger
from assay.model import Claim
from assay.records.document import Loaded
from assay.records.knowledge_base import KnowledgeBase
from assay.status import CheckState, ClaimState, ClaimVerdict, check_states, closure


def claim_states(kb: KnowledgeBase, ledger: Ledger | None = None, registry: Registry | None = None) -> dict[str, ClaimState]:
    """Status and closure of every valid claim, from the ledger (read from disk when not given) and the
    expectations' registration (``registry``: from the repository's history when not given)."""
    ledger = read_ledger(kb.root) if ledger is None else ledger
    inputs = InputParts(kb.root, cache=corpus.large(len(kb.files)))
    states = States(kb, {}, ledger, inputs, Registry(kb.root) if registry is None else registry)
    summary = {cid: states.verdict(cid)[1:] for cid in sorted(kb.claims)}
    inputs.save()
    closed = closure(kb, {cid: verdict.status == "verified" for cid, (_, verdict) in summary.items()})
    return {
        cid: ClaimState.of(cid, checks, verdict, "closed" if closed[cid] else "open")
        for cid, (checks, verdict) in summary.items()
    }


class States(Mapping[str, ClaimState]):
    """Every valid claim's state as ``claim_states`` gives it, made when looked at and not kept, so that a walk
    over 50,000 claims can hold one claim's record and results at a time (``using``). Made from what the caller
    has read (``read`` reads it all): the ledger, the claims' input parts, the expectations' registration, and
    each claim's closure, which needs every claim's status (``briefs``, or anything with a ``closure`` per claim)."""

    def __init__(self, kb: KnowledgeBase, closures: Mapping[str, Any], ledger: Ledger, inputs: InputParts, registry: Registry):
        self.kb, self.briefs, self.ledger, self.inputs, self.registry = kb, closures, ledger, inputs, registry

    @classmethod
    def read(cls, kb: KnowledgeBase) -> States:
        """The states of ``kb``'s claims from its ledger and history as they stand, each closure from ``briefs``."""
        cache = corpus.large(len(kb.files))
        ledger, registry = read_ledger(kb.root, cache=cache), Registry(kb.root)
        return cls(kb, briefs(kb, cache, ledger, registry), ledger, InputParts(kb.root, cache=cache), registry)

    def verdict(self, cid: str) -> tuple[Claim, list[CheckState], ClaimVerdict]:
        """A claim's record, its checks' states and its verdict: all of its state but the closure."""
        claim = self.kb.claim_files[cid].record
        states = check_states(self.inputs, claim, self.ledger, registry=self.registry)
        return claim, states, status.claim_verdict(claim, states)

    def __getitem__(self, cid: str) -> ClaimState:
        _, states, verdict = self.verdict(cid)
        return ClaimState.of(cid, states, verdict, self.briefs[cid].closure)

    def __iter__(self) -> Iterator[str]:
        return iter(self.briefs)

    def __len__(self) -> int:
        return len(self.briefs)

    def using(self, cid: str) -> AbstractContextManager[None]:
        """Lend the claim's record and results to the ``with`` block, and let them go after (``corpus.Lazy.using``)."""
        keys = [(cid, check.id, device) for check in self.kb.claim_files[cid].outline.checks for device in check.devices]
        stack = ExitStack()
        stack.enter_context(self.kb.claims.using(cid))
        stack.enter_context(self.ledger.results.using(*keys))
        return stack


@dataclass(frozen=True)
class Brief:
    """What ``assay status`` says of a claim: its status and closure, its assertions counted per device, and
    why each stale result is stale."""

    status: str  # a key of assay.status.CLAIM
    closure: str  # a key of assay.status.CLOSURE
    counts: str
    stale: tuple[tuple[str, str, tuple[str, ...]], ...]  # (check, device, reasons)


#: What ``briefs`` keeps of a claim: the key of its inputs, and its status, counts and stale results.
MADE = tuple[str, tuple[str, str, tuple[tuple[str, str, tuple[str, ...]], ...]]]


def briefs(
    kb: KnowledgeBase, cache: bool | None = None, ledger: Ledger | None = None, registry: Registry | None = None
) -> dict[str, Brief]:
    """The ``Brief`` of every valid claim: ``claim_states`` in short, for a listing of them all.

    A large knowledge base keeps each claim's status between runs (``assay.corpus``) under what it was
    computed from: the stamp of the claim's file, the stamps of its ledger files, the hashes of its checks'
    other inputs (verifier code, data, pins) and the lock's pins; every module of Assay keys the cache
    too. A claim whose inputs all stand as they were is not thawed, nor are its results read; any other
    is computed as ``claim_states`` computes it. ``cache``: by default where the files are ``corpus.large``;
    ``ledger``: as ``read_ledger`` reads it with ``cache``, if the caller has it; ``registry``: likewise. The
    last commit that changed a claim's files keys its status too (its expectations' registration reads them).
    """
    if not (corpus.large(len(kb.files)) if cache is None else cache):
        return {
            cid: Brief(st.status, st.closure, st.counts, tuple((c.check, c.device, tuple(c.stale)) for c in st.stale))
            for cid, st in claim_states(kb, ledger, registry).items()
        }
    ledger = read_ledger(kb.root, cache=True) if ledger is None else ledger
    registry = Registry(kb.root) if registry is None else registry
    inputs = InputParts(kb.root, cache=True)
    memo = corpus.ParseCache(kb.root, "status", also=("*",), value=MADE)
    pins = repr(sorted(inputs.pins.items())).encode()  # every pin: a result's off-lock note reads them all
    made: dict[str, tuple[str, str, tuple]] = {}  # cid -> (status, counts, stale)
    code: dict[str, bytes] = {}
    walk = States(kb, {}, ledger, inputs, registry)
    for cid, f in sorted(kb.claim_files.items()):
        key = _memo_key(cid, f, ledger, inputs, pins + registry.last_change(cid).encode(), code)
        kept = memo.get(cid, f.stamp) if key is not None else None
        if kept is not None and kept[0] == key:
            made[cid] = kept[1]
            continue
        with walk.using(cid):
            _, states, verdict = walk.verdict(cid)
        made[cid] = (verdict.status, verdict.counts, tuple((c.check, c.device, tuple(c.stale)) for c in states if c.stale))
        if key is not None:
            memo.put(cid, f.stamp, (key, made[cid]))
    inputs.save()
    memo.save()
    closed = closure(kb, {cid: status == "verified" for cid, (status, _, _) in made.items()})
    return {
        cid: Brief(status, "closed" if closed[cid] else "open", counts, stale) for cid, (status, counts, stale) in made.items()
    }


def listing(kb: KnowledgeBase) -> tuple[dict[str, Brief], list[Diagnostic]]:
    """What ``assay status`` lists: every claim's ``Brief``, and the registration diagnostics (an expectation moved
    after its result votes for nothing), from one reading of the ledger and of the history."""
    cache = corpus.large(len(kb.files))
    ledger, registry = read_ledger(kb.root, cache=cache), Registry(kb.root)
    return briefs(kb, cache, ledger, registry), list(registration.diagnostics(kb, ledger, registry=registry))


def _memo_key(cid: str, f: Loaded, ledger: Ledger, inputs: InputParts, pins: bytes, code: dict[str, bytes]) -> str | None:
    """A hash of what a claim's status is computed from besides its file (whose stamp keys the memo, and stands
    for the input parts its record holds), or None when something cannot be known unchanged (a ledger file whose
    stamp the cache does not keep).

    ``code``: the verifier modules' code parts as bytes, made once per module and kept here between claims."""
    if f.stamp is None or f.outline is None:
        return None
    h = hashlib.sha256(pins)
    for check in f.outline.checks:
        module = check.verifier.split("::")[0]
        if module not in code:
            code[module] = repr(sorted(inputs.code_parts(module).items())).encode()
        data = [inputs.data_digest(name) for name in check.reads]
        for device in check.devices:
            key = (cid, check.id, device)
            if key in ledger.stamps and ledger.stamps[key] is None:
                return None
            h.update(repr((check.id, device, ledger.stamps.get(key), data)).encode())
            h.update(code[module])
    return h.hexdigest()


def run_summary(
    tr: Any,
    compared: list[str],
    problems: list[str],
    written: dict[str, list[str]],
    kb: Callable[[], KnowledgeBase],
    ledger_root: Path,
) -> None:
    """The end of ``pytest verify``'s terminal report: the inconclusive checks and why, the reruns compared, the
    ledger's write problems, and each claim the run wrote results for (the knowledge base is loaded only then)."""
    undecided = getattr(tr, "stats", {}).get("inconclusive", [])
    if undecided:
        tr.section("assay: inconclusive checks (an open question: the run does not fail for it)")
        for report in undecided:
            why = next((text for title, text in report.sections if title == "assay: inconclusive"), "")
            tr.write_line(f"{report.nodeid}: {why}")
    if compared:
        tr.section("assay: reruns compared with the ledger (not written)")
        for line in compared:
            tr.write_line(line)
    for problem in problems:
        tr.write_line(f"assay: error: {problem}", red=True)
    if written:
        tr.section("assay: claims verified in this run")
        for line in verified_lines(kb(), kb().root, ledger_root, written):
            tr.write_line(line)


def verified_lines(kb: KnowledgeBase, root: Path, ledger_root: Path, written: dict[str, list[str]]) -> list[str]:
    """``pytest verify``'s summary: each claim a run wrote results for, with its status and those results. With
    a ledger of its own (``--ledger-root``), the run's results are laid over the repository's, as a merge would."""
    ledger = None
    if ledger_root != root:
        ledger = read_ledger(root)
        ledger.results.update(read_ledger(ledger_root).results)
    states = claim_states(kb, ledger)
    lines = []
    for cid in sorted(written):
        status = states[cid].status if cid in states else "invalid"
        lines.append(f"{cid:<12} {status:<16} " + ", ".join(sorted(written[cid])))
    lines.append(f"ledger: {ledger_root / 'results'}")
    return lines
