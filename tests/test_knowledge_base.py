"""Consistency tests that guard the repository's own knowledge base (style item 13).

The records, verifiers and ledger under the repository root must validate with zero errors; every
verifier names an existing claim and check, every check an existing verifier, and every source is cited.
Each failure lists every offender with its place, as `assay check` would.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import audit
from assay.records.knowledge_base import KnowledgeBase, load
from assay.records.verifiers import scan

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return load(ROOT)


def test_the_repository_has_a_knowledge_base(kb):
    assert kb.claims and kb.sources and kb.decisions


def test_the_repositorys_records_validate_with_zero_errors(kb):
    found = [d for d in audit.run(kb) if d.severity == "error"]
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


def test_every_assertion_says_in_one_sentence_what_it_asserts(kb):
    missing = [f"{c.id}/{a.id}" for c in kb.claims.values() for a in c.assertions if not (a.says or "").strip()]
    assert missing == []


def test_every_control_that_a_supporting_assertion_reads_names_its_counterpart(kb):
    # a control can vote only if the model with the effect fails it in the same run: the record must name that model
    unchallenged = []
    for claim in kb.claims.values():
        for a in claim.assertions:
            for e in a.evidence:
                check = claim.check(e.check)
                if e.stance != "supports" or check is None or check.role == "apparatus":
                    continue
                for x in check.expect:
                    if x.control and not x.against and (not e.metrics or x.metric in e.metrics):
                        unchallenged.append(f"{claim.id}/{a.id} reads {check.id}: {x.metric}")
    assert unchallenged == []


def test_every_supported_assertion_rests_on_an_expectation_that_could_have_failed(kb):
    from assay.overview import claim_states

    states = claim_states(kb)
    loose = []
    for claim in kb.claims.values():
        state = states[claim.id]
        for a, st in zip(claim.assertions, state.assertions):
            for device, verdict in st.by_device.items():
                if verdict == "supported" and not any(
                    ok in st.why.get(device, "") for ok in ("its counterparts fail it", "analytically")
                ):
                    loose.append(f"{claim.id}/{a.id} on {device}: {st.why.get(device)}")
    assert loose == []
