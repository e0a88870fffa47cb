"""Every diagnostic of a knowledge base, as ``assay check`` prints them.

The rules of the records (``assay.records.across``, with those within each file), of the metrics the verifiers
record (``assay.records.metric_rules``), of the local modules they load (``assay.ledger.inputs``) and of the verifier
stubs nobody filled (``assay.records.placeholders``),
and of the ledger's files (``assay.ledger.store``) and of their history (``assay.ledger.registration``), sorted by
file and line, at most ``PER_FILE`` of a file listed and the rest counted.
"""

from __future__ import annotations

import re
from pathlib import Path

from assay import corpus, prose
from assay.diagnostics import Diagnostic, capped
from assay.ledger import challenges, problems, registration, store
from assay.ledger.inputs import InputParts
from assay.records import across, knowledge_base, metric_rules, placeholders, verifiers
from assay.records.knowledge_base import KnowledgeBase, record_names
from assay.records.lookup import record_id


def ahead(root: Path) -> None:
    """Start reading all that ``run`` reads of a large knowledge base where no cache keeps it (a first run): its
    records, verifier modules and ledger, each a job of forked processes at a lower priority than the one before
    (``corpus.ahead``), so that while this process works on the records alone (the rules across them) the cores go
    on reading the rest."""
    root = Path(root).resolve()
    names = record_names(root)
    if corpus.large(len(names)):
        knowledge_base.ahead(root, names)
        verifiers.ahead(root)
        store.ahead(root)


def run(kb: KnowledgeBase) -> list[Diagnostic]:
    """All diagnostics of ``kb``, sorted and capped (``capped``)."""
    found = set(across.diagnostics(kb)) | set(metric_rules.diagnostics(kb)) | set(placeholders.in_verifiers(kb.root))
    big = corpus.large(len(kb.files))
    ledger = store.read_ledger(kb.root, cache=big)
    judged, seeded = _judgement_rules(kb, ledger)
    found |= set(problems.diagnostics(kb, ledger)) | set(registration.diagnostics(kb, ledger, seeded)) | judged
    found |= set(knowledge_base.linked_out(kb.root))
    modules = {c.verifier.split("::")[0] for f in kb.claim_files.values() for c in f.outline.checks}
    inputs = InputParts(kb.root, cache=big)
    found |= set(inputs.imported_problems(modules))
    inputs.save()  # the imports each module names, kept for the next run
    return capped(found, {f.path: f.unlisted for f in kb.files if f.unlisted})


#: What the judgement rules keep of a claim: its stamps, its diagnostics, whether its results read seeds.
JUDGED = tuple[str, tuple[Diagnostic, ...], bool]


def _judgement_rules(kb: KnowledgeBase, ledger: store.Ledger) -> tuple[set[Diagnostic], list[str]]:
    """The rules that read a claim's record beside its results (``assay.ledger.challenges``, ``assay.prose``) for
    every claim with results, and the claims whose results read seeds (``no-history`` needs them). A large knowledge
    base keeps each claim's between runs under the stamp of its file and of its ledger files: a warm check thaws no
    record and validates no result for them (they doubled a warm check at 10,000 claims)."""
    keys: dict[str, list] = {}
    for key in ledger.results:  # the keys only: no result is validated for this
        keys.setdefault(key[0], []).append(key)
    memo = corpus.ParseCache(kb.root, "judgement", also=("*",), value=JUDGED) if corpus.large(len(kb.files)) else None
    found: set[Diagnostic] = set()
    seeded: list[str] = []
    for cid in sorted(set(keys) & set(kb.claim_files)):
        f = kb.claim_files[cid]
        stamps = [ledger.stamps.get(k) for k in sorted(keys[cid])]
        known = memo is not None and f.stamp is not None and None not in stamps
        kept = memo.get(cid, f.stamp) if known else None
        if kept is None or kept[0] != repr(stamps):
            diags = (*challenges.of_claim(cid, f, ledger), *prose.of_claim(cid, f, ledger))
            reads_seeds = any(ledger.reads_seeds(k) for k in keys[cid])
            kept = (repr(stamps), diags, reads_seeds)
            if known:
                memo.put(cid, f.stamp, kept)
        found |= set(kept[1])
        seeded += [cid] if kept[2] else []
    if memo is not None:
        memo.save()
    return found, seeded


def touching(kb: KnowledgeBase, found: list[Diagnostic], claim_id: str) -> list[Diagnostic]:
    """The diagnostics of ``found`` that bear on one claim (``assay check --claim``): those in its record, its ledger
    folder or the verifier modules its checks name, and those elsewhere that name it (a relation or citation that
    points at it, a duplicate of its id)."""
    loaded = kb.by_id[record_id(kb, claim_id, kind="claim", option="--claim", valid=False)]
    claim = kb.claims.get(claim_id)
    files = {loaded.path}
    files |= {c.verifier.split("::")[0] for c in claim.checks} if claim is not None else set()
    named = re.compile(rf"(?<![\w-]){re.escape(claim_id)}(?![\w-])")
    return [
        d
        for d in found
        if d.path in files or d.path.startswith(f"results/{claim_id}/") or named.search(f"{d.message} {d.hint or ''}")
    ]
