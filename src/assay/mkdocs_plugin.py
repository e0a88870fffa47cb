"""The MkDocs plugin (``plugins: - assay``): hands the generator's pages and files to MkDocs.

Generated pages carry finished HTML, so the plugin skips Markdown for them: ``on_page_markdown``
returns nothing to convert and ``on_page_content`` puts the HTML back. This keeps the per-page cost
of a 10,000-claim build small, and keeps record text away from the Markdown engine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.config import config_options as c
from mkdocs.config.base import Config
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import File, Files, InclusionLevel

from assay.site import Options, Output, generate


class AssayConfig(Config):
    root = c.Optional(c.Type(str))  # the knowledge base; default: the folder of mkdocs.yml
    edit_url = c.Optional(c.Type(str))  # e.g. https://github.com/org/kb/edit/main/{path}
    depth = c.Type(int, default=2)  # deepest neighbourhood on a claim page


class AssayPlugin(BasePlugin[AssayConfig]):
    """Adds every generated page and download to the build; MkDocs renders them in the theme."""

    def __init__(self) -> None:
        self.pages: dict[str, Output] = {}

    def _root(self, config: Any) -> Path:
        base = Path(config.config_file_path or ".").resolve().parent
        return (base / self.config.root).resolve() if self.config.root else base

    def on_files(self, files: Files, *, config: Any) -> Files:
        options = Options(edit_url=self.config.edit_url, depth=self.config.depth)
        outputs = generate(self._root(config), options)
        self.pages = {o.path: o for o in outputs if o.title is not None}
        for o in outputs:
            inclusion = InclusionLevel.INCLUDED if o.in_nav or o.title is None else InclusionLevel.NOT_IN_NAV
            files.append(File.generated(config, o.path, content=o.content, inclusion=inclusion))
        return files

    @event_priority(100)
    def on_page_markdown(self, markdown: str, *, page: Any, config: Any, files: Any) -> str:
        out = self.pages.get(page.file.src_uri)
        if out is None:
            return markdown
        page.meta["title"] = out.title
        page.meta["hide"] = ["toc"]  # generated pages have no Markdown headings to list; use the width
        return ""

    @event_priority(100)
    def on_page_content(self, html: str, *, page: Any, config: Any, files: Any) -> str:
        out = self.pages.get(page.file.src_uri)
        if out is None:
            return html
        page.title = out.title
        return str(out.content)

    def on_serve(self, server: Any, *, config: Any, builder: Any) -> Any:
        root = self._root(config)
        for folder in ("claims", "sources", "decisions", "results", "verify"):
            if (root / folder).is_dir():
                server.watch(str(root / folder))
        return server
