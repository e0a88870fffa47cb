"""Reference text generated from the code: the record reference (from the model), the status legend
(from ``assay.status``) and the diagnostics catalogue (from ``assay.diagnostics``).

The README embeds them between ``<!-- BEGIN name -->`` and ``<!-- END name -->`` markers and the site
renders them as pages; ``assay readme`` rewrites the README's copies and a test keeps them current.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from assay import status as vocab
from assay.diagnostics import CATALOGUE
from assay.model import Claim, Decision, Source


def record_models() -> list[type[BaseModel]]:
    """The three record models, then every model nested in them, in order of first mention."""
    out: list[type[BaseModel]] = []
    todo: list[type[BaseModel]] = [Claim, Source, Decision]
    while todo:
        model = todo.pop(0)
        if model in out:
            continue
        out.append(model)
        for info in model.model_fields.values():
            todo += [m for m in _nested(info.annotation) if m not in out]
    return out


def _nested(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for a in typing.get_args(annotation) for m in _nested(a)]


def type_name(annotation: Any, code: Callable[[Any], str], link: Callable[[str], str],
              text: Callable[[str], str] = str) -> str:
    """A reader's name for a field type; ``code`` shows a literal value, ``link`` a nested model, ``text`` the rest."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return type_name(args[0], code, link, text)
    if origin in (typing.Union, types.UnionType):
        names = [type_name(a, code, link, text) for a in args if a is not type(None)]
        return " or ".join(names) + (" or null" if type(None) in args else "")
    if origin is list:
        return f"list of {type_name(args[0], code, link, text)}"
    if origin is typing.Literal:
        return " | ".join(code(a) for a in args)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return link(annotation.__name__)
    return text(getattr(annotation, "__name__", str(annotation)))


def _markdown_type(annotation: Any) -> str:
    return type_name(annotation, code=lambda a: f"`{a}`", link=lambda n: f"[{n}](#{n.lower()})").replace("|", "\\|")


def record_reference() -> str:
    """Markdown tables of every record kind and the structures inside them, from the model."""
    out: list[str] = []
    for model in record_models():
        doc = " ".join((model.__doc__ or "").split())
        out += [f"### {model.__name__}", "", doc, "", "| field | type | required | meaning |", "|---|---|---|---|"]
        for name, info in model.model_fields.items():
            required = "yes" if info.is_required() else "no"
            description = (info.description or "").replace("|", "\\|")
            out.append(f"| `{name}` | {_markdown_type(info.annotation)} | {required} | {description} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def status_legend() -> str:
    """The status vocabulary as Markdown tables."""
    out = []
    for title, table in vocab.VOCABULARIES.items():
        out += [f"**{title}**", "", "| name | meaning |", "|---|---|"]
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
