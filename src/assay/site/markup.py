"""What the page templates and views share: escaping, links between pages, status colours, numbers as text.

Pages are emitted as HTML, never as Markdown, so neither the Markdown engine nor the browser interprets
what a record says: the templates (``template``) escape every field; ``esc`` is for the few pieces built
here (the search documents, the reference's type names). The markup itself lives in ``templates/``.
"""

from __future__ import annotations

import base64
import html
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from markupsafe import Markup, escape

from assay import vocabulary
from assay.diagnostics import BIDI_CHARACTERS, BIDI_CONTROLS
from assay.model import series_of
from assay.records.formula_limits import INLINE
from assay.vocabulary import Status

_ICONS = Path(__import__("material").__file__).parent / "templates" / ".icons"


def esc(text: Any) -> str:
    """Record text as safe HTML text (quotes escaped too, so it may stand in attributes)."""
    return html.escape(str(text), quote=True)


def visible_bidi(text: str) -> str:
    """``text`` with each bidirectional embedding, override or isolate written as ``[U+202E]``. Each page goes through
    here whole: a substring search for each of the nine characters takes a fifth of the time of the pattern's search
    (28 and 136 us on a 18,600-character claim page)."""
    if not any(c in text for c in BIDI_CHARACTERS):
        return text
    return BIDI_CONTROLS.sub(lambda m: f"[U+{ord(m.group()):04X}]", text)


def code_spans(text: str) -> str:
    """Escape ``text``, then show its `backticked` words as code (for the model's own descriptions)."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", esc(text))


_CODE = re.compile(r"`([^`\n]+)`")
#: ``L_N``, ``x_{t+k}``, ``R^2``, ``z_i^T``, ``E_p[f]``, ``(y - f)^2``: a short name, a number or a closing bracket with
#: a subscript and/or a superscript. Not inside a longer name (``gap_to_log_n``, ``n16_i8_gap``), a path or a file
#: name (``verify/test_x.py``): the lookbehind and lookahead keep those as they are.
_SCRIPT = re.compile(
    r"(?P<base>(?<![\w\\./])(?:[A-Za-z]{1,5}|\d+(?:\.\d+)?)|[)\]])"
    r"(?:_(?P<sub>\{[^{}]+\}|[A-Za-z0-9])(?:\^(?P<sup>\{[^{}]+\}|-?[A-Za-z0-9]+))?|\^(?P<only>\{[^{}]+\}|-?[A-Za-z0-9]+))"
    r"(?![\w{]|\.\w)"
)


def _scripts(escaped: str) -> str:
    """Sub- and superscripts of already escaped text as ``<sub>``/``<sup>``."""

    def one(m: re.Match) -> str:
        sub, sup = m.group("sub"), m.group("sup") or m.group("only")
        out = m.group("base")
        out += f"<sub>{sub.strip('{}')}</sub>" if sub else ""
        return out + (f"<sup>{sup.strip('{}')}</sup>" if sup else "")

    return _SCRIPT.sub(one, escaped)


def rich(text: Any) -> Markup:
    """Record text as inline HTML: escaped, then its `backticked` words as code and its TeX (``$f_k$``, ``L_N``,
    ``x_{t+k}``, ``R^2``) as sub- and superscripts, so that no Markdown or TeX token shows as typed."""
    out = []
    for i, piece in enumerate(_CODE.split(str(text))):
        if i % 2:
            out.append(f"<code>{escape(piece)}</code>")
        else:
            escaped = str(escape(piece))  # as the templates escape (``&#34;``), so a page escapes one way
            parts = INLINE.split(escaped)  # the formulas a record's rule judges (assay.records.formula_limits)
            out.append("".join(_formula_text(p) if j % 2 else _scripts(p) for j, p in enumerate(parts)))
    return Markup("".join(out))


def _formula_text(tex: str) -> str:
    """``$...$``: a formula with a TeX command is left to KaTeX (as ``\\( \\)``, which it reads from the text);
    one of names and scripts only is written here, so it reads without a script."""
    return f"\\({tex}\\)" if "\\" in tex else f'<span class="assay-tex">{_scripts(tex)}</span>'


def paragraphs(text: str) -> list[str]:
    """Record text as paragraphs: a folded YAML scalar keeps one line per paragraph."""
    return [b.strip() for b in re.split(r"\n+", text.strip()) if b.strip()]


def code_like(text: str) -> bool:
    """Whether record text is a code listing (kept line by line): several short lines, one of them indented,
    a comment, or an assignment or call."""
    lines = text.strip("\n").split("\n")
    return (
        len(lines) > 1
        and all(len(x) <= 110 for x in lines)
        and any(x.startswith((" ", "\t", "#")) or re.search(r"[=(]", x) for x in lines)
    )


def page_url(doc: str) -> str:
    """The built file of a docs-relative page (``claims/X.md`` -> ``claims/X.html``)."""
    return doc[:-3] + ".html" if doc.endswith(".md") else doc


def figure_page(svg: str) -> str:
    """The page that shows the figure ``svg`` (docs-relative) full size, in an ``<img>``: ``f.svg`` -> ``f.html``."""
    return svg.removesuffix(".svg") + ".html"


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


def source_href(source: str, locator: str) -> str:
    return f"sources/{source}.md#cited-{anchor(locator)}"


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


def status_class(status: Status) -> str:
    """The class that colours a status: one per colour, defined for both schemes by ``colour_css``."""
    return "assay-c-" + status.colour.lstrip("#").lower()


def plural(n: int, one: str, many: str | None = None) -> str:
    """``1 decision``, ``2 decisions``."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


