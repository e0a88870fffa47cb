"""The input parts a claim's record holds for each check's **measurement**: what the verifier runs with, hashed.

A result has two inputs. Its measurement depends on the verifier and what it imports and reads, the seeds, the lock,
the device, and the check's metric declarations: only a rerun mends a change there. Its judgement depends on the
words, the expectations, counterparts, regime, `source_value` and readings: every reader judges the recorded
per-seed measurements again against the record as it stands (``assay.ledger.judgement.rejudge``), so a change there
needs no rerun and never makes a result stale. Registration (``assay.ledger.registration``) still sees every move of
an expectation after its result.

Made when a command needs a check's freshness (``assay.ledger.inputs``) from the record it has read; a large
knowledge base's statuses are kept between runs under the stamp of each claim's file (``assay.overview.briefs``),
so its records are hashed again only where a file changed.
"""

from __future__ import annotations

import json

from assay.experiment import Check
from assay.fingerprints import digest
from assay.model import Claim


def record_parts(claim: Claim, check: Check) -> list[tuple[str, str]]:
    """The measurement inputs of ``check`` that its record holds: its verifier, the files it reads, its seeds and its
    metrics' names and units (the verifier records them). Nothing that only weighs a result: the sentences, the
    expectations, the known-failing mark, the tier, the role, the apparatus it uses, notes and prose."""
    definition = {
        "verifier": check.verifier,
        "reads": list(check.reads),
        "metrics": [[m.name, m.unit] for m in check.metrics],
    }
    if check.seeds is not None:
        definition["seeds"] = check.seeds.model_dump(mode="json")
    if check.experiment is not None:  # the training run it reads, shared with the checks of the same experiment
        definition["experiment"] = check.experiment
    return [(f"check:{claim.id}#{check.id}", digest(json.dumps(definition, sort_keys=True).encode()))]
