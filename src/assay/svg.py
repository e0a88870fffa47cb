"""What a figure may hold to reach a page: SVG by an allow-list, with nothing that runs or fetches.

A ledger figure is shown on the site and opened full size by readers, so one that carries a script, an event
handler, foreign HTML or a reference outside itself is refused (``unsafe`` says why), never copied.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

#: The SVG (and metadata) elements a figure may use: what matplotlib writes, and plain drawing.
ELEMENTS = frozenset(
    "svg g path defs clipPath use rect image metadata RDF Work type format creator Agent title desc style text tspan "
    "line polyline polygon circle ellipse linearGradient radialGradient stop pattern mask marker symbol".split()
)
#: The only references a figure may hold: to its own elements, or an embedded raster image.
_LOCAL = re.compile(r"^#[A-Za-z_][\w.:-]*$")
_EMBEDDED = re.compile(r"^data:image/(png|jpeg);base64,[A-Za-z0-9+/=\s]*$")
_CSS_BAD = re.compile(r"url\(\s*(?!['\"]?#)|@import|expression\(|javascript:", re.IGNORECASE)


def unsafe(data: bytes) -> str | None:
    """Why the SVG ``data`` may not reach a page, or None when every element and attribute is allowed."""
    lowered = data.lower()
    doctype = lowered.find(b"<!doctype")
    if b"<!entity" in lowered or (doctype >= 0 and b"[" in lowered[doctype : lowered.find(b">", doctype)]):
        return "it declares entities (a DOCTYPE with an internal subset)"  # matplotlib's plain SVG 1.1 DOCTYPE is fine
    try:
        root = ET.fromstring(data)
    except ET.ParseError as e:
        return f"it is not well-formed XML ({e})"
    for el in root.iter():
        name = el.tag.rsplit("}", 1)[-1] if isinstance(el.tag, str) else ""
        if name not in ELEMENTS:
            return f"it holds a <{name}> element"
        if name == "style" and el.text and _CSS_BAD.search(el.text):
            return "its stylesheet refers outside the figure"
        for attr, value in el.attrib.items():
            local = attr.rsplit("}", 1)[-1]
            if local.lower().startswith("on"):
                return f"it has an event handler ({local})"
            if local == "href" and not (_LOCAL.match(value) or (name == "image" and _EMBEDDED.match(value))):
                return f"it refers outside itself ({local}={value[:40]!r})"
            if local == "style" and _CSS_BAD.search(value):
                return "a style refers outside the figure"
    return None
