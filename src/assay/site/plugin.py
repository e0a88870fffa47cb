"""The MkDocs plugin (``plugins: - assay``): hands the generator's pages and files to MkDocs.

Generated pages carry finished HTML, so the plugin skips Markdown for them: ``on_page_markdown``
returns nothing to convert and ``on_page_content`` puts the HTML back. This keeps the per-page cost
of a 10,000-claim build small, and keeps record text away from the Markdown engine.

A claim's page is rendered only when MkDocs comes to build it (``on_page_context``), and let go once written
(``on_post_page``): a build holds one claim's page and state at a time (``generator.Site``). The export,
``assay.json``, is written a claim at a time to a file MkDocs copies.

A record page also carries a small search document (``assay.site.search``): for the search plugin's
turn (``on_page_context``) the page holds that document, and its full HTML again before the theme
renders it, so the index is built from the words of the record, not from the markup around them.

The theme's navigation sidebars are the costliest part of rendering a page in the theme. For a
generated page outside the navigation they are the same for every page of its folder, so the plugin's
``main.html`` (``site/theme/``) takes them from ``assay_once``, which renders them once per folder.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from markupsafe import Markup
from mkdocs.config import config_options as c
from mkdocs.config.base import Config
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.pages import Page
from mkdocs.structure.toc import get_toc

from assay.files import Unreadable, refuse_link_out, resolve_inside
from assay.site import Options, Output, search
from assay.site.generator import Deferred, Site

ASSETS = Path(__file__).parent / "assets"
THEME = Path(__file__).parent / "theme"  # main.html: Material's, with the sidebars rendered once per folder


def engine_assets() -> list[tuple[str, Path]]:
    """The engine's stylesheet, scripts and vendored graph renderer (with their licences), docs-relative."""
    return sorted((f"assets/{p.relative_to(ASSETS).as_posix()}", p) for p in ASSETS.rglob("*") if p.is_file())


class GeneratedPage(Page):
    """A generated page outside the navigation: finished HTML, so nothing to convert. MkDocs makes a Markdown
    converter with every extension for each page it renders (about a third of a millisecond each); this one
    makes none, and leaves its anchors unchecked as MkDocs does for a page it has not rendered."""

    def render(self, config: Any, files: Any) -> None:
        self.content = ""  # on_page_content puts the page's HTML in


class AssayConfig(Config):
    root = c.Optional(c.Type(str))  # the knowledge base; default: the folder of mkdocs.yml
    edit_url = c.Optional(c.Type(str))  # e.g. https://github.com/org/kb/edit/main/{path}
    depth = c.Type(int, default=2)  # deepest neighbourhood on a claim page


