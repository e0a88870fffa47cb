"""Source listings: a verifier module's page, highlighted by Pygments, and a claim's YAML record.

Each line keeps an anchor (``#L12`` in a module, ``#yaml-L12`` in a record) and its number is drawn by
CSS (``data-n``), so Material's copy button copies the code alone. Pygments escapes the text it
highlights; the lines reach a template as ``Markup``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from markupsafe import Markup, escape
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from assay.files import Unreadable, python_text, read_regular
from assay.site.markup import anchor
from assay.site.pages import Output, breadcrumb
from assay.site.template import render


@lru_cache(maxsize=1)
def _formatter() -> HtmlFormatter:
    return HtmlFormatter(nowrap=True)


def _lines(text: str, anchors: dict[int, str]) -> Markup:
    """Highlighted Python, one ``span`` a line with its anchor (``#L12``); Pygments closes every token at a line's end."""
    html = highlight(text, PythonLexer(), _formatter()).split("\n")
    out = []
    for n, line in enumerate(html[: len(text.splitlines())], 1):
        inner = f'<span id="{anchors[n]}">{line}</span>' if n in anchors else line
        out.append(f'<span id="L{n}" class="assay-line-row"><span class="assay-ln" data-n="{n}"></span>{inner}\n</span>')
    return Markup("".join(out))


def _read(root: Path, rel: str) -> str:
    return read_regular(root, root / rel).decode("utf-8", "replace")


def record_listing_path(record_id: str) -> str:
    """Where a claim's YAML record is listed, docs-relative: a file of its own beside the pages."""
    return f"records/{record_id}.html"


def record_listing(root: Path, rel: str, record_id: str, page: str) -> Output:
    """A claim's YAML record as one small HTML file with an anchor per line (``#L12``), linked from its page.

    A plain file, not a themed page: the record is read far less often than the claim page, which it would
    otherwise double in weight, and the build does not render a second page per claim. Not highlighted; every
    line is escaped."""
    try:
        lines = _read(root, rel).splitlines()
    except Unreadable as e:
        lines = [f"not shown: {e}"]
    back = "../" + page
    body = "".join(f'<span id="L{n}" class="l">{escape(line)}\n</span>' for n, line in enumerate(lines, 1))
    html = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(rel)}</title><style>{_LISTING_CSS}</style></head><body>"
        f'<p><a href="{escape(back)}">{escape(record_id)}</a> · <code>{escape(rel)}</code></p>'
        f"<pre><code>{body}</code></pre></body></html>\n"
    )
    return Output(record_listing_path(record_id), html)


_LISTING_CSS = (
    ":root{color-scheme:light dark}body{font:14px/1.45 ui-monospace,monospace;margin:1rem}"
    "pre{margin:0;overflow-x:auto}code{counter-reset:l}"  # YAML keeps its indentation: the listing scrolls, not the page
    ".l{display:block}"
    ".l::before{counter-increment:l;content:counter(l);display:inline-block;width:3.5em;margin-right:1em;"
    "text-align:right;opacity:.55}.l:target{background:#ffe58a66}"
)


def functions(text: str) -> list[tuple[str, str, int]]:
    """Each function (``def name``) once, as (anchor, name, line), the first definition of a name winning."""
    found: dict[str, tuple[str, str, int]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        if stripped.startswith("def "):
            name = stripped[4:].split("(")[0].strip()
            found.setdefault(anchor(name), (anchor(name), name, n))
    return list(found.values())


def code_page(root: Path, module: str) -> Output:
    """A verifier module's source with line anchors, and an anchor at each function.

    The module is read by ``read_regular``'s rule: a link leading outside the knowledge base (to a secret),
    a FIFO or an oversized file gets a page that says it is not shown, never its content; so does a module whose
    coding cookie would have Python run other text than the page shows (``files.python_text``).
    """
    here = f"code/{module}.md"
    problem, found, lines = "", [], Markup("")
    try:
        text: str | None = python_text(read_regular(root, root / module))  # the text Python runs, or none
    except UnicodeDecodeError:
        text = _read(root, module)
    except Unreadable as e:
        text, problem = None, f"{module} {e}; it is not shown."
    if text is not None:
        found = functions(text)
        lines = _lines(text, {n: slug for slug, _, n in found})
    tests = [f for f in found if f[1].startswith("test")]
    trail = breadcrumb("code", module)
    html = render("code.html", here=here, module=module, lines=lines, problem=problem, trail=trail, functions=tests)
    return Output.page(here, module, html, toc=[(slug, name) for slug, name, _ in tests])
