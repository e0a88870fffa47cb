"""A check's evidence over the repository's commits: its record's expectations and its ledger files as each
commit had them, read from git.

One ``git log`` lists the commits that touched the records or the ledger (first parent, oldest first, with the
blob of every file each changed) and one ``git cat-file --batch`` reads the blobs not summarised yet. A blob's
summary (a record's expectations per check; a result's verdict and evaluated expectations) depends on its content
alone, so it is kept in the user's cache under the blob's id, as JSON (data, never code): a long history is read
once. A folder outside git, a shallow clone or a machine without git has no history: ``History.why`` says so, and
nothing fails.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay import cache_folder, reading
from assay.fingerprints import digest
from assay.records.yaml_safe import read_marks

#: Bumped when a summary's shape changes: older cached summaries are then read again.
SUMMARY_FORMAT = 5  # 4: records read by the safe reader; 5: results re-read from their measurements, seeds, fingerprints

#: The folders whose files make a check's history.
WATCHED = ("claims", "results")

_NO_GIT = "no history here: {}"


@dataclass(frozen=True)
class Commit:
    sha: str
    time: int  # committer date, Unix seconds
    subject: str
    n: int = 0  # its place in the history, oldest first

    @property
    def short(self) -> str:
        return self.sha[:8]


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

    def measures(self, metric: str, fingerprint: str | None) -> str | None:
        """The name under which this version recorded the measurement ``metric`` is today (its own name, or another
        with the same values: a rename); None when it did not."""
        names = dict(self.fingerprints)
        if fingerprint is not None:
            for name, fp in self.fingerprints:
                if fp == fingerprint:
                    return name
        return metric if metric in names or any(p.metric == metric for p in self.points) else None


@dataclass
class CheckHistory:
    """Every commit that changed a check's expectations or one of its ledger files, oldest first."""

    claim: str
    check: str
    specs: list[tuple[Commit, tuple[Spec, ...] | None]] = field(default_factory=list)  # None: not in the record
    results: dict[str, list[tuple[Commit, ResultVersion | None]]] = field(default_factory=dict)  # device -> versions


@dataclass
class History:
    """The commits that touched the knowledge base's records or ledger, and the summaries of their files."""

    why: str = ""  # why there is no history ('' when there is)
    commits: list[Commit] = field(default_factory=list)
    changes: list[dict[str, str | None]] = field(default_factory=list)  # per commit: path -> blob (None: deleted)
    summaries: dict[str, Any] = field(default_factory=dict)  # blob -> summary
    _by_claim: tuple[dict, dict] | None = field(default=None, repr=False)

    @property
    def available(self) -> bool:
        return not self.why

    def check(self, claim: str, check: str) -> CheckHistory:
        """The check's history: its expectations where the record's changed, its ledger files where they changed."""
        records, results = self._index()
        out = CheckHistory(claim, check)
        last: tuple[Spec, ...] | None = None
        for commit, summary in records.get(claim, []):
            specs = _specs(summary["checks"].get(check)) if summary else None
            if specs != last:
                out.specs.append((commit, specs))
                last = specs
        for device, versions in results.get(claim, {}).get(check, {}).items():
            out.results[device] = [(commit, result_version(summary)) for commit, summary in versions]
        return out

    def last_change(self, claim: str) -> str:
        """The last commit that changed the claim's record or one of its ledger files ('' for none)."""
        records, results = self._index()
        seen = [v[-1][0] for by_device in results.get(claim, {}).values() for v in by_device.values()]
        seen += [records[claim][-1][0]] if claim in records else []
        return max(seen, key=lambda c: c.n).sha if seen else ""

    def _index(self) -> tuple[dict, dict]:
        """Per claim, its record's summaries over the commits; per claim, check and device, its ledger file's."""
        if self._by_claim is None:
            records: dict[str, list] = {}
            results: dict[str, dict[str, dict[str, list]]] = {}
            owner: dict[str, str | None] = {}  # record path -> the claim its latest version was
            for commit, changed in zip(self.commits, self.changes):
                for path, blob in changed.items():
                    summary = self.summaries.get(blob) if blob else None
                    if path.startswith("claims/"):
                        cid = summary.get("id") if summary else owner.get(path)
                        owner[path] = cid
                        if isinstance(cid, str):
                            records.setdefault(cid, []).append((commit, summary if summary and summary.get("id") else None))
                    else:
                        _, cid, name = path.split("/")
                        check, _, device = name[: -len(".json")].rpartition(".")
                        results.setdefault(cid, {}).setdefault(check, {}).setdefault(device, []).append((commit, summary))
            self._by_claim = (records, results)
        return self._by_claim


