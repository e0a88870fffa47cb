"""``assay rejudge``: the ledger's stored judgements brought up to the record, from the recorded measurements.

Words, thresholds, counterparts, regime and readings decide a result's judgement, not its measurement: every reader
already judges the recorded per-seed values against the record as it stands (``assay.ledger.judgement.rejudge``).
This writes that judgement into the ledger files whose stored one differs, marking each with when it was re-judged
(``Result.rejudged``); the measurement (``finished``, metrics, seeds, inputs) is kept as it was. A file whose
measurement is stale, or that lacks a metric the record now reads, needs a rerun instead and is named.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from assay.diagnostics import UsageProblem
from assay.ledger import store
from assay.ledger.inputs import InputParts
from assay.ledger.judgement import VerifierError, rejudge
from assay.ledger.result import timestamp
from assay.power import measured
from assay.records.knowledge_base import load


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--claim", action="append", default=[], metavar="ID", help="only this claim (repeat for more)")


def rejudged(root: Path, claims: list[str] | None = None) -> tuple[list[str], list[str]]:
    """Rewrite each fresh result whose stored judgement differs from the record's; the files written, and the ones
    that need a rerun instead (with why)."""
    kb = load(root)
    unknown = [c for c in claims or [] if c not in kb.claims]
    if unknown:
        raise UsageProblem(f"--claim {unknown[0]}: no such claim; assay status lists them")
    ledger, inputs = store.read_ledger(root), InputParts(root)
    now = timestamp()
    written, rerun = [], []
    for claim, check, device, result in measured(kb, ledger, claims):
        label = f"{claim.id}/{check.id}.{device}"
        stale = inputs.stale(result.inputs.parts, inputs.parts(claim, check, device))
        if stale:
            rerun.append(f"{label}: its measurement is stale ({'; '.join(stale)}); rerun it")
            continue
        try:
            judged = rejudge(claim, check, result)
        except VerifierError as e:
            rerun.append(f"{label}: {e}; rerun it")
            continue
        if judged is not result:
            with store.locked(root, claim.id):
                store.write_result(root, judged.model_copy(update={"rejudged": now}))
            written.append(f"{label}: {result.verdict} -> {judged.verdict} (measured {result.finished})")
    return written, rerun


def cmd_rejudge(args: argparse.Namespace) -> int:
    """Judge the ledger's measurements again against the records as they stand, without running anything.

    A change to the words, expectations, counterparts, regime or readings of a check needs no rerun: this writes
    each fresh result's new judgement (its expectation as evaluated and its verdict) beside the measurement it came
    from, in under a second per claim. Registration still sees every move of an expectation after its result.

    example: assay rejudge --claim SOTA-364
    """
    written, rerun = rejudged(args.root, args.claim)
    for line in written:
        print(f"re-judged {line}")
    for line in rerun:
        print(f"not re-judged: {line}")
    print(f"{len(written)} result(s) re-judged; {len(rerun)} need a rerun (pytest verify --stale)")
    return 0