class AssayPlugin(BasePlugin[AssayConfig]):
    """Adds every generated page and download to the build; MkDocs renders them in the theme."""

    def __init__(self) -> None:
        self.pages: dict[str, Output] = {}
        self.deferred: dict[str, Deferred] = {}  # a claim's page, rendered when MkDocs builds it
        self.scratch: tempfile.TemporaryDirectory | None = None  # assay.json for MkDocs to copy; pages rendered ahead
        self.site: Site | None = None
        self.export: Any = None  # waits for assay.json to be written
        self.held: dict[str, str] = {}  # a page's HTML while the search plugin reads its search document
        self.in_nav: set[str] = set()  # src_uri of every page the navigation lists
        self.once: dict[tuple, str] = {}  # (block, folder, hidden parts) -> the block's HTML
        self.words: dict[str, str] = {}  # a page's URL -> the words of its statement, for its search entry
        self.root = Path()  # the knowledge base (on_config): the folder of mkdocs.yml, or its ``root``

    def on_config(self, config: Any) -> Any:
        base = Path(config.config_file_path or ".").resolve().parent
        self.root = (base / self.config.root).resolve() if self.config.root else base
        _refuse_links_out(base, config)
        _refuse_outside_links(base, Path(config.docs_dir))
        dirs = config.theme.dirs
        if str(THEME) not in dirs:
            dirs.insert(1 if config.theme.custom_dir else 0, str(THEME))
        return config

    def on_files(self, files: Files, *, config: Any) -> Files:
        self.on_shutdown()  # a rebuild under `mkdocs serve` starts afresh
        site = self.site = Site(self.root, Options(edit_url=self.config.edit_url, depth=self.config.depth))
        self.scratch = tempfile.TemporaryDirectory(prefix="assay-site-")
        folder = Path(self.scratch.name)
        # first, so that the export and the claim pages are made (ahead, on the other cores) while the rest is made here
        site.ahead(folder)
        self.export = site.export_file(folder / "assay.json")
        self.deferred = {d.path: d for d in site.claim_pages()}
        outputs = site.outputs()
        self.pages = {o.path: o for o in outputs if o.title is not None}
        for o in outputs:
            inclusion = InclusionLevel.INCLUDED if o.in_nav or o.title is None else InclusionLevel.NOT_IN_NAV
            files.append(File.generated(config, o.path, content=o.content, inclusion=inclusion))
        for path in self.deferred:
            files.append(File.generated(config, path, content="", inclusion=InclusionLevel.NOT_IN_NAV))
        files.append(File.generated(config, "assay.json", abs_src_path=str(folder / "assay.json")))
        site.let_go()  # the forked processes hold the index from here on, where there are any
        for rel, path in engine_assets():
            if files.get_file_from_path(rel) is None:  # a knowledge base may override any of them in its docs_dir
                files.append(File.generated(config, rel, abs_src_path=str(path)))
        return files

    def on_shutdown(self) -> None:
        if self.site is not None:
            self.site.close()
            self.site = None
        if self.scratch is not None:
            self.scratch.cleanup()
            self.scratch = None

    def on_nav(self, nav: Any, *, config: Any, files: Any) -> Any:
        self.in_nav = {p.file.src_uri for p in nav.pages}
        self.once = {}
        for uri in [*self.pages, *self.deferred]:
            f = files.get_file_from_path(uri)
            if f is not None and uri not in self.in_nav:  # MkDocs made it a plain Page, as it does every page
                GeneratedPage(None, f, config)  # outside the navigation, that nothing else holds
        return nav

    def on_env(self, env: Any, *, config: Any, files: Any) -> Any:
        env.globals["assay_once"] = self._once
        if self.export is not None:
            self.export()  # written by now: MkDocs copies the files next
        return env

    def _once(self, block: str, page: Any, render: Any, title: str | None = None) -> str:
        """The theme's ``block`` for ``page``: rendered once per folder for a generated page outside the
        navigation (its navigation sidebar, header, footer, configuration and links to styles and scripts differ
        only in the relative links; main.html renders the table of contents per page); rendered as usual for any
        other page. ``title``: the page's
        title, which the block shows once (the header's): the folder's block is kept around it, and each page's
        own put in, or the block rendered for each page where the title is not found in it exactly once."""
        uri = page.file.src_uri if page is not None else None
        if (uri not in self.pages and uri not in self.deferred) or uri in self.in_nav:
            return render()
        key = (block, page.url.rpartition("/")[0], tuple(page.meta.get("hide", ())))
        if key not in self.once:
            html = render()
            self.once[key] = html if title is None else _around(html, str(title))
            return html
        kept = self.once[key]
        if title is None:
            return kept
        return render() if kept is None else kept[0] + Markup(str(title)) + kept[1]

    @event_priority(100)
    def on_page_markdown(self, markdown: str, *, page: Any, config: Any, files: Any) -> str:
        later = self.deferred.get(page.file.src_uri)
        if later is not None:  # a claim's page: its title now, the rest when it is built
            page.meta["title"], page.meta["hide"] = later.title, ["navigation"]
            boost = search.boost(later.path)
            if boost is not None:
                page.meta["search"] = {"boost": boost}
            return ""
        out = self.pages.get(page.file.src_uri)
        if out is None:
            return markdown
        page.meta["title"] = out.title
        # a record page outside the navigation gives the navigation sidebar's width to its content
        page.meta["hide"] = [] if out.in_nav else ["navigation"]
        if not out.toc:
            page.meta["hide"].append("toc")
        if out.search_boost is not None:  # Material's search reads a page's weight from here
            page.meta["search"] = {"boost": out.search_boost}
        return ""

    @event_priority(100)
    def on_page_content(self, html: str, *, page: Any, config: Any, files: Any) -> str:
        later = self.deferred.get(page.file.src_uri)
        if later is not None:
            page.title = later.title
            return ""
        out = self.pages.get(page.file.src_uri)
        if out is None:
            return html
        page.title = out.title
        page.toc = _toc(out)
        return str(out.content)

    @event_priority(100)  # before the search plugin (priority 0) indexes page.content
    def _search_document_in(self, context: Any, *, page: Any, config: Any, nav: Any) -> Any:
        later = self.deferred.get(page.file.src_uri)
        if later is not None:  # rendered now; let go in on_post_page
            out = self.pages[page.file.src_uri] = later.render()
            page.content, page.toc = out.content, _toc(out)
        out = self.pages.get(page.file.src_uri)
        if out is not None:  # the theme writes the page's own description in place of the site's, as it is given:
            # MkDocs renders its theme without autoescape, so the text goes in escaped (a title may hold quotes, markup)
            page.meta.update({name: Markup(escape(content)) for name, content in out.meta if name == "description"})
        if out is not None and out.search is not None:
            self.held[page.file.src_uri] = page.content
            page.content = out.search
        if out is not None and out.search_words:
            self.words[page.url] = out.search_words
        return context

    @event_priority(-100)  # after it, before the theme renders the page
    def _page_html_back(self, context: Any, *, page: Any, config: Any, nav: Any) -> Any:
        if page.file.src_uri in self.held:
            page.content = self.held.pop(page.file.src_uri)
        return context

    on_page_context = CombinedEvent(_search_document_in, _page_html_back)

    @event_priority(-50)  # after the search plugin writes its index (priority 0), before offline copies it (-100)
    def on_post_build(self, *, config: Any) -> None:
        """Each claim's statement into its own entry of the search index, in a field weighed near its title
        (``search.STATEMENT``): the search plugin builds an entry's fields from the page's HTML, and a heading's
        words are the only ones it weighs."""
        index = Path(config.site_dir) / "search" / "search_index.json"
        if self.words and index.is_file():
            index.write_text(search.with_statements(index.read_text(encoding="utf-8"), self.words), encoding="utf-8")

    def on_post_page(self, output: str, *, page: Any, config: Any) -> str:
        """A page's own ``<meta>`` tags (a source's citation_* tags) into its head, whatever theme renders it. A
        claim's page is let go here, once written."""
        if page.file.src_uri in self.deferred:
            out = self.pages.pop(page.file.src_uri, None)
            page.content, page.toc = None, get_toc([])
        else:
            out = self.pages.get(page.file.src_uri)
        if out is None or "</head>" not in output:
            return output
        output = chrome_collapsed(output)
        tags = "".join(_meta(name, content) for name, content in out.meta if name != "description")
        head, _, rest = output.partition("</head>")
        return f"{head}{tags}</head>{rest}"

    def on_post_template(self, output_content: str, *, template_name: str, config: Any) -> str:
        """``404.html`` for any depth: MkDocs writes it with root-absolute links (a server sends it for any path), which
        from disk lead to the file system's root and leave the page unstyled. Its links are made relative to the site's
        root, where it stands, and a server's copy (sent for ``claims/SOTA-999.html`` or ``a/b/c.html``) takes the site's
        root path from ``site_url`` as its base before any link is read."""
        if template_name != "404.html":
            return output_content
        return not_found_page(output_content, urlsplit(config.site_url or "").path or "/")

    def on_serve(self, server: Any, *, config: Any, builder: Any) -> Any:
        for folder in ("claims", "sources", "decisions", "results", "verify"):
            if (self.root / folder).is_dir():
                server.watch(str(self.root / folder))
        return server


