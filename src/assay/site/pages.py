"""The record pages: one per claim, source, decision, anthology and tag, and their index pages.

Each function returns a ``Page``: a docs-relative path, a plain-text title and an HTML body in which
every record field is escaped (see ``markup``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from assay import status as vocab
from assay.export import bibtex
from assay.loader import Unreadable, read_regular
from assay.model import Claim, Decision, Source
from assay.results import Environment
from assay.site import neighbourhood, search
from assay.site.markup import (
    anchor,
    chip,
    esc,
    href,
    legend,
    link,
    number,
    paragraphs,
    plain_chip,
    record_doc,
    record_link,
    table,
)
from assay.site.views import ClaimView, SiteIndex
from assay.status import CheckState


@dataclass(frozen=True)
class Page:
    """A generated page: where it goes, its title, its HTML, and whether the navigation lists it."""

    path: str
    title: str
    html: str
    in_nav: bool = False
    search: str | None = None  # what the search index holds for it (see ``search``); None: its HTML


@dataclass(frozen=True)
class Options:
    """Choices of the site that are not in the records."""

    edit_url: str | None = None  # e.g. "https://github.com/org/kb/edit/main/{path}" ({line} optional)
    depth: int = 2  # the deepest neighbourhood drawn on a claim page; the graph page goes deeper


def _h1(record_id: str, title: str) -> str:
    return f'<h1 id="{esc(anchor(record_id))}"><span class="assay-id">{esc(record_id)}</span> {esc(title)}</h1>'


def _section(slug: str, title: str, body: str) -> str:
    return f'<h2 id="{slug}">{esc(title)}</h2>{body}' if body else ""


def _ul(items: list[str], cls: str = "") -> str:
    return f'<ul class="{cls}">' + "".join(f"<li>{i}</li>" for i in items) + "</ul>" if items else ""


def _arxiv(source: Source) -> str:
    return f"https://arxiv.org/abs/{source.identifiers.arxiv}" if source.identifiers.arxiv else ""


def _external(url: str, text: str) -> str:
    return f'<a class="assay-external" href="{esc(url)}">{esc(text)}</a>'


def _source_links(source: Source | None) -> list[str]:
    if source is None:
        return []
    ids = source.identifiers
    out = []
    if ids.arxiv:
        out.append(_external(_arxiv(source), f"arXiv:{ids.arxiv}"))
    if ids.doi:
        out.append(_external(f"https://doi.org/{ids.doi}", f"doi:{ids.doi}"))
    if ids.url:
        out.append(_external(ids.url, "web"))
    if ids.code:
        out.append(_external(ids.code, "code"))
    return out


# --- claim ----------------------------------------------------------------------------------------


def claim_page(ix: SiteIndex, view: ClaimView, options: Options) -> Page:
    claim, here = view.claim, record_doc(view.claim.id)
    body = [
        _h1(claim.id, claim.title),
        _claim_chips(view),
        legend("Claim", "Check", "Closure", "Freshness"),
        _section("statement", "Statement", _statement(claim)),
        _section("conditions", "Conditions", _ul([esc(c) for c in claim.conditions])),
        _section("citations", "Citations", _citations(ix, view, here)),
        _section("checks", "Checks", _checks(ix, view, here, options)),
        _section("stale", "Why results are stale", _stale(view)),
        _section("relations", "Relations", _relations(ix, claim.id, here, claim)),
        _section("discrepancies", "Discrepancies", _discrepancies(ix, claim, here)),
        _section("neighbourhood", "Neighbourhood", neighbourhood.figure(ix, claim.id, here, options.depth)),
        _section("record", "Record", _record_source(ix.kb.root, view.loaded, options)),
    ]
    return Page(here, f"{claim.id} {claim.title}", "".join(body), search=search.claim(ix, view))


def device_status(view: ClaimView, device: str) -> str:
    return vocab.combine_devices([c.status for c in view.state.checks if c.device == device])


def _claim_chips(view: ClaimView) -> str:
    st = view.state
    chips = [chip(vocab.CLAIM[st.status]), chip(vocab.CLOSURE[st.closure]),
             chip(vocab.FRESHNESS[view.freshness], prefix="freshness: ")]
    chips += [plain_chip(f"tier: {t}", "evidence tier of a check") for t in view.tiers]
    devices = sorted({c.device for c in st.checks})
    chips += [chip(vocab.CHECK[device_status(view, d)], prefix=f"{d}: ") for d in devices]
    return f'<p class="assay-chips">{"".join(chips)}</p>'


def _statement(claim: Claim) -> str:
    out = f'<blockquote class="assay-statement">{paragraphs(claim.statement)}</blockquote>'
    if claim.refined and claim.refined != claim.statement:
        out += f'<p class="assay-label">As our checks found it to hold</p><blockquote class="assay-refined">{paragraphs(claim.refined)}</blockquote>'
    if not claim.checks and claim.no_check_reason:
        out += f'<p class="assay-no-check">No check: {esc(claim.no_check_reason)}</p>'
    return out


def _citations(ix: SiteIndex, view: ClaimView, here: str) -> str:
    items = []
    for i, cit in enumerate(view.claim.citations):
        source = ix.sources.get(cit.source)
        where = link(here, f"sources/{cit.source}.md#cited-{anchor(cit.locator)}", cit.locator) if source else esc(cit.locator)
        head = [record_link(here, cit.source, source.title if source else None) if source else esc(cit.source), where]
        head += _source_links(source) + [_line_link(view, ("citations", i))]
        note = f'<p class="assay-note">{esc(cit.note)}</p>' if cit.note else ""
        items.append(f'<li id="citation-{i + 1}"><p>{" · ".join(head)}</p>'
                     f"<blockquote><p>{esc(cit.quote)}</p></blockquote>{note}</li>")
    return '<ol class="assay-citations">' + "".join(items) + "</ol>"


def _line_link(view: ClaimView, loc: tuple) -> str:
    line, _ = view.loaded.where(loc)
    return f'<a class="assay-line" href="#yaml-L{line}" title="line {line} of the record">{esc(view.loaded.path)}:{line}</a>'


def _checks(ix: SiteIndex, view: ClaimView, here: str, options: Options) -> str:
    return "".join(_check(ix, view, i, here) for i, _ in enumerate(view.claim.checks))


def _check(ix: SiteIndex, view: ClaimView, i: int, here: str) -> str:
    check = view.claim.checks[i]
    states = [s for s in view.state.checks if s.check == check.id]
    reported = {r.id: r for r in view.claim.reported}
    module, _, func = check.verifier.partition("::")
    code = link(here, f"code/{module}.md#{anchor(func)}", check.verifier)
    parts = [f'<h3 id="check-{esc(check.id)}">{esc(check.id)}</h3>',
             f'<p class="assay-tests">{esc(check.tests)}</p>',
             f'<p class="assay-chips">{plain_chip("tier: " + check.tier)}'
             + "".join(chip(vocab.CHECK[s.status], prefix=f"{s.device}: ") for s in states)
             + f"</p><p>Verifier: {code} · {_line_link(view, ('checks', i))}</p>"]
    if check.known_failing:
        parts.append(f'<p class="assay-known-failing">Declared known-failing: {esc(check.known_failing)}</p>')
    if check.note:
        parts.append(f'<p class="assay-note">{esc(check.note)}</p>')
    rows = []
    for s in states:
        evaluated = {e.metric: e for e in (s.result.expectation if s.result else [])}
        for exp in check.expect:
            got = evaluated.get(exp.metric)
            paper = reported.get(exp.reported) if exp.reported else None
            paper_cell = "—"
            if paper:
                paper_cell = (f"{number(paper.value)} {esc(paper.unit)} "
                              f'<span class="assay-locator">({link(here, f"sources/{paper.source}.md#cited-{anchor(paper.locator)}", paper.locator)})</span>')
            holds = got.holds if got else None
            mark = "—" if holds is None else ("holds" if holds else "does not hold")
            rows.append([esc(s.device), chip(vocab.CHECK[s.status]), f"<code>{esc(exp.metric)}</code>", paper_cell,
                         number(got.measured if got else None), f"<code>{esc(str(exp))}</code>",
                         f'<span class="assay-holds-{str(holds).lower()}">{mark}</span>'])
    parts.append(table(["Device", "Verdict", "Metric", "Paper", "Ours", "Expectation", "Holds"], rows, "assay-check-table"))
    parts += [_run_details(s, here) for s in states if s.result or s.problem]
    return '<div class="assay-check">' + "".join(parts) + "</div>"


def _run_details(s: CheckState, here: str) -> str:
    """One device's run: its environment, limits used, the last error beside the measurement, flags, figures."""
    summary = f'<summary>Run on {esc(s.device)}</summary>'
    if s.result is None:  # the ledger file is there and unreadable
        problem = s.problem.message if s.problem else "no result"
        return f'<details class="assay-run" open>{summary}<p class="assay-error">The ledger file cannot be read: {esc(problem)}</p></details>'
    r = s.result
    rows = [("Verdict", chip(vocab.CHECK[r.verdict]) + (" (last measurement)" if r.last_error else "")),
            ("Environment", esc(environment_text(r.environment))),
            ("Duration", f"{number(r.duration_s)} s" + (f" ({number(r.cpu_s)} s CPU)" if r.cpu_s is not None else "")),
            ("Peak memory", f"{number(r.peak_memory_mb)} MB" if r.peak_memory_mb is not None else "—"),
            ("Finished", esc(r.finished))]
    dl = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    notes = []
    if r.last_error:
        notes.append(f'<p class="assay-error">Last run ({esc(r.last_error.finished)}) ended in {esc(r.last_error.kind)}: '
                     f'{esc(r.last_error.message)}</p>')
    if s.off_lock:
        notes.append(f'<p class="assay-off-lock">{chip(vocab.FLAGS["off-lock"])} {esc("; ".join(s.off_lock))}</p>')
    if r.unstable:
        notes.append(f'<p class="assay-unstable">{chip(vocab.FLAGS["unstable"])} verdicts with the same inputs: '
                     f'{esc(" → ".join(r.unstable.verdicts))} (since {esc(r.unstable.since)})</p>')
    if s.stale:
        notes.append(f'<p class="assay-stale">Stale: {esc("; ".join(s.stale))}</p>')
    message = f'<pre class="assay-message"><code>{esc(r.message)}</code></pre>' if r.message and r.verdict != "error" else ""
    figures = "".join(
        f'<figure class="assay-figure"><img src="{esc(href(here, f"figures/{s.claim}/{fig.file}"))}" '
        f'alt="{esc(fig.caption or fig.name)}" loading="lazy"><figcaption>{esc(fig.caption or fig.name)}</figcaption></figure>'
        for fig in r.figures)
    return f'<details class="assay-run" open>{summary}<dl class="assay-dl">{dl}</dl>{"".join(notes)}{message}{figures}</details>'


