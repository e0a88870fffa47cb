"""Attacks by volume: one record of junk keys used to give 417,000 diagnostics in a minute and 800 MB.

At most ``PER_FILE`` diagnostics of a file are listed and one too-many-problems diagnostic counts the
rest; the rest are never made, so the cap bounds time and memory too.
"""

from __future__ import annotations

import time

from assay import audit
from assay.diagnostics import PER_FILE
from assay.records.knowledge_base import load

ALLOWED = (
    "assertions, checks, citations, conditions, discrepancies, id, no_check_reason, refined, relations, reported, "
    "statement, tags, title"
)


def test_a_file_with_more_than_fifty_problems_lists_fifty_and_counts_the_rest(diagnose):
    lines = diagnose("too-many-problems").splitlines()
    assert lines[:2] == [
        "claims/THEORY-090.yaml:15:1: error[unknown-field]: 'junk_00' is not a field of this record",
        f"  hint: allowed fields: {ALLOWED}",
    ]
    assert lines[-4:] == [
        "claims/THEORY-090.yaml:64:1: error[unknown-field]: 'junk_49' is not a field of this record",
        f"  hint: allowed fields: {ALLOWED}",
        "claims/THEORY-090.yaml:65:1: error[too-many-problems]: 10 more problems in this file are not listed",
        "  hint: fix these and run assay check again",
    ]
    assert len(lines) == 2 * (PER_FILE + 1)


def test_a_record_of_60000_junk_keys_finishes_quickly_with_the_cap_and_one_more_line(kb_root):
    # 60,000 keys stay under the items a record may hold (MAX_ITEMS, 200,000 separators); more are refused unparsed
    path = kb_root / "claims" / "THEORY-090.yaml"
    path.write_text(path.read_text() + "".join(f"k{n}: 0\n" for n in range(60_000)))
    start = time.perf_counter()
    found = audit.run(load(kb_root))
    assert time.perf_counter() - start < 20  # 63 s for 417,000 keys before the cap; about 2 s now
    assert len(found) == PER_FILE + 1
    assert found[-1].render() == (
        "claims/THEORY-090.yaml:70:1: error[too-many-problems]: 59950 more problems in this file are not listed\n"
        "  hint: fix these and run assay check again"
    )


def test_the_cap_is_per_file_so_a_flood_in_one_file_hides_nothing_in_another(make_kb):
    found = audit.run(load(make_kb("too-many-problems", "unknown-source")))
    assert [d.path for d in found].count("claims/THEORY-090.yaml") == PER_FILE + 1
    assert [d.render() for d in found if d.path != "claims/THEORY-090.yaml"] == [
        "claims/SOTA-380.yaml:6:5: error[unknown-source]: 'LIT-509' is not a source\n  hint: did you mean 'LIT-590'?"
    ]
