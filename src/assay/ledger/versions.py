"""One version of a check's evidence as a commit had it: the record's expectations (``Spec``) and a ledger file's
outcomes (``ResultVersion``), each summarised from the file's content alone, so that a summary can be kept under the
file's blob id. A result's outcomes are re-read from its own per-seed measurements (``assay.reading``), never taken
from its stored word; a record is read by the safe reader, which refuses an alias bomb or a tag before it expands.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from assay import reading
from assay.fingerprints import digest
from assay.records.yaml_safe import read_marks


@dataclass(frozen=True)
class Spec:
    """One expectation as the record stated it: what registration compares over the commits."""

    metric: str
    op: str
    value: float
    tol: float | None = None
    seeds: str | None = None
    control: bool = False
    against: tuple[str, ...] = ()
    interval: float | None = None
    regime: bool = False
    first: int | None = None  # the check's seeds (None: the record does not name them)
    count: int | None = None

    def __str__(self) -> str:
        tol = f" ± {self.tol:g}" if self.tol is not None else ""
        seeds = f" ({self.seeds})" if self.seeds else ""
        return f"{self.metric} {self.op} {self.value:g}{tol}{seeds}{' [control]' if self.control else ''}"

    @property
    def content(self) -> tuple:
        """What the expectation is, apart from its metric's name: registration follows this across renames."""
        return (self.op, self.value, self.tol, self.seeds, self.interval, self.control, self.regime, self.first, self.count)

    def moved(self, other: Spec) -> str:
        """What differs from ``other``, in words ('0.05 -> 0.1'; 'control added'); empty when nothing does."""
        parts = []
        if (self.op, self.value, self.tol) != (other.op, other.value, other.tol):
            parts.append(f"{other.op} {other.value:g} -> {self.op} {self.value:g}")
        if self.metric != other.metric:
            parts.append(f"metric {other.metric} -> {self.metric}")
        if self.seeds != other.seeds or self.interval != other.interval:
            parts.append(f"seeds read {other.seeds or 'default'} -> {self.seeds or 'default'}")
        if (self.first, self.count) != (other.first, other.count):
            parts.append(f"seeds {_span(other)} -> {_span(self)}")
        if self.regime != other.regime:
            parts.append("regime " + ("added" if self.regime else "removed"))
        if self.control != other.control:
            parts.append("control " + ("added" if self.control else "removed"))
        if self.against != other.against:  # the record names them; the move says what kind it was
            parts.append(
                "counterparts added"
                if not other.against
                else "counterparts removed"
                if not self.against
                else "counterparts changed"
            )
        return "; ".join(parts)


def _span(s: Spec) -> str:
    return f"{s.first}..{s.first + s.count - 1}" if s.first is not None and s.count else "unnamed"


@dataclass(frozen=True)
class Point:
    """One evaluated expectation of a ledger file."""

    metric: str
    op: str
    value: float
    measured: float
    outcome: str
    seeds_total: int | None = None


@dataclass(frozen=True)
class ResultVersion:
    verdict: str
    points: tuple[Point, ...]  # each outcome re-read from the file's own measurements, never its stored word
    settling: bool = False  # a settling run (fresh seeds, read alone)
    seeds: tuple[int, ...] = ()  # the seeds it read
    fingerprints: tuple[tuple[str, str], ...] = ()  # (metric, hash of its per-seed values): a measurement by content
    machine: str = ""  # the machine it ran on (its host's hash and CPU), to tell two machines' results apart
    spreads: tuple[tuple[str, float, float], ...] = ()  # (metric, mean, spread over its seeds: max - min)

    def spread(self, metric: str) -> tuple[float, float] | None:
        """The mean of ``metric`` and its spread over seeds (max - min), where it was read over several seeds."""
        return next(((mean, width) for name, mean, width in self.spreads if name == metric), None)

    def measures(self, metric: str, fingerprint: str | None) -> str | None:
        """The name under which this version recorded the measurement ``metric`` is today (its own name, or another
        with the same values: a rename); None when it did not."""
        same = next((name for name, fp in self.fingerprints if fp == fingerprint), None)  # stored as text: None matches none
        if same is not None:
            return same
        return metric if metric in dict(self.fingerprints) or any(p.metric == metric for p in self.points) else None


def summary(path: str, data: bytes) -> dict[str, Any]:
    """What registration needs of one file's content; an unreadable file is an empty summary."""
    try:
        if path.startswith("claims/"):
            # read as every record is (``yaml_safe``): an alias bomb, a tag or an anchor in a past commit is refused
            # there, before anything expands, and that version has no history to give
            doc = read_marks(data, path)[0]
            checks = {}
            for c in doc.get("checks") or [] if isinstance(doc, dict) else []:
                if isinstance(c, dict) and isinstance(c.get("id"), str):
                    seeds = c.get("seeds") if isinstance(c.get("seeds"), dict) else {}
                    span = {"first": seeds.get("first", 0) if seeds else None, "count": seeds.get("count")}
                    checks[c["id"]] = [{**_spec_dict(e), **span} for e in c.get("expect") or [] if isinstance(e, dict)]
            return {"id": doc.get("id") if isinstance(doc, dict) else None, "checks": checks}
        return result_summary(json.loads(data))
    except Exception:  # an old or broken file: it has no history to give, and the rest is still read
        return {"id": None, "checks": {}} if path.startswith("claims/") else {"verdict": None, "points": []}