def environment_text(env: Environment) -> str:
    """The machine of a result in one line: Python, torch and its build, CPU, BLAS, GPU."""
    bits = [f"Python {env.python}", f"torch {env.packages.get('torch', '?')} ({env.torch_build})",
            f"{env.cpu_model}" + (f" ({env.cpu_capability})" if env.cpu_capability else ""),
            f"{env.cores} cores, {env.threads} thread(s)"]
    if env.blas:
        bits.append("BLAS " + ", ".join(env.blas))
    if env.gpu:
        bits.append(f"GPU {env.gpu.name}" + (f", driver {env.gpu.driver}" if env.gpu.driver else ""))
    return "; ".join(bits)


def _stale(view: ClaimView) -> str:
    items = [f"<code>{esc(s.check)}</code> on {esc(s.device)}: {esc('; '.join(s.stale))}" for s in view.state.stale]
    return _ul(items)


def _relations(ix: SiteIndex, rid: str, here: str, claim: Claim | None) -> str:
    rows = []
    for rel in claim.relations if claim else []:
        target = record_link(here, rel.target, ix.titles.get(rel.target)) if rel.target in ix.titles else f"{esc(rel.target)} (missing)"
        rows.append([esc(rel.type.replace("_", " ")), target, esc(rel.note or "")])
    for back in ix.backlinks.get(rid, []):
        rows.append([esc(f"{back.type.replace('_', ' ')} (from)"), record_link(here, back.source, ix.titles.get(back.source)), esc(back.note or "")])
    return table(["Relation", "Record", "Note"], rows) if rows else ""


