"""A check's evidence over the repository's commits: its record's expectations and its ledger files as each
commit had them, read from git.

One ``git log`` lists the commits that touched the records or the ledger, in every parent line (oldest first, in
topological order, each with its parents and the blob of every file it changed against its first parent), and one
``git cat-file --batch`` reads the blobs not summarised yet. A branch merged with a merge commit is read commit by
commit, as it was made: which commit is an ancestor of which is ``ancestry``'s, and a merge that only carries what
one of its parents had brings nothing of its own (a merge whose own tree changes a file, an "evil merge", does). A
blob's summary (a record's expectations per check; a result's verdict and evaluated expectations) depends on its
content alone, so it is kept in the user's cache under the blob's id, as JSON (data, never code): a long history is
read once. A folder outside git, a shallow clone or a machine without git has no history: ``History.why`` says so,
and nothing fails.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay import corpus
from assay.ledger import git
from assay.ledger.ancestry import Ancestry
from assay.ledger.layout import RESULTS, key_of
from assay.ledger.versions import Point, ResultVersion, Spec, result_version, specs_of  # noqa: F401 - Point is read from here too
from assay.ledger.versions import summary as summary_of

#: Bumped when a summary's shape changes: older cached summaries are then read again.
SUMMARY_FORMAT = 6  # 4: records by the safe reader; 5: outcomes re-read, seeds, fingerprints; 6: machine, spreads

#: The folders whose files make a check's history.
WATCHED = ("claims", RESULTS)

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


@dataclass
class CheckHistory:
    """Every commit that changed a check's expectations or one of its ledger files, oldest first. Where branches were
    merged with merge commits, the commits of two lines interleave (topological order): ``precedes`` tells which
    came before which, and ``stated`` what the record said at a commit of either line."""

    claim: str
    check: str
    specs: list[tuple[Commit, tuple[Spec, ...] | None]] = field(default_factory=list)  # None: not in the record
    results: dict[str, list[tuple[Commit, ResultVersion | None]]] = field(default_factory=dict)  # device -> versions
    ancestry: Ancestry | None = None  # None: one line, ordered by the commits' numbers
    lines: list[tuple[Commit, tuple[Spec, ...] | None]] = field(default_factory=list)  # with merges: every change
    nodes: list[Commit] = field(default_factory=list)  # with merges: every commit of its history, merges included
    heads: dict[str, ResultVersion | None] = field(default_factory=dict)  # with merges: each file at the last commit

    @property
    def merged(self) -> bool:
        return self.ancestry is not None and not self.ancestry.linear

    def precedes(self, a: Commit, b: Commit) -> bool:
        """Whether ``a`` is an ancestor of ``b`` (the working tree, numbered past every commit, follows them all)."""
        return self.ancestry.precedes(a.n, b.n) if self.ancestry is not None else a.n < b.n

    def stated(self, at: Commit) -> tuple[Spec, ...] | None:
        """The check's expectations as the record stated them at commit ``at``."""
        if not self.merged:
            k = bisect_right([c.n for c, _ in self.specs], at.n)
            return self.specs[k - 1][1] if k else None
        return _at(self.ancestry, self.lines, at.n)  # type: ignore[arg-type] - merged: it has one

    def points(self) -> list[tuple[Commit, tuple[Spec, ...] | None]]:
        """Every commit of the check's history with the expectations the record stated there, oldest first."""
        if self.merged:
            return [(c, self.stated(c)) for c in self.nodes]
        commits = {c.n: c for c, _ in self.specs} | {c.n: c for vs in self.results.values() for c, _ in vs}
        out, k, stated = [], 0, None
        for _, c in sorted(commits.items()):  # one pass: each commit with the last change of the record up to it
            while k < len(self.specs) and self.specs[k][0].n <= c.n:
                stated, k = self.specs[k][1], k + 1
            out.append((c, stated))
        return out

    def last(self, device: str) -> ResultVersion | None:
        """The device's ledger file as the last commit had it."""
        if self.merged:
            return self.heads.get(device)
        versions = self.results.get(device) or [(None, None)]
        return versions[-1][1]


def _at(ancestry: Ancestry, changes: list[tuple[Commit, Any]], n: int) -> Any:
    """What ``changes`` (every change of one file's content against a first parent, oldest first) made it at commit
    ``n``: the last change on ``n``'s first-parent line (None: none yet)."""
    numbers = [c.n for c, _ in changes]
    k = ancestry.last_on_line(numbers, n)
    return None if k is None else changes[numbers.index(k)][1]


@dataclass
class History:
    """The commits that touched the knowledge base's records or ledger, and the summaries of their files."""

    why: str = ""  # why there is no history ('' when there is)
    commits: list[Commit] = field(default_factory=list)
    changes: list[dict[str, str | None]] = field(default_factory=list)  # per commit: path -> blob (None: deleted)
    summaries: dict[str, Any] = field(default_factory=dict)  # blob -> summary
    ancestry: Ancestry = field(default_factory=lambda: Ancestry([]))
    _by_claim: tuple[dict, dict] | None = field(default=None, repr=False)

    @property
    def available(self) -> bool:
        return not self.why

    def check(self, claim: str, check: str) -> CheckHistory:
        """The check's history: its expectations where the record's changed, its ledger files where they changed."""
        records, results = self._index()
        raw = [
            (commit, specs_of(summary["checks"].get(check)) if summary else None) for commit, summary in records.get(claim, [])
        ]
        files = results.get(claim, {}).get(check, {})
        if not self.ancestry.linear:
            return _over_merges(CheckHistory(claim, check, ancestry=self.ancestry), raw, files, self.commits)
        out = CheckHistory(claim, check, ancestry=self.ancestry)
        last: tuple[Spec, ...] | None = None
        for commit, specs in raw:
            if specs != last:
                out.specs.append((commit, specs))
                last = specs
        for device, versions in files.items():
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
                        cid, check, device = key_of(path)  # type: ignore[misc] - a watched result's path names one
                        results.setdefault(cid, {}).setdefault(check, {}).setdefault(device, []).append((commit, summary))
            self._by_claim = (records, results)
        return self._by_claim