def result_summary(doc: dict) -> dict[str, Any]:
    """A ledger file's verdict, its expectations each re-read from its own per-seed measurements (as it says it read
    them: a hand-edited outcome is not believed), the seeds it read, and a hash of each metric's values."""
    metrics = doc.get("metrics") if isinstance(doc.get("metrics"), dict) else {}
    points = []
    for e in doc.get("expectation") or []:
        if isinstance(e, dict):
            p = {k: e.get(k) for k in ("metric", "op", "value", "measured", "outcome", "seeds_total")}
            m = metrics.get(p["metric"]) if isinstance(p["metric"], str) else None
            per_seed = m.get("seeds") if isinstance(m, dict) and isinstance(m.get("seeds"), list) else []
            try:
                how = e.get("seeds") if e.get("seeds") in ("all", "mean") else None
                got = reading.read(p["op"], float(p["value"]), e.get("tol"), how, e.get("level"), float(m["value"]), per_seed)
                p["outcome"], p["measured"] = got["outcome"], got["measured"]
            except (TypeError, ValueError, KeyError):
                p["outcome"] = None  # not measured as it says: no outcome to give
            p["seeds_total"] = len(per_seed) or None
            points.append(p)
    fingerprints = {
        name: fingerprint(m.get("value"), m.get("seeds")) for name, m in sorted(metrics.items()) if isinstance(m, dict)
    }
    settling = doc.get("settling") if isinstance(doc.get("settling"), dict) else None
    seeds = doc.get("seeds_used") if isinstance(doc.get("seeds_used"), list) else []
    env = doc.get("environment") if isinstance(doc.get("environment"), dict) else {}
    spreads = {}
    for name, m in sorted(metrics.items()):
        values = m.get("seeds") if isinstance(m, dict) else None
        if isinstance(values, list) and len(values) >= 2 and all(isinstance(v, (int, float)) for v in values):
            spreads[name] = [sum(values) / len(values), max(values) - min(values)]
    return {
        "verdict": doc.get("verdict"),
        "points": points,
        "settling": bool(settling),
        "seeds": [int(x) for x in seeds if isinstance(x, int) and not isinstance(x, bool)],
        "fingerprints": fingerprints,
        "machine": f"{env.get('hostname', '')} {env.get('cpu_model', '')} {env.get('cpu_capability', '')}".strip(),
        "spreads": spreads,
    }


def fingerprint(value: Any, seeds: Any) -> str:
    """A hash of a metric's measurements (its per-seed values, else its value): the same measurement under any name."""
    data = seeds if isinstance(seeds, list) and seeds else [value]
    return digest(json.dumps(data).encode())


def _spec_dict(e: dict) -> dict[str, Any]:
    against = e.get("against") or []
    return {
        "metric": str(e.get("metric")),
        "op": str(e.get("op")),
        "value": e.get("value"),
        "tol": e.get("tol"),
        "seeds": e.get("seeds"),
        "control": bool(e.get("control", False)),
        "against": [str(a) for a in against] if isinstance(against, list) else [str(against)],
        "interval": e.get("interval"),
        "regime": bool(e.get("regime", False)),
    }


def specs_of(raw: list[dict] | None) -> tuple[Spec, ...] | None:
    if raw is None:
        return None
    out = []
    for e in raw:
        try:
            value = float(e["value"])
        except (TypeError, ValueError):
            continue
        tol = float(e["tol"]) if isinstance(e.get("tol"), (int, float)) else None
        first, count = e.get("first"), e.get("count")
        out.append(
            Spec(
                e["metric"],
                e["op"],
                value,
                tol,
                e.get("seeds"),
                e["control"],
                tuple(e["against"]),
                e.get("interval") if isinstance(e.get("interval"), float) else None,
                bool(e.get("regime")),
                first if isinstance(first, int) else None,
                count if isinstance(count, int) else None,
            )
        )
    return tuple(out)


def result_version(summary: dict | None) -> ResultVersion | None:
    if not summary or not summary.get("verdict"):
        return None
    points = []
    for p in summary["points"]:
        try:
            if p["outcome"] in ("holds", "fails", "inconclusive"):
                points.append(
                    Point(p["metric"], p["op"], float(p["value"]), float(p["measured"]), p["outcome"], p.get("seeds_total"))
                )
        except (TypeError, ValueError, KeyError):
            continue
    fps = tuple(sorted((str(k), str(v)) for k, v in (summary.get("fingerprints") or {}).items()))
    spreads = tuple((str(k), float(v[0]), float(v[1])) for k, v in sorted((summary.get("spreads") or {}).items()))
    return ResultVersion(
        summary["verdict"],
        tuple(points),
        summary.get("settling", False),
        tuple(summary.get("seeds") or ()),
        fps,
        str(summary.get("machine") or ""),
        spreads,
    )
