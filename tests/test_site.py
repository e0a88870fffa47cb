"""The site generator and its MkDocs plugin, against the fixture knowledge base tests/fixtures/site_kb.

Golden files: ``ASSAY_REGEN_GOLDEN=1 pytest tests/test_site.py`` rewrites tests/fixtures/site_golden/.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from html import escape as html_escape
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

from assay.site import generate
from tests.conftest import write_result

REPO = Path(__file__).resolve().parents[1]
KB = REPO / "tests" / "fixtures" / "site_kb"
GOLDEN = REPO / "tests" / "fixtures" / "site_golden"
PAYLOADS = ("<script", "<img", "<svg", "<i>", "<b>")  # as raw tags; as escaped text they are the record's words


def build_site(root: Path, out: Path, strict: bool = True, theme: dict | None = None) -> Path:
    """Build the site of the knowledge base at ``root`` with the repository's mkdocs.yml into ``out``
    (with ``theme`` settings added to its own)."""
    cfg = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    cfg["theme"].update(theme or {})
    cfg["docs_dir"] = str(REPO / "site")
    cfg["site_dir"] = str(out / "site")
    cfg["plugins"] = [p if p != "assay" else {"assay": {"root": str(root)}} for p in cfg["plugins"]]
    config = out / "mkdocs.yml"
    config.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    cmd = [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config)] + (["--strict"] if strict else [])
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr
    return out / "site"


def fresh_copy(dest: Path, *, history: bool = True) -> Path:
    """A copy of the fixture knowledge base. Its ledger's inputs are all in the repository (no lock file:
    every pin reads "unpinned"), so its results are fresh on every machine, except the one made stale on
    purpose (SOTA-999's, whose verifier hash is zeroed). It is a repository whose records were committed before
    their results, as the guide's path has it (fixed dates: the same commits on every machine)."""
    shutil.copytree(KB, dest, dirs_exist_ok=True)
    if not history:  # a plain folder (a test that makes its own history, or none)
        return dest
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(dest), "GIT_CONFIG_NOSYSTEM": "1"}
    env |= {f"GIT_{who}_{what}": "fixture" for who in ("AUTHOR", "COMMITTER") for what in ("NAME", "EMAIL")}
    steps = [
        (["init", "-q"], None),
        (["add", "-A", ":!results"], None),
        (["commit", "-qm", "the records"], "2026-01-01T00:00:00Z"),
    ]
    steps += [(["add", "-A"], None), (["commit", "-qm", "their results"], "2026-01-02T00:00:00Z")]
    for args, date in steps:
        dated = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date} if date else {}
        subprocess.run(["git", *args], cwd=dest, env=env | dated, check=True, capture_output=True)
    return dest


@pytest.fixture(scope="module")
def site_kb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fresh_copy(tmp_path_factory.mktemp("site_kb"))


