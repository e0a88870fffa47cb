"""The computed state of every claim of a knowledge base, for the commands that list or walk them all.

``claim_states`` computes each claim's checks, assertions and closure by the rules of ``assay.status``;
``States`` makes them one at a time as a walk reaches them; ``briefs`` keeps each claim's status between
runs of a large knowledge base, under what it was computed from.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
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
from assay.status import CheckState, ClaimState, ClaimVerdict, Closure, check_states


def claim_states(kb: KnowledgeBase, ledger: Ledger | None = None) -> dict[str, ClaimState]:
    """Status and closure of every valid claim, from the ledger (read from disk when not given) and the expectations'
    registration in the repository's history."""
    ledger = read_ledger(kb.root) if ledger is None else ledger
    inputs = InputParts(kb.root, cache=corpus.large(len(kb.files)))
    states = States(kb, ledger, inputs, Registry(kb.root))
    out = dict(states.items())
    inputs.save()
    return out


@dataclass(frozen=True)
class Brief:
    """What ``assay status`` says of a claim: its status and closure, its assertions counted per device, and
    why each stale result is stale."""

    status: str  # a key of assay.status.CLAIM
    closure: str  # a key of assay.status.CLOSURE
    counts: str
    stale: tuple[tuple[str, str, tuple[str, ...]], ...]  # (check, device, reasons)


#: What ``States`` knows of a claim once its status is made: its status, counts and stale results.
MADE = tuple[str, str, tuple[tuple[str, str, tuple[str, ...]], ...]]


class States(Mapping[str, ClaimState]):
    """Every valid claim's state as ``claim_states`` gives it, made when looked at and not kept, so that a walk
    over 50,000 claims can hold one claim's record and results at a time (``using``). Made from what the caller
    has read (``read`` reads it all): the ledger, the claims' input parts and the expectations' registration.

    Of each claim it keeps what ``assay status`` says (``MADE``, a few short strings), from its state when that was
    made, else made as far as its verdict when a closure needs it, or found kept between runs (``memo``: ``Memo``).
    A claim's closure needs only the statuses of what it rests on, and only where it is verified itself (``Closure``),
    so a walk in id order makes each claim's state once, whatever order the depends_on links run in but where a
    verified claim rests on one further on whose status no run before kept."""

    def __init__(self, kb: KnowledgeBase, ledger: Ledger, inputs: InputParts, registry: Registry, memo: Memo | None = None):
        self.kb, self.ledger, self.inputs, self.registry, self.memo = kb, ledger, inputs, registry, memo
        self.made: dict[str, MADE] = {}
        self.closed = Closure(kb, lambda cid: self.status(cid) == "verified")

    @classmethod
    def read(cls, kb: KnowledgeBase, cache: bool | None = None) -> States:
        """The states of ``kb``'s claims from its ledger and history as they stand, their statuses kept between runs
        where the knowledge base is ``corpus.large`` (or ``cache``)."""
        cache = corpus.large(len(kb.files)) if cache is None else cache
        ledger, registry = read_ledger(kb.root, cache=cache), Registry(kb.root)
        inputs = InputParts(kb.root, cache=cache)
        return cls(kb, ledger, inputs, registry, Memo(kb.root, inputs, ledger, registry) if cache else None)

    def verdict(self, cid: str) -> tuple[Claim, list[CheckState], ClaimVerdict]:
        """A claim's record, its checks' states and its verdict: all of its state but the closure."""
        claim = self.kb.claim_files[cid].record
        states = check_states(self.inputs, claim, self.ledger, registry=self.registry)
        verdict = status.claim_verdict(claim, states)
        made = (verdict.status, verdict.counts, tuple((c.check, c.device, tuple(c.stale)) for c in states if c.stale))
        if self.memo is not None and cid not in self.made:
            self.memo.keep(cid, self.kb.claim_files[cid], made)
        self.made[cid] = made
        return claim, states, verdict

    def status(self, cid: str) -> str:
        """A claim's status: as made, as kept between runs, or made now (its record and results let go after)."""
        if cid not in self.made:
            kept = self.memo.kept(cid, self.kb.claim_files[cid]) if self.memo is not None else None
            if kept is not None:
                self.made[cid] = kept
            else:
                with self.using(cid):
                    self.verdict(cid)
        return self.made[cid][0]

    def briefs(self) -> dict[str, Brief]:
        """Every claim's ``Brief``, from what is known of it and made of the rest (its counts and stale results: ``MADE``)."""
        return {cid: Brief(self.status(cid), "closed" if self.closed(cid) else "open", *self.made[cid][1:]) for cid in self}

    def __getitem__(self, cid: str) -> ClaimState:
        _, states, verdict = self.verdict(cid)
        return ClaimState.of(cid, states, verdict, "closed" if self.closed(cid) else "open")

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.kb.claim_files))

    def __len__(self) -> int:
        return len(self.kb.claim_files)

    @contextmanager
    def using(self, cid: str) -> Iterator[None]:
        """Lend the claim's record and results to the ``with`` block, and let them go after (``corpus.Lazy.using``)."""
        keys = [(cid, check.id, device) for check in self.kb.claim_files[cid].outline.checks for device in check.devices]
        with self.kb.claims.using(cid), self.ledger.results.using(*keys):
            yield

    def save(self) -> None:
        """Keep for the next run what this one found out (the input parts, and, after a walk over every claim, the
        statuses)."""
        self.inputs.save()
        if self.memo is not None:
            self.memo.store.save()


