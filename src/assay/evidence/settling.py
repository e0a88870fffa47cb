"""A settling run, as the plugin sees it: the plan ``assay verify --settle`` wrote (which checks, on which fresh
seeds, why, and the inconclusive result each is to decide), the seeds the ``seeds`` fixture hands out, and what the
result keeps of it (``assay.ledger.result.Settling``).

The plan is a JSON file: ``{"CLAIM/CHECK": {"seeds": [...], "plan": "...", "before": {verdict, finished, seeds,
expectation}}}``. Its seeds are disjoint from every seed the check read before (``assay.power``), and the result is
judged on them alone, so that a settling run cannot add seeds to an earlier reading until an interval clears.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.evidence.judge import VerifierError
from assay.experiment import SETTLING_FROM
from assay.ledger.result import Settling


def load(path: str | None) -> dict[str, Any]:
    """The plan at ``path`` ({} for none); an unreadable plan is a usage error that names the file."""
    if not path:
        return {}
    try:
        plan = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(plan, dict) or not all(isinstance(v.get("seeds"), list) for v in plan.values()):
            raise ValueError("expected {CLAIM/CHECK: {seeds: [...], ...}}")
        for label, planned in plan.items():
            low = [s for s in planned["seeds"] if isinstance(s, bool) or not isinstance(s, int) or s < SETTLING_FROM]
            if low:  # a record's own seeds lie below SETTLING_FROM: a plan naming them would confirm nothing new
                raise ValueError(
                    f"{label} names seed {low[0]!r}: a settling run's seeds are the engine's, from {SETTLING_FROM} on, "
                    "after every seed any run of the check has read"
                )
        return plan
    except (OSError, ValueError, AttributeError) as e:
        raise pytest.UsageError(f"--settle-plan {path}: cannot be read ({e}); run assay verify --settle to write one") from None


def seeds_for(plan: dict[str, Any], tie: tuple | None) -> list[int]:
    """The seeds a verifier reads: the plan's fresh ones for a planned check, else the record's ``seeds:``."""
    if tie is None:
        raise VerifierError("the 'seeds' fixture is for verifiers (tests marked with a claim and check)")
    claim, check = tie
    planned = plan.get(f"{claim.id}/{check.id}")
    if planned is not None:
        return [int(s) for s in planned["seeds"]]
    if check.seeds is None:
        raise VerifierError(
            f"{claim.id}/{check.id} declares no seeds, but its verifier asks for them; add to the check "
            "seeds: {count: N} (and first: S where they do not start at 0)"
        )
    return check.seeds.values


def cpu_limit(plan: dict[str, Any], claim: Any, check: Any, limit: float | None = None) -> float:
    """The check's CPU limit (``limit``, else its ``timeout``), scaled for a settling run by its seeds over the
    record's."""
    limit = float(check.timeout if limit is None else limit)
    planned = plan.get(f"{claim.id}/{check.id}")
    if planned is None or check.seeds is None:
        return limit
    return limit * max(1.0, len(planned["seeds"]) / check.seeds.count)


def of(plan: dict[str, Any], report: Any) -> Settling | None:
    """What the result of a planned check keeps of its plan; None for a check the plan does not name."""
    planned = plan.get(f"{report.claim}/{report.check}")
    if planned is None:
        return None
    before = planned.get("before") or {}
    kept = {
        "plan": str(planned.get("plan", "")),
        "seeds": [int(s) for s in planned["seeds"]],
        "before_verdict": before.get("verdict", "inconclusive"),
        "before_finished": before.get("finished", "1970-01-01T00:00:00Z"),
        "before_seeds": [int(s) for s in before.get("seeds") or []],
        "before_expectation": before.get("expectation") or [],
    }
    return Settling.model_validate_json(json.dumps(kept))  # read as JSON, as the plan was: an interval is an array