def _around(html: Any, title: str) -> tuple[Markup, Markup] | None:
    """The block's HTML before and after the one place it shows ``title``; None where it shows it not once."""
    parts = str(html).split(title)
    return (Markup(parts[0]), Markup(parts[1])) if len(parts) == 2 and title else None


def _toc(out: Output) -> Any:
    """The table of contents from the page's own sections (its HTML never went through Markdown's toc)."""
    return get_toc([{"level": 2, "id": slug, "name": escape(title), "children": []} for slug, title in out.toc])


def _meta(name: str, content: str) -> str:
    """A ``<meta>`` tag: Open Graph's by ``property`` (as its protocol names them), any other by ``name``."""
    key = "property" if name.startswith("og:") else "name"
    return f'<meta {key}="{escape(name)}" content="{escape(content)}">\n'


_BLANK = re.compile(r"\n\s*\n|\n[ \t]+")


def chrome_collapsed(html: str) -> str:
    """``html`` with the theme's indentation and blank lines (some 4 KB a page) left out of the parts around the
    page's own content (head, header, navigation, footer), which hold no ``<pre>``; the content is kept as it is."""
    start, end = html.find('<div class="md-content"'), html.rfind("</article>")
    if start < 0 or end < start:
        return html
    return _BLANK.sub("\n", html[:start]) + html[start:end] + _BLANK.sub("\n", html[end:])