def _discrepancies(ix: SiteIndex, claim: Claim, here: str) -> str:
    items = []
    for d in claim.discrepancies:
        where = link(here, f"sources/{d.source}.md#cited-{anchor(d.locator)}", f"{d.source} {d.locator}")
        items.append(f"<p><strong>Filed:</strong> {esc(d.filed)}</p><p><strong>The source says</strong> ({where}): {esc(d.source_says)}</p>")
    return _ul(items, "assay-discrepancies")


def _record_source(root: Path, loaded, options: Options) -> str:
    edit = ""
    if options.edit_url:
        edit = f" · {_external(options.edit_url.format(path=loaded.path, line=1), 'edit')}"
    try:
        text = read_regular(root, root / loaded.path).decode("utf-8", "replace")
    except Unreadable:
        text = ""
    lines = "".join(f'<span id="yaml-L{n}" class="assay-line-row"><span class="assay-ln">{n}</span>{esc(line)}\n</span>'
                    for n, line in enumerate(text.splitlines(), 1))
    return (f"<p><code>{esc(loaded.path)}</code>{edit}</p>"
            f'<details class="assay-yaml" data-search-exclude><summary>The YAML record</summary>'
            f'<pre class="assay-source"><code>{lines}</code></pre></details>')


# --- source ---------------------------------------------------------------------------------------


