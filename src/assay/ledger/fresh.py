"""A ledger result made from scratch, by a run or for a run that never finished: the one constructor of one."""

from __future__ import annotations

from typing import Any

from assay.fingerprints import input_hash
from assay.ledger.result import FORMAT, Environment, Inputs, Result, RunError


def fresh_result(
    claim: str,
    check: str,
    device: str,
    *,
    verdict: str,
    message: str,
    tier: str,
    parts: dict[str, Any],
    environment: Environment,
    finished: str,
    kind: Any = "error",
    duration: float = 0.0,
    **recorded: Any,
) -> Result:
    """The result of ``check`` of ``claim`` on ``device``, judged ``verdict`` with its inputs' ``parts``. An error is
    its own last error (of ``kind``), and keeps no measurement: ``recorded`` (metrics, notes, seeds...) says what else
    the run recorded; a passed result keeps no message."""
    inputs = Inputs(hash=input_hash(parts), parts=parts)
    error = RunError(kind=kind, message=message, finished=finished, inputs_hash=inputs.hash) if verdict == "error" else None
    return Result(
        format=FORMAT,
        claim=claim,
        check=check,
        device=device,
        verdict=verdict,
        message=message if verdict != "passed" else "",
        tier=tier,
        duration_s=duration,
        environment=environment,
        inputs=inputs,
        finished=finished,
        last_error=error,
        **recorded,
    )
