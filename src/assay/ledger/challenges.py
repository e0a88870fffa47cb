"""What a measurement shows of its own expectations, as ``assay check`` reports it: a counterpart that is one
constant on every seed or an exact function of the effect's own values (``assay.ledger.judgement.flag_of``), and a
seeded expectation whose seeds all agree where nothing should hold by construction. The status applies the same
marks (``assay.status.vote``): such an expectation votes for nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

from assay.diagnostics import Diagnostic
from assay.ledger.result import FLAGGED
from assay.ledger.store import Ledger


def of_claim(cid: str, f, ledger: Ledger) -> Iterator[Diagnostic]:
    """Every diagnostic of these rules of claim ``cid`` (its file ``f``) and its results in ``ledger``; its record is
    looked at only where a result's counterpart is flagged or its values are flat."""
    for n, outline in enumerate(f.outline.checks):
        for device in outline.devices:
            result = ledger.readings((cid, outline.id, device))
            if result is None or not result.measured:
                continue
            if any(
                any(c.flag is not None for c in ev.against) or _flat(result, ev.metric, ev.against) for ev in result.expectation
            ):
                yield from _of_result(f, n, f.record.checks[n], device, result)
            break  # one device says it


def _of_result(f, n: int, check, device: str, result) -> Iterator[Diagnostic]:
    for k, ev in enumerate(result.expectation):
        if k >= len(check.expect) or check.expect[k].metric != ev.metric:
            break  # judged against another record: the status re-judges it
        at = ("checks", n, "expect", k)
        for c in ev.against:
            if c.flag is not None:
                yield f.diag(
                    at,
                    "constant-counterpart",
                    f"check '{check.id}': counterpart '{c.metric}' of '{check.expect[k]}' {FLAGGED[c.flag]} "
                    f"on {device}: it challenges nothing",
                    "record the same statistic measured on the condition without the effect, per seed",
                )
        if _flat(result, ev.metric, ev.against) and check.tier in ("toy", "reduced") and not check.expect[k].identity:
            yield f.diag(
                at,
                "likely-identity",
                f"check '{check.id}': '{check.expect[k]}' is {result.metrics[ev.metric].seeds[0]:g} on every "
                f"one of {len(result.metrics[ev.metric].seeds)} seeds on {device}, and so are its counterparts",
                "mark it identity: true (shown, never support outside an analytic check), or measure what varies",
            )


def _flat(result, metric: str, against) -> bool:
    values = [result.metrics[m].seeds for m in (metric, *(c.metric for c in against)) if m in result.metrics]
    return bool(values) and all(len(v) >= 2 and max(v) == min(v) for v in values)