def not_found_page(html: str, root: str) -> str:
    """The 404 page for any depth. Its links are made relative to the site's root, where it stands; served over HTTP
    (for ``claims/SOTA-999.html``, ``a/b/c.html``) a ``<base>`` of the site's root path is written first in its head,
    and the theme's configuration takes the same root (Material reads its ``base`` against the page's address). Each
    stylesheet and script is written by a script after that ``<base>``: a browser fetches the tags it sees in the
    markup ahead of the parser, against the page's own address, before any script could set the base."""
    served = "location.protocol !== 'file:'"
    path = _js(root.rstrip("/") + "/")
    base = f"<script>if ({served}) document.write('<base href=\"' + {path} + '\">');</script>"
    config = (
        f"<script>if ({served}) {{ var c = document.getElementById('__config'), j = JSON.parse(c.textContent); "
        f"j.base = {path}; c.textContent = JSON.stringify(j); }}</script>"
    )
    head, sep, rest = relative_links(html).partition("<head>")
    if not sep:
        return html
    rest = _RESOURCE.sub(lambda m: f"<script>document.write({_js(m.group(0))});</script>", rest)
    page = f"{head}{sep}{base}{rest}"
    at = page.find("</script>", page.find('<script id="__config"'))
    return page[: at + 9] + config + page[at + 9 :] if '<script id="__config"' in page else page


#: A stylesheet, icon or script tag that fetches a file of the site by a relative link.
_RESOURCE = re.compile(r'<link [^>]*href="(?![a-z]+:|/)[^"]*"[^>]*>|<script src="(?![a-z]+:|/)[^"]*"></script>')


def _js(text: str) -> str:
    """``text`` as a JavaScript string that is safe inside ``<script>`` (no ``</script>`` can close it)."""
    return json.dumps(text).replace("<", "\\u003c")


_ROOTED = re.compile(r'((?:href|src)=|"(?:base|search)": )"/(?!/)')


def relative_links(html: str) -> str:
    """A page at the site's root with its root-absolute links (``href="/assets/x.css"``, Material's ``"base": "/"``)
    made relative (``href="assets/x.css"``, ``"base": "."``)."""
    return _ROOTED.sub(lambda m: m.group(1) + ('"./' if "base" in m.group(1) else '"'), html).replace(
        '"base": "./"', '"base": "."'
    )


def _refuse_links_out(base: Path, config: Any) -> None:
    """Stop the build before MkDocs cleans its site folder (or walks its docs folder) where either is named inside the
    repository of mkdocs.yml but a link takes it outside: a committed ``build -> /elsewhere`` link would have MkDocs
    delete and write files there (``files.refuse_link_out``)."""
    for option in ("site_dir", "docs_dir"):
        try:
            refuse_link_out(base, Path(config[option]))
        except Unreadable as e:
            raise PluginError(
                f"{option} {e}; MkDocs deletes and writes what is in it, so Assay builds only inside the repository "
                "(remove the link, or name the outside folder itself as the site_dir)"
            ) from None


def _refuse_outside_links(base: Path, docs: Path) -> None:
    """Stop the build before MkDocs walks the documentation folder when a link in it leads outside the repository
    ``base`` that holds it (``/proc/self/environ``, a page elsewhere, a large tree): the site publishes only what is
    in it."""
    for folder, dirs, names in os.walk(docs, followlinks=False):
        for name in [*dirs, *names]:
            path = Path(folder) / name
            if path.is_symlink():
                try:
                    resolve_inside(base, path)
                except Unreadable:
                    rel = path.relative_to(docs.parent).as_posix()
                    raise PluginError(
                        f"{rel} is a link to something outside the repository; Assay publishes only files inside it "
                        "(copy the file in, or remove the link)"
                    ) from None
