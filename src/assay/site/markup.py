"""HTML building blocks for generated pages: escaping, links between pages, status chips, legends.

Every piece of record text passes through ``esc`` before it reaches a page: pages are emitted as HTML,
never as Markdown, so neither the Markdown engine nor the browser interprets what a record says.
"""

from __future__ import annotations

import base64
import html
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from assay import status as vocab
from assay.model import series_of
from assay.status import Status

_ICONS = Path(__import__("material").__file__).parent / "templates" / ".icons"


def esc(text: Any) -> str:
    """Record text as safe HTML text (quotes escaped too, so it may stand in attributes)."""
    return html.escape(str(text), quote=True)


def code_spans(text: str) -> str:
    """Escape ``text``, then show its `backticked` words as code (for the model's own descriptions)."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", esc(text))


def paragraphs(text: str) -> str:
    """Escaped text split into paragraphs at line breaks (a folded YAML scalar keeps one per blank line)."""
    blocks = [b.strip() for b in re.split(r"\n+", text.strip()) if b.strip()]
    return "".join(f"<p>{code_spans(b)}</p>" for b in blocks)


def page_url(doc: str) -> str:
    """The built file of a docs-relative page (``claims/X.md`` -> ``claims/X.html``)."""
    return doc[:-3] + ".html" if doc.endswith(".md") else doc


def href(here: str, target: str) -> str:
    """A relative link from the page ``here`` to ``target`` (both docs-relative; ``#anchor`` kept).

    Up to the root, then down: ``../claims/X.html`` from ``claims/Y.md`` (no relpath; it is hot)."""
    path, _, anchor = target.partition("#")
    rel = "../" * here.count("/") + page_url(path) if path else ""
    return rel + (f"#{anchor}" if anchor else "")


def record_doc(record_id: str) -> str:
    """The page of a record, by the series of its id."""
    series = series_of(record_id)
    return f"{series.folder}/{record_id}.md" if series else "index.md"


def anchor(text: str) -> str:
    """A stable fragment id from free text (a locator, a check id)."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug or "x"


def icon(name: str) -> str:
    """An icon by Material shortcode name (``material-check-circle``), drawn by ``icon_css``."""
    return f'<span aria-hidden="true" class="assay-icon assay-i-{name}"></span>'


def icon_css(names: list[str]) -> str:
    """CSS masks for the icons, from the theme's own SVGs: each page carries a class, not the SVG."""
    rules = []
    for name in sorted(set(names)):
        family, _, rest = name.partition("-")
        path = _ICONS / family / f"{rest}.svg"
        if path.is_file():
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            url = f'url("data:image/svg+xml;base64,{data}")'
            rules.append(f".assay-i-{name} {{ -webkit-mask-image: {url}; mask-image: {url}; }}")
    return "\n".join(rules) + "\n"


def chip(status: Status, label: str | None = None, prefix: str = "", with_icon: bool = True) -> str:
    """A coloured chip with the status icon and its label; the meaning shows on hover."""
    text = esc(f"{prefix}{label or status.name}")
    mark = icon(status.icon) if with_icon else '<span class="assay-dot"></span>'
    return (f'<span class="assay-chip" style="--assay-c:{status.colour}" title="{esc(status.meaning)}">'
            f"{mark}{text}</span>")


def plain_chip(label: str, title: str = "") -> str:
    """A neutral chip (tier, device) with no status colour."""
    attr = f' title="{esc(title)}"' if title else ""
    return f'<span class="assay-chip assay-chip-plain"{attr}>{esc(label)}</span>'


VOCABULARIES = vocab.VOCABULARIES


@lru_cache(maxsize=32)
def legend(*names: str) -> str:
    """The legend of one or more status vocabularies (``"Claim"``, ``"Check"``...), printed from ``assay.status``."""
    parts = ['<details class="assay-legend" data-search-exclude><summary>Legend</summary>']
    for title in names:
        table = VOCABULARIES[title]
        parts.append(f'<p class="assay-legend-title">{esc(title)}</p><ul>')
        parts += [f"<li>{chip(s, with_icon=False)} {esc(s.meaning)}</li>" for s in table.values()]
        parts.append("</ul>")
    return "".join(parts) + "</details>"


def link(here: str, target: str, text: str, title: str = "") -> str:
    attr = f' title="{esc(title)}"' if title else ""
    return f'<a href="{esc(href(here, target))}"{attr}>{esc(text)}</a>'


def record_link(here: str, record_id: str, title: str | None = None) -> str:
    """A link to a record's page showing its id (and title, when given)."""
    text = f"{record_id}: {title}" if title else record_id
    return link(here, record_doc(record_id), text)


def table(head: list[str], rows: list[list[str]], cls: str = "") -> str:
    """A table from already-escaped cells (class-less, so the theme styles it; ``cls`` goes on a wrapper)."""
    th = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    out = f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"
    return f'<div class="{cls}">{out}</div>' if cls else out


def script_json(data: Any, indent: int | None = None) -> str:
    """JSON that is safe inside a ``<script>`` element, a ``.js`` file or a page that sniffs it as HTML:
    no raw ``<``, ``>`` or ``&`` (they are ``\\u003c`` etc.; the parsed data is unchanged)."""
    separators = (",", ":") if indent is None else (",", ": ")
    text = json.dumps(data, sort_keys=True, indent=indent, separators=separators, ensure_ascii=False, default=str)
    for raw, safe in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, safe)
    return text


def number(value: Any) -> str:
    """A measured or reported number, compactly."""
    if isinstance(value, bool) or value is None:
        return esc(value if value is not None else "—")
    if isinstance(value, (int, float)):
        return esc(f"{value:.4g}")
    return esc(value)