def read(root: Path, *, use_cache: bool = True) -> History:
    """The history of the knowledge base at ``root`` (see the module's docstring)."""
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None:
        return History(why=_NO_GIT.format("not a git repository, or git is not installed"))
    if (_git(root, "rev-parse", "--is-shallow-repository") or "").strip() == "true":
        return History(why=_NO_GIT.format("a shallow clone holds only the latest commits"))
    if _git(root, "rev-parse", "--verify", "-q", "HEAD") is None:
        return History(why=_NO_GIT.format("nothing is committed yet"))
    base = Path(top.strip()).resolve()
    try:
        prefix = root.resolve().relative_to(base).as_posix()
    except ValueError:
        return History(why=_NO_GIT.format(f"{root} lies outside its repository"))
    prefix = "" if prefix == "." else prefix + "/"
    log = _git(
        root,
        *("-c", "core.quotepath=off", "log", "--first-parent", "-m", "--reverse", "--raw", "--no-abbrev"),
        *("--no-renames", "--format=%x01%H%x00%ct%x00%s", "--"),
        *(prefix + w for w in WATCHED),
        cwd=base,
    )
    if log is None:
        return History(why=_NO_GIT.format("git log failed"))
    history = History()
    for block in log.split("\x01")[1:]:
        head, _, raw = block.partition("\n")
        sha, when, subject = (head.split("\x00") + ["", ""])[:3]
        changed: dict[str, str | None] = {}
        for line in raw.splitlines():
            meta, _, path = line.partition("\t")
            if not meta.startswith(":") or not path.startswith(prefix):
                continue
            path = path[len(prefix) :]
            if _watched(path):
                blob = meta.split()[3]
                changed[path] = None if set(blob) == {"0"} else blob
        if changed:
            history.commits.append(Commit(sha, int(when or 0), subject, len(history.commits)))
            history.changes.append(changed)
    _summarise(history, root, base, use_cache)
    return history


def _watched(path: str) -> bool:
    parts = path.split("/")
    if parts[0] == "claims":
        return path.endswith((".yaml", ".yml"))
    return parts[0] == "results" and len(parts) == 3 and path.endswith(".json")


def _git(root: Path, *args: str, cwd: Path | None = None) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd or root, capture_output=True, text=True, env={**os.environ, "GIT_PAGER": "cat"}
        )
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None


def _summarise(history: History, root: Path, base: Path, use_cache: bool) -> None:
    """Fill ``history.summaries`` for every blob its changes name: from the cache, else from one batch read."""
    wanted = {blob: path for changed in history.changes for path, blob in changed.items() if blob}
    kept = _load_cache(root) if use_cache else {}
    history.summaries = {b: kept[b] for b in wanted if b in kept}
    missing = [b for b in wanted if b not in history.summaries]
    for blob, text in _cat(base, missing):
        history.summaries[blob] = _summary(wanted[blob], text)
    if use_cache and missing:
        _save_cache(root, {**kept, **history.summaries})


def _cat(base: Path, blobs: list[str]) -> Iterable[tuple[str, bytes]]:
    """The contents of ``blobs``, from one ``git cat-file --batch``."""
    if not blobs:
        return
    done = subprocess.run(
        ["git", "cat-file", "--batch"], cwd=base, input="".join(b + "\n" for b in blobs).encode(), capture_output=True
    )
    out, pos = done.stdout, 0
    for blob in blobs:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue
        size = int(header[2])
        yield blob, out[pos : pos + size]
        pos += size + 1


def _summary(path: str, data: bytes) -> dict[str, Any]:
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
    return {
        "verdict": doc.get("verdict"),
        "points": points,
        "settling": bool(settling),
        "seeds": [int(x) for x in seeds if isinstance(x, int) and not isinstance(x, bool)],
        "fingerprints": fingerprints,
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


def _specs(raw: list[dict] | None) -> tuple[Spec, ...] | None:
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
    return ResultVersion(
        summary["verdict"], tuple(points), summary.get("settling", False), tuple(summary.get("seeds") or ()), fps
    )


def _cache_name() -> str:
    return f"history-{SUMMARY_FORMAT}.json"


def _load_cache(root: Path) -> dict[str, Any]:
    """The summaries kept in the user's cache (``cache_folder.read_plain``: never a file inside the knowledge base, where a
    commit could bring forged ones)."""
    try:
        data = json.loads(cache_folder.read_plain(root, _cache_name()) or b"{}")
        return data if isinstance(data, dict) else {}
    except ValueError:
        return {}


def _save_cache(root: Path, summaries: dict[str, Any]) -> None:
    cache_folder.write_plain(root, _cache_name(), json.dumps(summaries, separators=(",", ":")).encode())