def source_page(ix: SiteIndex, source: Source) -> Page:
    here = record_doc(source.id)
    meta = [("Kind", esc(source.kind)), ("Authors", esc(", ".join(source.authors))), ("Year", esc(source.year))]
    if source.date:
        meta.append(("Date", esc(source.date)))
    if source.venue:
        meta.append(("Venue", esc(source.venue)))
    meta.append(("Identifiers", " · ".join(_source_links(source))))
    if source.anthology:
        a = source.anthology
        meta.append(("Anthology", link(here, f"anthologies/{a.number}.md", f"Anthology {a.number}, unit {a.unit}")))
    if source.tags:
        meta.append(("Tags", " ".join(link(here, f"tags/{t}.md", t) for t in source.tags)))
    dl = '<dl class="assay-dl">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in meta) + "</dl>"
    body = [
        _h1(source.id, source.title), dl,
        _section("bibtex", "BibTeX", f'<pre class="assay-bibtex"><code>{esc(bibtex(source))}</code></pre>'),
        _section("takeaways", "Takeaways", _ul([esc(t) for t in source.takeaways])),
        _section("note", "Note", f"<p>{esc(source.note)}</p>" if source.note else ""),
        _section("cited-passages", "Cited passages", _passages(ix, source, here)),
        _section("claims", "Claims that cite it", _citing_claims(ix, source, here)),
        _section("compared-against", "Compared against", _comparisons(ix, source, here)),
    ]
    return Page(here, f"{source.id} {source.title}", "".join(body), search=search.source(ix, source))


def _passages(ix: SiteIndex, source: Source, here: str) -> str:
    """Every place in the source that a claim cites or takes a number from, one anchor per locator."""
    groups: dict[str, tuple[set[str], list]] = {}
    for p in ix.cited_by.get(source.id, []):
        entry = groups.setdefault(anchor(p.locator), (set(), []))
        entry[0].add(p.locator)
        entry[1].append(p)
    for locator in ix.located.get(source.id, ()):
        groups.setdefault(anchor(locator), (set(), []))[0].add(locator)
    out = []
    for slug, (locators, passages) in sorted(groups.items()):
        quotes = "".join(f'<blockquote><p>{esc(p.quote)}</p></blockquote><p class="assay-note">cited by {record_link(here, p.claim)}</p>'
                         for p in passages)
        out.append(f'<h3 id="cited-{esc(slug)}">{esc(", ".join(sorted(locators)))}</h3>{quotes}')
    return "".join(out)


def _citing_claims(ix: SiteIndex, source: Source, here: str) -> str:
    ids = sorted({p.claim for p in ix.cited_by.get(source.id, [])})
    rows = [[record_link(here, c), esc(ix.claims[c].claim.title), chip(vocab.CLAIM[ix.claims[c].state.status])] for c in ids]
    return table(["Claim", "Title", "Status"], rows) if rows else ""


def _comparisons(ix: SiteIndex, source: Source, here: str) -> str:
    rows = [[record_link(here, c.source, ix.titles.get(c.source)), esc(c.locator), esc(c.reason),
             record_link(here, c.decision) if c.decision in ix.decisions else esc(c.decision)]
            for c in source.compared_against]
    rows += [[f"{record_link(here, b.source, ix.titles.get(b.source))} (compares itself with this one)", "", esc(b.note or ""), ""]
             for b in ix.backlinks.get(source.id, []) if b.type == "compared_against"]
    return table(["Source", "Where", "Why", "Governed by"], rows) if rows else ""


# --- decisions, anthologies, tags, indexes -------------------------------------------------------


def decision_page(ix: SiteIndex, d: Decision) -> Page:
    here = record_doc(d.id)
    governed = [f"{record_link(here, a)} compared against {record_link(here, b)}" for a, b in sorted(ix.governs.get(d.id, []))]
    body = [_h1(d.id, d.title), f'<p class="assay-chips">{plain_chip(d.status)}{plain_chip(d.date)}</p>',
            _section("context", "Context", paragraphs(d.context)),
            _section("decision", "Decision", paragraphs(d.decision)),
            _section("consequences", "Consequences", paragraphs(d.consequences)),
            _section("governs", "Links it governs", _ul(governed))]
    return Page(here, f"{d.id} {d.title}", "".join(body))


