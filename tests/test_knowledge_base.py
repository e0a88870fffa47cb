"""Consistency tests that guard the repository's own knowledge base (style item 13).

The records, verifiers and ledger under the repository root must validate with zero errors; every
verifier names an existing claim and check, every check an existing verifier, and every source is cited.
Each failure lists every offender with its place, as `assay check` would.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import audit
from assay.diagnostics import errors
from assay.records.knowledge_base import KnowledgeBase, load
from assay.records.verifiers import scan

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return load(ROOT)


def test_the_repository_has_a_knowledge_base(kb):
    assert kb.claims and kb.sources and kb.decisions


def test_the_repositorys_records_validate_with_zero_errors(kb):
    found = errors(audit.run(kb))
    assert found == [], "run `assay check`:\n" + "\n".join(d.render() for d in found)


def test_every_verifier_names_an_existing_claim_and_check(kb):
    wrong = []
    for v in scan(ROOT).values():
        claim = kb.claims.get(v.claim or "")
        if claim is None or claim.check(v.check or "") is None:
            wrong.append(f"{v.nodeid.split('::')[0]}:{v.line}: {v.nodeid} is tied to claim({v.claim!r}, {v.check!r})")
    assert wrong == [], "\n".join(wrong)


def test_every_check_names_an_existing_verifier_tied_back_to_it(kb):
    tests = scan(ROOT)
    wrong = []
    for cid, claim in sorted(kb.claims.items()):
        for check in claim.checks:
            v = tests.get(check.verifier)
            if v is None or (v.claim, v.check) != (cid, check.id):
                wrong.append(
                    f"{kb.by_id[cid].path}: {cid}#{check.id} -> {check.verifier}"
                    + (" does not exist" if v is None else f" is marked claim({v.claim!r}, {v.check!r})")
                )
    assert wrong == [], "\n".join(wrong)


def test_every_source_is_cited(kb):
    cited = {c.source for claim in kb.claims.values() for c in [*claim.citations, *claim.reported]}
    cited |= {c.source for s in kb.sources.values() for c in s.compared_against}
    uncited = [kb.by_id[sid].path for sid in sorted(kb.sources) if sid not in cited]
    assert uncited == [], "no claim cites: " + ", ".join(uncited)


def test_every_record_file_is_valid(kb):
    invalid = [f.path for f in kb.files if f.record is None]
    assert invalid == [], "invalid records (run `assay check`): " + ", ".join(invalid)