#: The page backgrounds of Material's two schemes: default (white) and slate (hsl(232, 15%, 14%)).
BACKGROUNDS = {"default": "#ffffff", "slate": "#1e2029"}
#: The contrast every status colour keeps against its scheme's background (WCAG AA for small text, with a margin).
CONTRAST = 4.6


def _luminance(rgb: tuple[float, float, float]) -> float:
    def lin(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _rgb(colour: str) -> tuple[int, int, int]:
    h = colour.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


@lru_cache(maxsize=1024)
def contrast(a: str, b: str) -> float:
    """The WCAG contrast ratio of two ``#rrggbb`` colours."""
    la, lb = sorted((_luminance(_rgb(a)), _luminance(_rgb(b))), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@lru_cache(maxsize=256)
def readable(colour: str, background: str) -> str:
    """``colour`` mixed toward black (on a light background) or white (on a dark one) just enough to keep
    ``CONTRAST`` against ``background``: the same hue, legible as text in either scheme."""
    target = (0, 0, 0) if _luminance(_rgb(background)) > 0.5 else (255, 255, 255)
    rgb = _rgb(colour)
    for step in range(0, 101):
        t = step / 100
        mixed = "#" + "".join(f"{round(c + (d - c) * t):02x}" for c, d in zip(rgb, target))
        if contrast(mixed, background) >= CONTRAST:
            return mixed
    return "#000000" if target == (0, 0, 0) else "#ffffff"


def colour_css(colours: list[str]) -> str:
    """One class per status colour with ``--assay-c`` set for each scheme (``status_class``)."""
    rules = []
    for colour in sorted({c.lower() for c in colours}):
        cls = "assay-c-" + colour.lstrip("#")
        rules.append(f".{cls} {{ --assay-c: {readable(colour, BACKGROUNDS['default'])}; }}")
        rules.append(f'[data-md-color-scheme="slate"] .{cls} {{ --assay-c: {readable(colour, BACKGROUNDS["slate"])}; }}')
    return "\n".join(rules) + "\n"


VOCABULARIES = vocabulary.VOCABULARIES


def script_json(data: Any, indent: int | None = None) -> str:
    """JSON that is safe inside a ``<script>`` element, a ``.js`` file or a page that sniffs it as HTML:
    no raw ``<``, ``>`` or ``&`` (they are ``\\u003c`` etc.; the parsed data is unchanged)."""
    separators = (",", ":") if indent is None else (",", ": ")
    return script_safe(json.dumps(data, sort_keys=True, indent=indent, separators=separators, ensure_ascii=False, default=str))


_UNSAFE = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def script_safe(text: str) -> str:
    """JSON text with ``<``, ``>``, ``&`` and the two line separators as escapes: the same data, safe in a script.
    (Each is a character of a JSON string or none, so a text may be made safe in pieces.)"""
    for raw, safe in _UNSAFE:
        if raw in text:
            text = text.replace(raw, safe)
    return text


#: A comparison or a reported bound as a reader writes it.
OPS = {">=": "≥", "<=": "≤", "==": "=", ">": ">", "<": "<", "~": "~"}


def quantity(value: float, unit: str, bound: str | None = None) -> str:
    """A reported number as the paper states it, its bound kept: ``>99.9 %``, ``256 images``."""
    return f"{OPS.get(bound or '', '')}{number(value)} {unit}"


def number(value: Any) -> str:
    """A measured or reported number, compactly: four significant digits, a whole number in full (1024)."""
    if isinstance(value, bool) or value is None:
        return str(value if value is not None else "—")
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, (int, float)):
        return f"{value:.4g}"
    return str(value)