def decisions_index(ix: SiteIndex) -> Page:
    here = "decisions/index.md"
    rows = [[record_link(here, d.id), esc(d.title), esc(d.status), esc(d.date)] for d in ix.decisions.values()]
    rows.sort(key=lambda r: r[0])
    return Page(here, "Decisions", "<h1>Decisions</h1>" + table(["Id", "Decision", "Status", "Date"], rows), True)


def sources_index(ix: SiteIndex) -> Page:
    here = "sources/index.md"
    rows = [[record_link(here, s.id), esc(s.title), esc(", ".join(s.authors[:3]) + (" et al." if len(s.authors) > 3 else "")),
             esc(s.year), esc(len({p.claim for p in ix.cited_by.get(s.id, [])}))] for _, s in sorted(ix.sources.items())]
    dl = f'<p>Download: {link(here, "assay.bib", "BibTeX of every source")} · {link(here, "assay.json", "the knowledge base as JSON")}</p>'
    return Page(here, "Sources", "<h1>Sources</h1>" + dl + table(["Id", "Title", "Authors", "Year", "Claims"], rows), True,
                search=search.listing(f"{len(rows)} sources, with BibTeX and JSON downloads"))


def anthology_pages(ix: SiteIndex) -> list[Page]:
    pages, rows = [], []
    for anthology_no in sorted(ix.anthologies):
        here, title = f"anthologies/{anthology_no}.md", ix.anthology_title(anthology_no)
        units = [[esc(s.anthology.unit if s.anthology else ""), record_link(here, s.id), esc(s.title), esc(s.year)]
                 for s in ix.anthologies[anthology_no]]
        pages.append(Page(here, f"Anthology {anthology_no}: {title}",
                          f'<h1>Anthology {anthology_no}: {esc(title)}</h1>' + table(["Unit", "Source", "Title", "Year"], units)))
        rows.append([link("anthologies/index.md", here, str(anthology_no)), esc(title), esc(len(units))])
    pages.append(Page("anthologies/index.md", "Anthologies",
                      "<h1>Anthologies</h1>" + table(["Number", "Title", "Units"], rows), True))
    return pages


def tag_pages(ix: SiteIndex) -> list[Page]:
    pages, items = [], []
    for tag in sorted(ix.tags):
        here = f"tags/{tag}.md"
        rows = [[record_link(here, rid), esc(ix.titles.get(rid, rid)), _status_cell(ix, rid)] for rid in ix.tags[tag]]
        pages.append(Page(here, f"Tag: {tag}", f'<h1>Tag: {esc(tag)}</h1>' + table(["Record", "Title", "Status"], rows),
                          search=search.listing(f"{len(rows)} records tagged {tag}")))
        items.append(f'{link("tags/index.md", here, tag)} <span class="assay-count">{len(rows)}</span>')
    pages.append(Page("tags/index.md", "Tags", "<h1>Tags</h1>" + _ul(items, "assay-tag-list"), True))
    return pages


def _status_cell(ix: SiteIndex, rid: str) -> str:
    return chip(vocab.CLAIM[ix.claims[rid].state.status]) if rid in ix.claims else ""


def invalid_page(loaded) -> Page:
    """A page for a record that does not validate, so links to it still land somewhere."""
    diags = _ul([f"<code>{esc(d.render())}</code>" for d in loaded.diagnostics])
    return Page(record_doc(loaded.id), f"{loaded.id} (invalid)",
                _h1(loaded.id, "(does not validate)") + f"<p><code>{esc(loaded.path)}</code></p>{diags}")


def code_page(root: Path, module: str) -> Page:
    """A verifier module's source with line anchors, and an anchor at each function.

    The module is read by ``read_regular``'s rule: a link leading outside the knowledge base (to a secret),
    a FIFO or an oversized file gets a page that says it is not shown, never its content.
    """
    try:
        text = read_regular(root, root / module).decode("utf-8", "replace")
    except Unreadable as e:
        return Page(f"code/{module}.md", module, f"<h1>{esc(module)}</h1>"
                    f'<p class="assay-unreadable">{esc(module)} {esc(e)}; it is not shown.</p>')
    rows, seen = [], set()
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        name = stripped[4:].split("(")[0].strip() if stripped.startswith("def ") else ""
        fid = f' id="{esc(anchor(name))}"' if name and anchor(name) not in seen else ""
        seen.add(anchor(name))
        rows.append(f'<span id="L{n}" class="assay-line-row"><span class="assay-ln">{n}</span><span{fid}>{esc(line)}</span>\n</span>')
    return Page(f"code/{module}.md", module, f"<h1>{esc(module)}</h1>" + f'<pre class="assay-source"><code>{"".join(rows)}</code></pre>')
