"""What a figure may hold to reach a page: SVG by an allow-list, with nothing that runs or fetches.

A ledger figure is shown only in an ``<img>`` (where SVG runs nothing and loads nothing), yet a reader may still
open its address as a document, so what it holds is read with expat itself and judged by an allow-list of
namespaces, elements and attributes. Not kept: processing instructions (``<?xml-stylesheet?>`` anywhere), a DOCTYPE
other than matplotlib's plain SVG 1.1 one, entities (refused as they are declared, by defusedxml's handlers), event
handlers, another encoding than UTF-8, and every reference outside the figure: ``href`` but to ``#id``
(or an embedded PNG or JPEG in ``<image>``), and CSS (``style``, presentation attributes) with ``url()`` but to
``#id``, an at-rule (``@import``), an escape (``\\75 rl(``) or any function but colours and transforms.

``sanitise`` is the one function the ledger's writer (``assay.evidence.recorder``) and the site's publisher
(``assay.site.views``) call; ``unsafe`` says what it would drop, and the ledger's readers show only a figure it
would leave as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from xml.parsers import expat
from xml.sax.saxutils import escape

from defusedxml import EntitiesForbidden, ExternalReferenceForbidden
from defusedxml.expatreader import DefusedExpatParser

SVG = "http://www.w3.org/2000/svg"
XLINK = "http://www.w3.org/1999/xlink"
XML = "http://www.w3.org/XML/1998/namespace"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
CC = "http://creativecommons.org/ns#"
DC = "http://purl.org/dc/elements/1.1/"
#: The prefix each namespace a figure may use is written with when a figure is rebuilt.
PREFIXES = {SVG: "", XLINK: "xlink", XML: "xml", RDF: "rdf", CC: "cc", DC: "dc"}

#: The elements a figure may use, by namespace: what matplotlib writes (its metadata in RDF, Creative Commons and
#: Dublin Core terms included), and plain drawing. No ``a``, ``script``, ``foreignObject``, ``feImage``, animation.
ELEMENTS = {
    SVG: frozenset(
        "svg g path defs clipPath use rect image metadata title desc style text tspan line polyline polygon circle "
        "ellipse linearGradient radialGradient stop pattern mask marker symbol filter feBlend feColorMatrix "
        "feComposite feFlood feGaussianBlur feMerge feMergeNode feOffset".split()
    ),
    RDF: frozenset({"RDF", "Bag", "Seq", "Alt", "li"}),
    CC: frozenset({"Work", "Agent"}),
    DC: frozenset(
        "title creator subject description publisher contributor date type format identifier source language "
        "relation coverage rights".split()
    ),
}
#: The attributes (in no namespace) a figure's elements may carry: geometry, presentation, gradients and filters.
#: No event handler (``on*``), ``cursor`` (it loads an image), ``xml:base``.
ATTRIBUTES = frozenset(
    "id class style transform x y x1 x2 y1 y2 width height rx ry r cx cy fx fy d points viewBox version "
    "preserveAspectRatio offset gradientUnits gradientTransform spreadMethod patternUnits patternContentUnits "
    "patternTransform clipPathUnits maskUnits maskContentUnits markerUnits markerWidth markerHeight refX refY orient "
    "type values in in2 operator k1 k2 k3 k4 result mode stdDeviation dx dy filterUnits primitiveUnits rotate "
    "textLength lengthAdjust text-anchor dominant-baseline alignment-baseline baseline-shift font-family font-size "
    "font-style font-weight letter-spacing word-spacing fill fill-opacity fill-rule stroke stroke-width "
    "stroke-opacity stroke-linecap stroke-linejoin stroke-miterlimit stroke-dasharray stroke-dashoffset opacity "
    "clip-path clip-rule mask filter marker-start marker-mid marker-end stop-color stop-opacity flood-color "
    "flood-opacity color color-interpolation-filters shape-rendering image-rendering vector-effect visibility "
    "display".split()
)
#: The elements whose ``href`` may name another element of the figure (``#id``); ``image`` may embed a raster.
REFERRING = frozenset({"use", "linearGradient", "radialGradient", "pattern", "filter"})
#: matplotlib's DOCTYPE (name, system id, public id): it loads nothing (no browser reads an external DTD).
DOCTYPE = ("svg", "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd", "-//W3C//DTD SVG 1.1//EN")
#: What matplotlib's metadata names with ``rdf:resource`` (a term, never loaded).
STILL_IMAGE = "http://purl.org/dc/dcmitype/StillImage"
#: Deeper than any drawing nests (matplotlib: under ten); past it a file is not read further.
MAX_DEPTH = 100

_LOCAL = re.compile(r"#[A-Za-z_][\w.:-]*")
_EMBEDDED = re.compile(r"data:image/(png|jpeg);base64,[A-Za-z0-9+/=\s]*")
#: The CSS functions a figure may call: colours and transforms (``url()`` is judged apart: ``#id`` only).
_CSS_FUNCTIONS = frozenset({"rgb", "rgba", "hsl", "hsla", "matrix", "translate", "scale", "rotate", "skewx", "skewy"})
_CSS_CALL = re.compile(r"([^\s(),;:'\"{}\[\]/*!]*)\(")
_URL_LOCAL = re.compile(r"\s*(['\"]?)#[A-Za-z_][\w.:-]*\1\s*\)")
#: What a rebuilt figure escapes beside ``&``, ``<`` and ``>``: a CR, and in an attribute its quote and whitespace.
_IN_TEXT = {"\r": "&#13;"}
_IN_ATTRIBUTE = _IN_TEXT | {'"': "&quot;", "\n": "&#10;", "\t": "&#9;"}


class NotSVG(ValueError):
    """The bytes are no figure at all: not UTF-8, not well-formed XML, not SVG, nested too deep, or they declare
    entities; nothing of them can be kept."""


@dataclass
class _Element:
    ns: str
    name: str
    attributes: list[tuple[str, str, str]]  # (namespace, name, value), as written
    children: list[_Element | str] = field(default_factory=list)
    refused: bool = False  # a <style> that held an element: dropped when it ends


@dataclass
class _Reading:
    root: _Element | None = None
    dropped: list[str] = field(default_factory=list)  # why each thing not kept was not kept, in the file's order


def sanitise(data: bytes) -> bytes:
    """The figure as a page may show it: ``data`` itself, byte for byte, where the allow-list keeps all of it (so
    matplotlib's output stays the file it wrote, and a rerun gives the same file); else rebuilt, as UTF-8, from
    what the allow-list keeps. Raises ``NotSVG`` where nothing can be kept."""
    reading = _read(data)
    return data if not reading.dropped else _rebuilt(reading.root)  # type: ignore[arg-type]


def unsafe(data: bytes) -> str | None:
    """Why the SVG ``data`` may not reach a page as it is (the first thing ``sanitise`` drops), or None."""
    try:
        reading = _read(data)
    except NotSVG as e:
        return str(e)
    return reading.dropped[0] if reading.dropped else None


def css_refers(css: str) -> str | None:
    """Why CSS text (a ``style``, a presentation attribute) could fetch from outside the figure, or None: only
    ``url(#id)`` and the functions of colours and transforms are allowed, with no escape and no at-rule."""
    if "\\" in css:
        return "it escapes characters in CSS"
    if "@" in css:
        return "its CSS holds an at-rule (@import, @font-face)"
    for m in _CSS_CALL.finditer(css):
        name = m.group(1).lower()
        if not (_URL_LOCAL.match(css, m.end()) if name == "url" else name in _CSS_FUNCTIONS):
            return f"its CSS calls {m.group(1)}(), which may refer outside the figure"
    return None


def _read(data: bytes) -> _Reading:
    """The allow-listed tree of ``data`` and what was dropped from it. Raises ``NotSVG``."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise NotSVG("it is not UTF-8") from None
    reader = _Reader()
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.namespace_prefixes = True
    parser.ordered_attributes = True
    parser.buffer_text = True
    defused = DefusedExpatParser(forbid_entities=True, forbid_external=True)  # its handlers raise; it parses nothing
    parser.EntityDeclHandler = defused.defused_entity_decl
    parser.UnparsedEntityDeclHandler = defused.defused_unparsed_entity_decl
    parser.ExternalEntityRefHandler = defused.defused_external_entity_ref_handler
    parser.XmlDeclHandler = reader.declaration
    parser.StartDoctypeDeclHandler = reader.doctype
    parser.SkippedEntityHandler = reader.skipped
    parser.ProcessingInstructionHandler = reader.instruction
    parser.StartElementHandler = reader.start
    parser.EndElementHandler = reader.end
    parser.CharacterDataHandler = reader.text
    try:
        parser.Parse(data, True)
    except EntitiesForbidden as e:
        raise NotSVG(f"it declares the entity {e.name}") from None
    except ExternalReferenceForbidden as e:
        raise NotSVG(f"it refers to an external entity ({e.sysid or e.pubid})") from None
    except expat.ExpatError as e:
        raise NotSVG(f"it is not well-formed XML ({expat.errors.messages[e.code]}: line {e.lineno}, column {e.offset})") from None
    if reader.reading.root is None:
        raise NotSVG("it has no <svg> root")
    return reader.reading


class _Reader:
    """expat's handlers: each element, attribute and piece of text kept or dropped as it is read."""

    def __init__(self) -> None:
        self.reading = _Reading()
        self.stack: list[_Element | None] = []  # None: dropped, with everything under it

    def drop(self, why: str) -> None:
        self.reading.dropped.append(why)

    def declaration(self, version: str, encoding: str | None, standalone: int) -> None:
        if encoding is not None and encoding.lower() not in ("utf-8", "utf8"):
            self.drop(f"it declares the encoding {encoding}, not UTF-8")

    def doctype(self, name: str, system: str | None, public: str | None, internal: int) -> None:
        if internal or (name, system, public) != DOCTYPE:  # not kept: a rebuilt figure has no DOCTYPE
            said = " ".join(filter(None, (name, public, system, "[...]" if internal else "")))
            self.drop(f"it has a DOCTYPE other than SVG 1.1's ({said})")

    def skipped(self, name: str, is_parameter: int) -> None:
        self.drop(f"it refers to the entity &{name}; that it does not declare")

    def instruction(self, target: str, data: str) -> None:
        self.drop(f"it holds a processing instruction (<?{target} ...?>)")

    def start(self, qname: str, attributes: list[str]) -> None:
        if len(self.stack) >= MAX_DEPTH:
            raise NotSVG(f"it nests elements deeper than {MAX_DEPTH}")
        parent = self.stack[-1] if self.stack else None
        ns, name, shown = _split(qname)
        if self.stack and parent is None:
            self.stack.append(None)  # under a dropped element: dropped with it, said once
            return
        if not self.stack and (ns, name) != (SVG, "svg"):
            raise NotSVG(f"its root <{shown}> is not SVG's <svg> (in the namespace {SVG})")
        if parent is not None and parent.name == "style":
            parent.refused = True  # a stylesheet is text alone: it goes, with what it holds
            self.drop(f"its <style> holds a <{shown}> element")
            self.stack.append(None)
            return
        if name not in ELEMENTS.get(ns, ()):
            self.drop(f"it holds a <{shown}> element")
            self.stack.append(None)
            return
        element = _Element(ns, name, self._attributes(ns, name, attributes))
        if parent is None:
            self.reading.root = element
        else:
            parent.children.append(element)
        self.stack.append(element)

    def _attributes(self, ns: str, element: str, pairs: list[str]) -> list[tuple[str, str, str]]:
        kept = []
        for qname, value in zip(pairs[::2], pairs[1::2]):
            a_ns, a_name, shown = _split(qname)
            why = _attribute_refused(ns, element, a_ns, a_name, value)
            if why:
                self.drop(why.format(shown=shown, value=value[:40]))
            else:
                kept.append((a_ns, a_name, value))
        return kept

    def end(self, qname: str) -> None:
        element = self.stack.pop()
        if element is None or (element.ns, element.name) != (SVG, "style"):
            return
        why = css_refers("".join(c for c in element.children if isinstance(c, str)))
        if why:
            self.drop(f"its stylesheet: {why}")
        if why or element.refused:
            self.stack[-1].children.remove(element)  # type: ignore[union-attr]  # a <style> is never the root

    def text(self, data: str) -> None:
        if self.stack and self.stack[-1] is not None:
            self.stack[-1].children.append(data)


def _split(qname: str) -> tuple[str, str, str]:
    """expat's ``namespace prefix`` name as (namespace, local name, the name as written)."""
    parts = qname.split(" ")
    if len(parts) == 1:
        return "", parts[0], parts[0]
    return parts[0], parts[1], f"{parts[2]}:{parts[1]}" if len(parts) > 2 else parts[1]


def _attribute_refused(ns: str, element: str, a_ns: str, name: str, value: str) -> str | None:
    """Why an attribute is not kept (``{shown}``, ``{value}`` filled in by the caller), or None."""
    if a_ns == "" and name.lower().startswith("on"):
        return "it has an event handler ({shown})"
    if name == "href" and a_ns in ("", XLINK):
        local = element in REFERRING and _LOCAL.fullmatch(value)
        if ns == SVG and (local or element == "image" and _EMBEDDED.fullmatch(value)):
            return None
        return "it refers outside itself ({shown}={value!r})"
    if (a_ns, name) == (RDF, "resource"):
        return None if value == STILL_IMAGE else "it refers outside itself ({shown}={value!r})"
    if (a_ns, name) == (XML, "space"):
        return None if value in ("default", "preserve") else "it has the attribute {shown}={value!r}"
    if a_ns != "" or name not in ATTRIBUTES or ns != SVG:
        return "it has the attribute {shown}"
    if element == "style" and name == "type" and value != "text/css":
        return "its <style> is not CSS ({shown}={value!r})"
    why = css_refers(value)
    return None if why is None else f"its attribute {{shown}}: {why}"


def _rebuilt(root: _Element) -> bytes:
    """The kept tree as UTF-8 SVG: its namespaces declared on the root, nothing but elements, attributes and text."""
    used = sorted({ns for ns in _namespaces(root) if ns != XML}, key=lambda ns: PREFIXES[ns])
    declared = "".join(f' xmlns{":" + PREFIXES[ns] if PREFIXES[ns] else ""}="{ns}"' for ns in used)
    out = ['<?xml version="1.0" encoding="utf-8"?>\n']
    _write(root, out, declared)
    return "".join(out).encode("utf-8")


def _namespaces(element: _Element) -> set[str]:
    found = {element.ns} | {ns for ns, _, _ in element.attributes if ns}
    return found.union(*(_namespaces(child) for child in element.children if isinstance(child, _Element)))


def _write(element: _Element, out: list[str], declared: str = "") -> None:
    tag = _qualified(element.ns, element.name)
    attributes = "".join(f' {_qualified(ns, name)}="{escape(value, _IN_ATTRIBUTE)}"' for ns, name, value in element.attributes)
    if not element.children:
        out.append(f"<{tag}{declared}{attributes}/>")
        return
    out.append(f"<{tag}{declared}{attributes}>")
    for child in element.children:
        if isinstance(child, str):
            out.append(escape(child, _IN_TEXT))
        else:
            _write(child, out)
    out.append(f"</{tag}>")


def _qualified(ns: str, name: str) -> str:
    prefix = PREFIXES.get(ns, "")
    return f"{prefix}:{name}" if prefix else name
