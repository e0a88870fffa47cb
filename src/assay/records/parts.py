"""The input parts a claim's record holds for each check: its definition and the words it tests, hashed.

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
    """The inputs of ``check`` that its record holds: its definition, and the words it tests (the filed words of
    the assertions it bears on, with its stance; the statement, for a claim not cut into assertions).

    The definition leaves out the check's note, the wording of its known-failing reason and the prose that
    describes its metrics: they change what a reader is told, not what runs or how it is read. So do what only
    weighs a result (an expectation's control and identity marks, its source's size; the check's role and the
    apparatus it uses): the status reads them from the record. An expectation's counterparts (``against``) are
    evaluated in the run, so they are an input, where there are any."""
    definition = check.model_dump(
        mode="json",
        exclude={
            "note": True,
            "known_failing": True,
            "role": True,
            "uses": True,
            "expect": {"__all__": {"control", "identity", "source_value"}},
            "metrics": {"__all__": {"measures", "quantity"}},
        },
    )
    definition["known_failing"] = check.known_failing is not None  # marking a control changes what is read, not run
    for unset in ("seeds", "experiment"):  # likewise for checks whose seeds are not in the record, or share no run
        if definition.get(unset) is None:
            definition.pop(unset, None)
    for exp in definition["expect"]:
        if not exp["against"]:
            del exp["against"]  # so the definitions of checks with no counterparts hash as they did before there were any
    parts = [(f"check:{claim.id}#{check.id}", digest(json.dumps(definition, sort_keys=True).encode()))]
    if check.role == "apparatus":
        return parts  # it tests our machinery against a reference, not the claim's words
    testing = claim.assertions_testing(check.id)
    if testing:
        words = [(a.id, a.filed, [e.stance for e in a.evidence if e.check == check.id]) for a in testing]
        parts.append((f"words:{claim.id}#{check.id}", digest(json.dumps(words, sort_keys=True).encode())))
    else:
        parts.append((f"statement:{claim.id}", digest(claim.statement.encode())))
    return parts