class Memo:
    """Each claim's ``MADE`` kept between runs of a large knowledge base (``assay.corpus``) under what it was
    computed from: the stamp of the claim's file, the stamps of its ledger files, the hashes of its checks' other
    inputs (verifier code, data, pins) and the lock's pins; every module of Assay keys the cache too, and so does
    the last commit that changed a claim's files (its expectations' registration reads them). A claim whose inputs
    all stand as they were is not thawed, nor are its results read."""

    def __init__(self, root: Path, inputs: InputParts, ledger: Ledger, registry: Registry):
        self.inputs, self.ledger, self.registry = inputs, ledger, registry
        self.store = corpus.ParseCache(root, "status", also=("*",), value=tuple[str, MADE])
        self.pins = repr(sorted(inputs.pins.items())).encode()  # every pin: a result's off-lock note reads them all
        self.code: dict[str, bytes] = {}  # the verifier modules' code parts as bytes, made once per module
        self.keys: dict[str, str | None] = {}  # the key of each claim ``kept`` found nothing under

    def kept(self, cid: str, f: Loaded) -> MADE | None:
        key = self._key(cid, f)
        kept = self.store.get(cid, f.stamp) if key is not None else None
        if kept is not None and kept[0] == key:
            return kept[1]
        self.keys[cid] = key  # for ``keep``, which follows a miss (a hit is never kept again)
        return None

    def keep(self, cid: str, f: Loaded, made: MADE) -> None:
        key = self.keys.pop(cid) if cid in self.keys else self._key(cid, f)
        if key is not None and self.store.get(cid, f.stamp) != (key, made):
            self.store.put(cid, f.stamp, (key, made))

    def _key(self, cid: str, f: Loaded) -> str | None:
        """A hash of what a claim's status is computed from besides its file (whose stamp keys the memo, and stands
        for the input parts its record holds), or None when something cannot be known unchanged (a ledger file whose
        stamp the cache does not keep)."""
        if f.stamp is None or f.outline is None:
            return None
        h = hashlib.sha256(self.pins + self.registry.last_change(cid).encode())
        for check in f.outline.checks:
            module = check.verifier.split("::")[0]
            if module not in self.code:
                self.code[module] = repr(sorted(self.inputs.code_parts(module).items())).encode()
            data = [self.inputs.data_digest(name) for name in check.reads]
            for device in check.devices:
                key = (cid, check.id, device)
                if key in self.ledger.stamps and self.ledger.stamps[key] is None:
                    return None
                h.update(repr((check.id, device, self.ledger.stamps.get(key), data)).encode())
                h.update(self.code[module])
        return h.hexdigest()


def briefs(kb: KnowledgeBase, cache: bool | None = None) -> dict[str, Brief]:
    """The ``Brief`` of every valid claim: ``claim_states`` in short, for a listing of them all, each status kept
    between runs where the knowledge base is large (``States.read``, ``Memo``)."""
    states = States.read(kb, cache)
    out = states.briefs()
    states.save()
    return out


def listing(kb: KnowledgeBase) -> tuple[dict[str, Brief], list[Diagnostic]]:
    """What ``assay status`` lists: every claim's ``Brief``, and the registration diagnostics (an expectation moved
    after its result votes for nothing), from one reading of the ledger and of the history."""
    states = States.read(kb)
    out = states.briefs()
    states.save()
    return out, list(registration.diagnostics(kb, states.ledger, registry=states.registry))


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
        for line in verified_lines(kb(), ledger_root, written):
            tr.write_line(line)


def verified_lines(kb: KnowledgeBase, ledger_root: Path, written: dict[str, list[str]]) -> list[str]:
    """``pytest verify``'s summary: each claim a run wrote results for, with its status and those results. With
    a ledger of its own (``--ledger-root``), the run's results are laid over the repository's, as a merge would."""
    ledger = None
    if ledger_root != kb.root:
        ledger = read_ledger(kb.root)
        ledger.results.update(read_ledger(ledger_root).results)
    states = claim_states(kb, ledger)
    lines = []
    for cid in sorted(written):
        status = states[cid].status if cid in states else "invalid"
        lines.append(f"{cid:<12} {status:<16} " + ", ".join(sorted(written[cid])))
    lines.append(f"ledger: {ledger_root / 'results'}")
    return lines
