"""What a result depends on, and whether it still does: freshness that every machine agrees on.

A result's inputs are all **in the repository**: the check's definition, the claim sentences it tests,
the verifier module with the local modules it imports (absolute, relative and ``importlib`` imports,
package ``__init__`` files, the ``conftest.py`` chain), the data files the check declares it reads,
the pins of the committed lock file, and the device kind. Each part is a short hash or a version;
the result is stale when a part differs. What the machine had (its torch build, CPU, GPU) is the
result's environment (``assay.ledger.environment``): shown, compared with the lock ("off-lock"), never a
reason for staleness.

``Inputs(root)`` reads each file once, so the parts of every check of a large knowledge base cost
one pass over the files they name.
"""

from __future__ import annotations

import json

from assay.fingerprints import digest
from assay.model import Check, Claim


def record_parts(claim: Claim, check: Check) -> list[tuple[str, str]]:
    """The inputs of ``check`` that its record holds: its definition, and the words it tests (the filed words of
    the assertions it bears on, with its stance; the statement, for a claim not cut into assertions).

    The definition leaves out the check's note, the wording of its known-failing reason and the prose that
    describes its metrics: they change what a reader is told, not what runs or how it is read."""
    definition = check.model_dump(
        mode="json",
        exclude={
            "note": True,
            "known_failing": True,
            "expect": {"__all__": {"control"}},
            "metrics": {"__all__": {"measures", "quantity"}},
        },
    )
    definition["known_failing"] = check.known_failing is not None  # marking a control changes what is read, not run
    parts = [(f"check:{claim.id}#{check.id}", digest(json.dumps(definition, sort_keys=True).encode()))]
    testing = claim.assertions_testing(check.id)
    if testing:
        words = [(a.id, a.filed, [e.stance for e in a.evidence if e.check == check.id]) for a in testing]
        parts.append((f"words:{claim.id}#{check.id}", digest(json.dumps(words, sort_keys=True).encode())))
    else:
        parts.append((f"statement:{claim.id}", digest(claim.statement.encode())))
    return parts


def claim_record_parts(claim: Claim) -> dict[str, list[tuple[str, str]]]:
    """``record_parts`` of every check of ``claim``, by check id: what the parse cache keeps with the claim."""
    return {check.id: record_parts(claim, check) for check in claim.checks}