@pytest.fixture(scope="module")
def built(site_kb: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_site(site_kb, tmp_path_factory.mktemp("site"))


# --- the generator ----------------------------------------------------------------------------------


def _text_outputs(root: Path) -> dict[str, str]:
    return {o.path: o.content for o in generate(root) if isinstance(o.content, str)}


def test_generated_pages_match_the_golden_files(site_kb: Path) -> None:
    outputs = _text_outputs(site_kb)
    if os.environ.get("ASSAY_REGEN_GOLDEN"):
        for old in GOLDEN.rglob("*"):
            if old.is_file():
                old.unlink()
        for path, text in outputs.items():
            (GOLDEN / path).parent.mkdir(parents=True, exist_ok=True)
            (GOLDEN / path).write_text(text, encoding="utf-8")
    golden = {p.relative_to(GOLDEN).as_posix(): p.read_text(encoding="utf-8") for p in GOLDEN.rglob("*") if p.is_file()}
    assert sorted(outputs) == sorted(golden)
    for path, text in outputs.items():
        assert text == golden[path], f"{path} differs from its golden file (ASSAY_REGEN_GOLDEN=1 to accept)"


def test_the_neighbourhood_figure_escapes_a_hostile_title(site_kb: Path) -> None:
    """A record's title reaches the neighbourhood SVG (templates/neighbourhood.html) as escaped text, never markup."""
    from assay.site import neighbourhood
    from assay.site.views import index

    ix = index(site_kb)
    ix.graph.add_node("SOTA-999", title="<b>\"A\" & 'B'</b>", kind="claim", status="verified")
    ix.graph.add_edge("SOTA-999", "SOTA-364", type="depends_on")
    drawn = neighbourhood.figure(ix, "SOTA-364", "claims/SOTA-364.md", 1)
    assert "<title>SOTA-999: &lt;b&gt;&#34;A&#34; &amp; &#39;B&#39;&lt;/b&gt;</title>" in drawn


def test_claim_pages_rendered_ahead_by_forked_processes_are_the_pages_rendered_here(
    site_kb: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large knowledge base's export and claim pages are made by forked processes into files while MkDocs goes on;
    each page read back is the one this process renders, and its file is gone once read; the export is the same."""
    import threading

    from assay import corpus
    from assay.corpus import forking as bulk
    from assay.site import generator

    here = {d.path: d.render() for d in generator.Site(site_kb).claim_pages()}
    monkeypatch.setattr(corpus, "LARGE_FROM", 1)
    monkeypatch.setattr(threading, "active_count", lambda: 1)  # pytest-xdist's worker runs a thread of its own
    monkeypatch.setattr(bulk, "cores", lambda: 2)
    site = generator.Site(site_kb)
    try:
        assert site.ahead(tmp_path)  # the forked path is taken
        exported = site.export_file(tmp_path / "assay.json")
        pages = site.claim_pages()
        site.let_go()  # the forked processes hold the index: this one needs it no more
        assert site.ix is None
        ahead = {d.path: d.render() for d in pages}
        assert exported().read_text(encoding="utf-8") == {o.path: o for o in generator.generate(site_kb)}["assay.json"].content
    finally:
        site.close()
    assert len(here) > 2 and ahead == here
    assert [p.name for p in tmp_path.iterdir()] == ["assay.json"]  # each run of pages deleted once read


def test_the_same_records_and_ledger_give_the_same_files(site_kb: Path) -> None:
    first = [(o.path, o.content, o.title) for o in generate(site_kb)]
    assert first == [(o.path, o.content, o.title) for o in generate(site_kb)]


def test_the_claim_page_shows_the_papers_number_beside_ours(site_kb: Path) -> None:
    page = _text_outputs(site_kb)["claims/SOTA-364.md"]
    start = page.index('id="assertion-identifies-positive"')
    row = page[start : page.index("</details>", start)]
    assert (
        '<span class="assay-pair"><span class="assay-chip assay-c-8a4b00 assay-dot">direction-only</span> ours 12 % · '
        'paper 10 % <span class="assay-locator">(<a href="../sources/LIT-590.html#cited-figure-a-1">LIT-590 Figure A.1</a>)'
        "</span>: same sign as the paper&#39;s"
        '<span class="assay-differs"> differs: setting: not stated (a toy check)</span></span>'
    ) in row  # a typed pair: the same quantity at another (unstated) setting compares direction only
    assert 'href="https://arxiv.org/abs/1911.05722v3"' in page
    assert 'href="https://doi.org/10.1109/CVPR42600.2020.00975"' in page


def test_the_claim_page_opens_with_a_verdict_made_from_the_counts(site_kb: Path) -> None:
    outputs = _text_outputs(site_kb)
    assert (
        '<span class="assay-verdict-text">supported at toy scale, on CPU: 1 of 4 assertions supported, '
        "1 contradicted, 2 untested; not run on a GPU.</span>"
    ) in outputs["claims/SOTA-364.md"]
    assert (
        '<span class="assay-verdict-text">supported analytically, on CPU: 1 of 1 check supported.</span>'
        in outputs["claims/THEORY-085.md"]
    )
    assert "Nothing here is tested, and the record says why." in outputs["claims/SOTA-368.md"]


def test_every_reported_number_is_on_its_claims_page_with_its_bound_and_locator(site_kb: Path) -> None:
    page = _text_outputs(site_kb)["claims/SOTA-364.md"]
    reported = page[page.index('<h2 id="reported">') : page.index('<h2 id="checks">')]
    assert '<td data-label="Number" class="assay-reported-value">10 %</td>' in reported
    assert '<td data-label="Number" class="assay-reported-value">&gt;99.9 %</td>' in reported
    assert '<a href="../sources/LIT-590.html#cited-appendix-a-9">LIT-590 Appendix A.9</a>' in reported


def test_a_failed_check_shows_the_expectation_that_did_not_hold_with_its_numbers(site_kb: Path) -> None:
    page = _text_outputs(site_kb)["claims/SOTA-364.md"]
    check = page[page.index('id="check-shuffle-fixes"') :]
    assert "<p>Did not hold:</p><ul><li><code>key_accuracy = 0.41 fraction, expected ≤ 0.2</code></li></ul>" in check


def test_a_crash_shows_the_verifiers_frame_and_message_without_engine_frames_or_paths(site_kb: Path) -> None:
    page = _text_outputs(site_kb)["claims/SOTA-999.md"]
    error = page[page.index('<pre class="assay-error">') : page.index("</pre>", page.index('<pre class="assay-error">'))]
    assert error == (
        '<pre class="assay-error"><code>Last run (2025-01-16T10:00:00Z) ended in error: '
        "File &#34;verify/checks_bn.py&#34;, line 16, in test_cap\n    return 0.0 / zero\n"
        "ZeroDivisionError: float division by zero (see verify/checks_bn.py)</code>"
    )


def test_no_generated_page_holds_a_traceback_or_an_absolute_path(site_kb: Path) -> None:
    for path, text in _text_outputs(site_kb).items():
        if not path.endswith(".md"):
            continue  # the downloads (assay.json) are the ledger's data, not pages
        assert "Traceback" not in text, path
        assert not re.search(r"(?<![\w.:/<])/(home|usr|tmp|root|Users|opt|var)/", text), path


def test_a_stale_result_says_why(site_kb: Path) -> None:
    page = _text_outputs(site_kb)["claims/SOTA-999.md"]
    assert '<h2 id="stale">Why results are stale</h2>' in page
    assert "<li>payload on cpu: verify/checks_bn.py changed</li>" in page


def test_a_formula_in_record_text_stays_text_for_the_math_library(site_kb: Path) -> None:
    page = _text_outputs(site_kb)["claims/THEORY-085.md"]
    assert (
        '<p class="assay-math">The InfoNCE lower bound on mutual information cannot exceed \\(\\log(1+K)\\) for K negatives.</p>'
    ) in page


def test_source_pages_have_no_empty_passage_and_every_comparison_cell_filled(site_kb: Path) -> None:
    outputs = _text_outputs(site_kb)
    for path in ("sources/LIT-590.md", "sources/LIT-591.md"):
        page = outputs[path]
        for heading in re.findall(r'<h3 id="cited-[^"]*">.*?</h3>(.*?)(?=<h3|<h2|$)', page, re.S):
            assert heading.strip(), path
    compared = outputs["sources/LIT-590.md"].split('<h2 id="compared-against">')[1]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", compared, re.S)
    assert cells and all(c.strip() for c in cells)
    assert "LIT-591 Table 6" in compared and 'href="../decisions/ADR-011.html">ADR-011</a>' in compared


def test_listing_titles_and_counts_read_as_words(site_kb: Path) -> None:
    outputs = _text_outputs(site_kb)
    assert "4 claims, 2 sources, 1 decision." in outputs["index.md"]
    assert "<h1>Anthology 304: Batch statistics as a side channel</h1>" in outputs["anthologies/304.md"]
    assert not [p for p, text in outputs.items() if re.search(r"Anthology (\d+): Anthology \1", text)]


def test_code_pages_are_highlighted_with_line_anchors_the_copy_button_skips(site_kb: Path) -> None:
    page = _text_outputs(site_kb)["code/verify/checks_bn.py.md"]
    assert '<div class="highlight no-copy"><pre><code id="assay-code"><span id="L1" class="assay-line-row">' in page
    assert '<span id="test-leak"><span class="k">def</span><span class="w"> </span><span class="nf">test_leak</span>' in page


def test_record_text_with_html_is_escaped_in_every_generated_file(site_kb: Path) -> None:
    for path, text in _text_outputs(site_kb).items():
        if path.endswith(".bib"):
            continue  # BibTeX is not HTML; its escaping is export.bibtex's
        for line in text.splitlines():
            if "alert" in line:
                assert not re.search(r"<(script|img|svg)[^>]*alert|<[^>]+ on\w+=[^>]*alert", line), path
                assert 'href="javascript:' not in line, path


def test_the_record_reference_lists_every_field_with_its_description(site_kb: Path) -> None:
    page = _text_outputs(site_kb)["reference/records.md"]
    assert '<h2 id="claim">Claim</h2>' in page
    assert (
        '<td data-label="Field"><code>locator</code></td><td data-label="Type">str</td><td data-label="Required">yes</td>'
        '<td data-label="Default"></td><td data-label="Description">Section, figure, table, page or equation'
    ) in page


def test_an_empty_knowledge_base_still_has_a_dashboard_and_a_graph(tmp_path: Path) -> None:
    paths = [o.path for o in generate(tmp_path)]
    assert "index.md" in paths and "graph.md" in paths and "graph-data.js" in paths


# --- the built site ---------------------------------------------------------------------------------


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.refs: list[tuple[str, str, str]] = []  # (tag, attribute, value)
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("id", "name") and value:
                self.ids.add(value)
            if name in ("href", "src") and value is not None:
                self.refs.append((tag, name, value))
            if name.startswith("on") and value and "alert" in value:
                self.refs.append((tag, name, value))
        self._in_script = tag == "script"

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False


def _parse(path: Path) -> _Links:
    p = _Links()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def test_every_internal_link_and_anchor_resolves(built: Path) -> None:
    parsed = {p: _parse(p) for p in built.rglob("*.html")}
    broken = []
    for page, links in parsed.items():
        if page.name == "404.html":
            continue  # Material writes it with root-absolute links: a server shows it at any depth
        for tag, _, value in links.refs:
            url = urlsplit(value)
            if url.scheme or value.startswith(("//", "mailto:")) or tag not in ("a", "link", "script", "img"):
                continue
            target = (page.parent / unquote(url.path)).resolve() if url.path else page
            if not target.is_file():
                broken.append(f"{page.relative_to(built)}: {value}")
            elif url.fragment and "=" not in url.fragment and target.suffix == ".html" and url.fragment not in parsed[target].ids:
                # (a fragment with "=" is page state, e.g. graph.html#focus=SOTA-364&depth=2, read by the script)
                broken.append(f"{page.relative_to(built)}: {value} (no such anchor)")
    assert broken == []


def test_no_script_style_or_font_comes_from_the_network(built: Path) -> None:
    remote = []
    for page in built.rglob("*.html"):
        for tag, attr, value in _parse(page).refs:
            if (tag in ("script", "link", "img", "iframe", "source") or attr == "src") and re.match(r"(https?:)?//", value):
                remote.append(f"{page.relative_to(built)}: <{tag} {attr}={value}>")
    for css in built.rglob("*.css"):
        urls = re.findall(r"url\(\s*['\"]?((?:https?:)?//[^)'\"]+)", css.read_text())
        remote += [f"{css.relative_to(built)}: {u}" for u in urls]
    assert remote == []


def test_payload_records_show_as_text_in_pages(built: Path) -> None:
    page = built / "claims" / "SOTA-999.html"
    links = _parse(page)
    assert not [s for s in links.scripts if "alert" in s]
    assert not [r for r in links.refs if r[2].startswith("javascript:") or r[1].startswith("on")]
    html = page.read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(&#34;title&#34;)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(&#34;quote&#34;)&gt;" in html


def test_a_payload_claims_description_and_open_graph_tags_are_escaped_text_in_one_attribute(built: Path) -> None:
    html = (built / "claims" / "SOTA-999.html").read_text(encoding="utf-8")
    head = html[: html.index("</head>")]
    described = re.findall(r'<meta (?:name|property)="(description|og:title|og:description)" content="([^"]*)">', head)
    assert sorted(name for name, _ in described) == ["description", "og:description", "og:title"]
    assert all("&lt;script&gt;alert(&quot;title&quot;)&lt;/script&gt; &amp; &lt;b&gt;" in content for _, content in described)
    assert "<script>alert" not in head


def test_payload_records_show_as_text_in_the_search_index(built: Path) -> None:
    index = json.loads((built / "search" / "search_index.json").read_text(encoding="utf-8"))
    texts = [d["title"] + " " + d["text"] for d in index["docs"] if "SOTA-999" in d["location"]]
    assert texts and any("&lt;script&gt;" in t for t in texts)
    assert not [t for t in texts if any(p in t for p in PAYLOADS)]


def test_the_search_finds_a_claim_by_id_title_statement_and_its_sources_arxiv_id(built: Path, site_kb: Path) -> None:
    from assay.records.knowledge_base import load

    claim = load(site_kb).claims["SOTA-364"]
    index = json.loads((built / "search" / "search_index.json").read_text(encoding="utf-8"))
    docs = {d["location"]: d for d in index["docs"] if d["location"].startswith("claims/SOTA-364.html")}
    assert docs["claims/SOTA-364.html"]["title"] == "SOTA-364 Batch norm leaks the positive through batch statistics"
    assert " ".join(claim.statement.split()) in docs["claims/SOTA-364.html#statement"]["text"]
    assert "arXiv:1911.05722v3" in docs["claims/SOTA-364.html#citations"]["text"]
    assert "claims/SOTA-364.html#neighbourhood" not in docs  # the search document, not the page's markup


def test_a_page_indexed_from_its_search_document_is_rendered_in_full(built: Path) -> None:
    html = (built / "claims" / "SOTA-364.html").read_text(encoding="utf-8")
    assert '<h2 id="neighbourhood">Neighbourhood</h2>' in html and 'href="../records/SOTA-364.html"' in html


def test_the_record_is_a_listing_of_its_own_with_an_anchor_per_line_linked_from_the_checks(built: Path, site_kb: Path) -> None:
    listing = (built / "records" / "SOTA-364.html").read_text(encoding="utf-8")
    lines = (site_kb / "claims" / "SOTA-364.yaml").read_text(encoding="utf-8").splitlines()
    assert listing.count('class="l"') == len(lines)
    assert f'<span id="L1" class="l">{html_escape(lines[0], quote=False)}' in listing.replace("&#34;", '"').replace("&#39;", "'")
    assert '<a href="../claims/SOTA-364.html">SOTA-364</a>' in listing
    page = (built / "claims" / "SOTA-364.html").read_text(encoding="utf-8")
    assert re.search(r'href="\.\./records/SOTA-364\.html#L\d+" title="line \d+ of the record"', page)


def test_sidebars_rendered_once_per_folder_are_those_the_theme_renders_per_page(
    built: Path, site_kb: Path, tmp_path: Path
) -> None:
    own = tmp_path / "overrides"
    own.mkdir()
    (own / "main.html").write_text('{% extends "base.html" %}\n', encoding="utf-8")  # a knowledge base's own main.html wins
    per_page = build_site(site_kb, tmp_path, theme={"custom_dir": str(own)})
    pages = sorted(p.relative_to(built).as_posix() for p in built.rglob("*.html"))
    assert pages == sorted(p.relative_to(per_page).as_posix() for p in per_page.rglob("*.html"))

    def words(path: Path) -> str:  # the same HTML, blank lines aside (main.html renders the toc outside the cached block)
        html = re.sub(r'<script id="assay-search-gate">.*?</script>', "", path.read_text(encoding="utf-8"), flags=re.S)
        return re.sub(r"\s+", " ", html)  # and main.html's other change: the search index waits for the search box

    assert [p for p in pages if words(built / p) != words(per_page / p)] == []


def test_payload_records_show_as_text_in_the_graph_data(built: Path) -> None:
    script = (built / "graph-data.js").read_text(encoding="utf-8")
    assert "<" not in script and ">" not in script
    data = json.loads(script.removeprefix("window.ASSAY_GRAPH = ").rstrip().rstrip(";"))
    titles = {n[0]: n[1] for n in data["nodes"]}
    assert titles["SOTA-999"] == '<script>alert("title")</script> & <b>bold</b>'


def test_downloads_sit_beside_the_pages(built: Path) -> None:
    everything = json.loads((built / "assay.json").read_text(encoding="utf-8"))
    assert [c["id"] for c in everything["claims"]] == ["SOTA-364", "SOTA-368", "SOTA-999", "THEORY-085"]
    assert "@inproceedings{he2019momentum," in (built / "assay.bib").read_text(encoding="utf-8")
    assert (built / "figures" / "SOTA-364" / "leak-exists.cpu.curves.svg").is_file()


def test_the_repository_site_builds_strict(repo_site_dir: Path) -> None:
    assert (repo_site_dir / "index.html").is_file()  # build_site asserts a clean --strict build


def test_the_dashboard_counts_per_device_the_checks_with_no_result_as_the_ledger_has_them(site_kb: Path) -> None:
    from assay.overview import claim_states
    from assay.records.knowledge_base import load

    states = claim_states(load(site_kb))
    pairs = [(c.device, c.status) for st in states.values() for c in st.checks]
    page = _text_outputs(site_kb)["index.md"]
    for device in sorted({d for d, _ in pairs}):
        total = sum(d == device for d, _ in pairs)
        missing = sum(d == device and s == "not-run" for d, s in pairs)
        shown = f"<strong>{device}</strong> {total - missing} of {total}" + (f" ({missing} not run)" if missing else "")
        assert shown in page


def test_every_source_page_carries_the_citation_tags_a_reference_manager_reads(built: Path, site_kb: Path) -> None:
    from html.parser import HTMLParser

    from assay.records.knowledge_base import load

    class Meta(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.tags: list[tuple[str, str]] = []

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "meta" and (a.get("name") or "").startswith("citation_"):
                self.tags.append((a["name"], a["content"]))

    kb = load(site_kb)
    for sid, source in kb.sources.items():
        parser = Meta()
        parser.feed((built / "sources" / f"{sid}.html").read_text(encoding="utf-8"))
        names = [n for n, _ in parser.tags]
        assert ("citation_title", source.title) in parser.tags, sid
        assert [c for n, c in parser.tags if n == "citation_author"] == list(source.authors), sid
        assert "citation_publication_date" in names, sid
        if source.identifiers.arxiv:
            assert ("citation_arxiv_id", source.identifiers.arxiv) in parser.tags, sid
        if source.identifiers.doi:
            assert ("citation_doi", source.identifiers.doi) in parser.tags, sid
    claim_page = (built / "claims" / "SOTA-364.html").read_text(encoding="utf-8")
    assert 'name="citation_title"' not in claim_page  # only sources are works to cite


ENGINE_FRAME_ONLY = '  File "/opt/venv/lib/python3.11/site-packages/_pytest/runner.py", line 341, in call\n    result = func()\n'


@pytest.mark.parametrize("message", ["", "\n  \n", ENGINE_FRAME_ONLY])  # the last: nothing left once engine frames go
def test_a_last_error_that_says_nothing_reads_as_its_kind_alone_on_the_claim_page(kb_root: Path, message: str) -> None:
    path = write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    data = json.loads(path.read_text())
    data["last_error"] = {"kind": "crash", "message": message, "finished": "2026-01-02T00:00:00Z"}
    path.write_text(json.dumps(data))
    page = _text_outputs(kb_root)["claims/THEORY-085.md"]
    assert '<pre class="assay-error"><code>Last run (2026-01-02T00:00:00Z) ended in crash</code></pre>' in page