def _over_merges(out: CheckHistory, raw: list, files: dict[str, list], commits: list[Commit]) -> CheckHistory:
    """``History.check`` where branches were merged: a commit changes the expectations or a ledger file where what
    it has differs from what every parent had (a merge that carries one parent's version brings nothing; one whose
    own tree differs from all of them does), and every commit of the check's history, with the merges that brought
    any of it, is a point at which ``stated`` knows the record's expectations."""
    ancestry = out.ancestry
    assert ancestry is not None
    out.lines = raw
    for commit, specs in raw:
        if all(specs != _at(ancestry, raw, p) for p in ancestry.parents[commit.n] or (-1,)):
            out.specs.append((commit, specs))
    nodes = {c.n for c, _ in raw}
    for device, versions in files.items():
        out.results[device] = []
        for commit, summary in versions:
            nodes.add(commit.n)
            if all(summary != _at(ancestry, versions, p) for p in ancestry.parents[commit.n][1:]):
                out.results[device].append((commit, result_version(summary)))
        out.heads[device] = result_version(_at(ancestry, versions, commits[-1].n))
    out.nodes = [commits[n] for n in sorted(nodes | ancestry.bringers(nodes))]
    return out


def read(root: Path, *, use_cache: bool = True) -> History:
    """The history of the knowledge base at ``root`` (see the module's docstring)."""
    top = git.output(root, "rev-parse", "--show-toplevel")
    if top is None:
        return History(why=_NO_GIT.format("not a git repository, or git is not installed"))
    if (git.output(root, "rev-parse", "--is-shallow-repository") or "").strip() == "true":
        return History(why=_NO_GIT.format("a shallow clone holds only the latest commits"))
    if git.output(root, "rev-parse", "--verify", "-q", "HEAD") is None:
        return History(why=_NO_GIT.format("nothing is committed yet"))
    base = Path(top.strip()).resolve()
    try:
        prefix = root.resolve().relative_to(base).as_posix()
    except ValueError:
        return History(why=_NO_GIT.format(f"{root} lies outside its repository"))
    prefix = "" if prefix == "." else prefix + "/"
    log = git.output(
        base,
        *("-c", "core.quotepath=off", "log", "--topo-order", "--reverse", "--full-history", "--simplify-merges"),
        *("--parents", "--diff-merges=first-parent", "--raw", "--no-abbrev", "--no-renames"),
        *("--format=%x01%H %P%x00%ct%x00%s", "--"),
        *(prefix + w for w in WATCHED),
    )
    if log is None:
        return History(why=_NO_GIT.format("git log failed"))
    history, number, parents = History(), {}, []
    for block in log.split("\x01")[1:]:
        head, _, raw = block.partition("\n")
        shas, when, subject = (head.split("\x00") + ["", ""])[:3]
        sha, *up = shas.split()
        ups = tuple(dict.fromkeys(number[u] for u in up if u in number))  # each parent as this history numbers it
        changed: dict[str, str | None] = {}
        for line in raw.splitlines():
            meta, _, path = line.partition("\t")
            if not meta.startswith(":") or not path.startswith(prefix):
                continue
            path = path[len(prefix) :]
            if _watched(path):
                blob = meta.split()[3]
                changed[path] = None if set(blob) == {"0"} else blob
        if changed or len(ups) > 1:  # a merge is kept for what it joins, even where it changes nothing
            number[sha] = len(history.commits)
            history.commits.append(Commit(sha, int(when or 0), subject, len(history.commits)))
            history.changes.append(changed)
            parents.append(ups)
        elif ups:  # a commit that changed nothing watched stands for its parent
            number[sha] = ups[0]
    history.ancestry = Ancestry(parents)
    _summarise(history, root, base, use_cache)
    return history


def _watched(path: str) -> bool:
    parts = path.split("/")
    if parts[0] == "claims":
        return path.endswith((".yaml", ".yml"))
    return key_of(path) is not None


def _summarise(history: History, root: Path, base: Path, use_cache: bool) -> None:
    """Fill ``history.summaries`` for every blob its changes name: from the cache, else from one batch read."""
    wanted = {blob: path for changed in history.changes for path, blob in changed.items() if blob}
    kept = _load_cache(root) if use_cache else {}
    history.summaries = {b: kept[b] for b in wanted if b in kept}
    missing = [b for b in wanted if b not in history.summaries]
    for blob, text in git.blobs(base, missing):
        history.summaries[blob] = summary_of(wanted[blob], text)
    if use_cache and missing:
        corpus.write_plain(root, _cache_name(), json.dumps({**kept, **history.summaries}, separators=(",", ":")).encode())


def _cache_name() -> str:
    return f"history-{SUMMARY_FORMAT}.json"


def _load_cache(root: Path) -> dict[str, Any]:
    """The summaries kept in the user's cache (``corpus.read_plain``: never a file inside the knowledge base, where a
    commit could bring forged ones)."""
    try:
        data = json.loads(corpus.read_plain(root, _cache_name()) or b"{}")
        return data if isinstance(data, dict) else {}
    except ValueError:
        return {}
