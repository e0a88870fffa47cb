"""Reference text generated from the code: the record reference (from the model), the status legend
(from ``assay.status``) and the diagnostics catalogue (from ``assay.diagnostics``).

The README embeds them between ``<!-- BEGIN name -->`` and ``<!-- END name -->`` markers and the site
renders them as pages; ``assay readme`` rewrites the README's copies and a test keeps them current.
"""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from assay import status as vocab
from assay.diagnostics import CATALOGUE
from assay.model import Claim, Decision, Source


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return " or ".join(_type_name(a) for a in args if a is not type(None))
    if origin is list:
        return f"list of {_type_name(args[0])}"
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    return getattr(annotation, "__name__", str(annotation))


def _nested(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for a in typing.get_args(annotation) for m in _nested(a)]


def _field_row(name: str, info: FieldInfo) -> str:
    required = "yes" if info.is_required() else "no"
    description = (info.description or "").replace("|", "\\|")
    return f"| `{name}` | {_type_name(info.annotation)} | {required} | {description} |"


def record_reference() -> str:
    """Markdown tables of every record kind and the structures inside them, from the model."""
    out: list[str] = []
    seen: list[type[BaseModel]] = []
    todo: list[type[BaseModel]] = [Claim, Source, Decision]
    while todo:
        model = todo.pop(0)
        if model in seen:
            continue
        seen.append(model)
        doc = " ".join((model.__doc__ or "").split())
        out += [f"### {model.__name__}", "", doc, "", "| field | type | required | meaning |", "|---|---|---|---|"]
        for name, info in model.model_fields.items():
            out.append(_field_row(name, info))
            todo += [m for m in _nested(info.annotation) if m not in seen]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def status_legend() -> str:
    """The status vocabulary as Markdown tables."""
    out = []
    for title, table in (("Claim status", vocab.CLAIM), ("Check status (per device)", vocab.CHECK),
                         ("Closure", vocab.CLOSURE), ("Freshness", vocab.FRESHNESS)):
        out += [f"**{title}**", "", "| status | meaning |", "|---|---|"]
        out += [f"| `{s.name}` | {s.meaning} |" for s in table.values()]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def diagnostics_catalogue() -> str:
    """Every diagnostic code with its severity and meaning."""
    rows = [f"| `{c.name}` | {c.severity} | {c.meaning.replace('|', chr(92) + '|')} |" for c in CATALOGUE.values()]
    return "\n".join(["| code | severity | meaning |", "|---|---|---|", *rows]) + "\n"


SECTIONS = {"status-legend": status_legend, "record-reference": record_reference}


def render_readme(text: str) -> str:
    """``text`` with every generated section replaced by its current rendering."""
    for name, make in SECTIONS.items():
        pattern = re.compile(rf"(<!-- BEGIN {name} -->\n).*?(<!-- END {name} -->)", re.S)
        text = pattern.sub(lambda m, make=make: m.group(1) + make() + m.group(2), text)
    return text


def update_readme(path: Path) -> bool:
    """Rewrite the generated sections of the README at ``path``; True when something changed."""
    before = path.read_text(encoding="utf-8")
    after = render_readme(before)
    if after != before:
        path.write_text(after, encoding="utf-8")
    return after != before
