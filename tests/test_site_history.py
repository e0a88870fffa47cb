"""A check's history on its claim page (its verdicts over the commits that changed its result) and each
expectation's registration, with the dashboard's counts of them, against the fixture knowledge base made a git
repository commit by commit; outside git the page shows neither, and nothing fails."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from assay.site import generate
from tests.ledger.test_history import commit, git
from tests.test_site import fresh_copy

RESULT = Path("results") / "SOTA-364" / "shuffle-fixes.cpu.json"


def _set_verdict(root: Path, verdict: str) -> None:
    path = root / RESULT
    path.write_text(re.sub(r'"verdict": "[a-z-]+"', f'"verdict": "{verdict}"', path.read_text()), encoding="utf-8")


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The fixture knowledge base after three commits: with its ledger, shuffle-fixes' result turned from failed to
    passed, then back; and each commit as the strip names it (short id and date)."""
    root = fresh_copy(tmp_path_factory.mktemp("site_kb"), history=False)
    git(root, "init", "-q", "-b", "main")
    shas = [commit(root, "the knowledge base and its ledger")]
    _set_verdict(root, "passed")
    shas.append(commit(root, "shuffle-fixes rerun"))
    _set_verdict(root, "failed")
    shas.append(commit(root, "shuffle-fixes rerun again"))
    named = [
        f"{sha[:8]} {time.strftime('%Y-%m-%d', time.gmtime(int(git(root, 'show', '-s', '--format=%ct', sha))))}" for sha in shas
    ]
    return root, named


@pytest.fixture(scope="module")
def history(repository: tuple[Path, list[str]]) -> tuple[dict[str, str], list[str]]:
    """The pages of ``repository``, and its commits as the strip names them."""
    root, named = repository
    return {o.path: o.content for o in generate(root) if isinstance(o.content, str)}, named


def _check(page: str, check: str) -> str:
    start = page.index(f'<details class="assay-plain assay-check" id="check-{check}">')
    return page[start : page.index("</details>", start)]  # a check holds no other disclosure


def test_each_check_shows_its_verdicts_over_the_commits_that_changed_its_result(history) -> None:
    pages, shas = history
    block = _check(pages["claims/SOTA-364.md"], "shuffle-fixes")
    cells = re.findall(r'<li class="(assay-c-[0-9a-f]+)" style="--n:(\d+)" tabindex="0"><span>([^<]*)</span></li>', block)
    assert [(n, text) for _, n, text in cells] == [
        ("1", f"{shas[0]}: failed"),
        ("1", f"{shas[1]}: passed"),
        ("1", f"{shas[2]}: failed"),
    ]
    assert cells[0][0] == cells[2][0] != cells[1][0]  # the verdict's colour
    assert "Its verdicts over the 3 commits that changed its result:" in block
    # a check whose result one commit brought: one cell, as wide as its stretch of commits
    leak = _check(pages["claims/SOTA-364.md"], "leak-exists")
    assert re.findall(r'style="--n:(\d+)" tabindex="0"><span>([^<]*)</span>', leak) == [("1", f"{shas[0]}: passed")]


def test_each_expectation_shows_its_registration_with_the_line_that_explains_it(history) -> None:
    pages, shas = history
    block = _check(pages["claims/SOTA-364.md"], "shuffle-fixes")
    registration = block[block.index('<div class="assay-registration">') :]
    assert '<p class="assay-label">When its expectations were fixed</p>' in registration
    lines = re.findall(r'<li><span class="assay-chip [^"]*">([a-z-]+)</span> (.*?): (.*?)</li>', registration)
    assert lines and all(kind == "with-result" for kind, _, _ in lines)
    assert all(
        why.startswith(f"stated at {shas[0].replace(' ', ' (')})") and "together with its first result" in why
        for *_, why in lines
    )
    metrics = [m for _, names, _ in lines for m in re.findall(r"<code>([a-z0-9_]+)</code>", names)]
    assert metrics == ["key_accuracy"]
    key = pages["claims/SOTA-364.md"]
    key = key[key.index('<dl class="assay-key"') : key.index("</dl>", key.index('<dl class="assay-key"'))]
    assert "<dt>When it was fixed</dt>" in key and "with-result</span>" in key  # the key defines the chips the rows show


def test_the_dashboard_counts_the_expectations_by_their_registration(history) -> None:
    pages, _ = history
    line = re.search(r"Expectations, by when they were fixed: (.*?)</p>", pages["index.md"]).group(1)
    counts = {k: int(n) for n, k in re.findall(r'<span class="assay-chip [^"]*"[^>]*>(\d+) ([a-z-]+)</span>', line)}
    assert list(counts) == ["registered", "with-result", "confirmed", "no-history", "moved-after-result", "post-hoc"]
    assert counts["with-result"] > 0 and counts["post-hoc"] == 0


def test_outside_git_the_pages_show_no_history_and_nothing_fails(tmp_path: Path) -> None:
    pages = {o.path: o.content for o in generate(fresh_copy(tmp_path / "kb", history=False)) if isinstance(o.content, str)}
    assert "assay-strip" not in pages["claims/SOTA-364.md"]
    assert "When its expectations were fixed" not in pages["claims/SOTA-364.md"]
    assert "by when they were fixed" not in pages["index.md"]


def test_the_sites_json_export_carries_each_checks_history_as_assay_export_json_does(repository, history) -> None:
    from assay.export import as_json
    from assay.overview import States
    from assay.records.knowledge_base import load

    (root, _), (pages, shas) = repository, history
    site = {c["id"]: c["history"] for c in json.loads(pages["assay.json"])["claims"]}
    kb = load(root)
    assert site == {c["id"]: c["history"] for c in as_json(kb, States.read(kb))["claims"]}
    versions = site["SOTA-364"]["shuffle-fixes"]["cpu"]
    assert [f"{v['commit'][:8]} {time.strftime('%Y-%m-%d', time.gmtime(v['time']))}" for v in versions] == shas
    assert [v["verdict"] for v in versions] == ["failed", "passed", "failed"]
