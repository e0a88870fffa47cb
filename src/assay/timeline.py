"""``assay history ID[/CHECK]``: a check's evidence over the repository's commits, and each expectation's
registration (``assay.ledger.registration``), in words or as JSON."""

from __future__ import annotations

import json
from typing import Any

from assay.diagnostics import printable
from assay.experiment import Check
from assay.ledger.history import CheckHistory, Commit, History, ResultVersion, read
from assay.ledger.registration import WORKING_TREE, Registration, of_check, when
from assay.ledger.store import read_ledger
from assay.records.knowledge_base import KnowledgeBase
from assay.records.lookup import check_id, record_id


def history(kb: KnowledgeBase, target: str, as_json: bool = False) -> int:
    cid, _, only = target.partition("/")
    claim = kb.claims[record_id(kb, cid, kind="claim")]
    checks = [c for c in claim.checks if not only or c.id == check_id(kb, cid, only)]
    past = read(kb.root)
    ledger = read_ledger(kb.root)
    data = [_check(past, cid, c, {d: ledger.get((cid, c.id, d)) for d in c.devices}) for c in checks]
    if as_json:
        print(json.dumps({"claim": cid, "history": past.why or None, "checks": data}, indent=2))
        return 0
    if not past.available:
        print(past.why)
        return 0
    for check in data:
        _print(cid, check)
    return 0


def versions(past: History, cid: str, check: str) -> dict[str, list[dict[str, Any]]]:
    """Per device, every committed version of the check's ledger file beside the expectations then stated."""
    ch = past.check(cid, check)
    return {device: [_version(ch, c, v) for c, v in vs] for device, vs in ch.results.items()}


def _check(past: History, cid: str, check: Check, results: dict) -> dict[str, Any]:
    if not past.available:
        return {"check": check.id, "devices": {}, "registration": []}
    return {
        "check": check.id,
        "devices": versions(past, cid, check.id),
        "registration": [registration_json(r) for r in of_check(past, cid, check, results)],
    }


def _version(ch: CheckHistory, c: Commit, v: ResultVersion | None) -> dict[str, Any]:
    stated = ch.stated(c) or ()
    return {
        "commit": c.sha or None,
        "time": c.time or None,
        "subject": c.subject,
        "verdict": v.verdict if v else None,  # None: the ledger file was removed
        "settling": v.settling if v else False,
        "expectations": [str(s) for s in stated],
        "measured": [
            {"metric": p.metric, "op": p.op, "value": p.value, "measured": p.measured, "outcome": p.outcome}
            for p in (v.points if v else ())
        ],
    }


def registration_json(r: Registration) -> dict[str, Any]:
    return {
        "metric": r.metric,
        "kind": r.kind,
        "why": r.why,
        "committed": r.committed.sha if r.committed and r.committed is not WORKING_TREE else None,
        "first_result": r.first_result.sha if r.first_result and r.first_result is not WORKING_TREE else None,
        "votes": r.votes,
        "moves": [
            {
                "commit": m.at.sha or None,
                "change": m.change,
                "device": m.device,
                "before": m.before,
                "after": m.after,
                "post_hoc": m.post_hoc,
            }
            for m in r.moves
        ],
    }


def _print(cid: str, check: dict[str, Any]) -> None:
    print(f"{cid}/{check['check']}")
    if not check["devices"]:
        print("  no ledger file of it has been committed")
    for device, versions in sorted(check["devices"].items()):
        print(f"  on {device}:")
        for v in versions:
            at = "working tree" if v["commit"] is None else when(Commit(v["commit"], v["time"] or 0, ""))
            print(printable(f"    {at:<24} {v['verdict'] or 'removed':<14} {v['subject'][:60]}"))
            for m in v["measured"]:
                print(printable(f"      {m['metric']} = {m['measured']:.4g} ({m['op']} {m['value']:g}): {m['outcome']}"))
    print("  registration:")
    for r in check["registration"]:
        print(printable(f"    {r['metric']}: {r['kind']}: {r['why']}"))
        if len(r["moves"]) > 1:
            for m in r["moves"]:
                at = "working tree" if m["commit"] is None else m["commit"][:8]
                print(
                    printable(
                        f"      {at}: {m['change']} ({m['before']} on {m['device']} before, {m['after'] or 'no result'} after)"
                    )
                )
