"""Pages generated from the engine's own tables: the record reference (from the pydantic models) and
the diagnostics catalogue (from ``assay.diagnostics.CATALOGUE``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from markupsafe import Markup
from pydantic_core import PydanticUndefined

from assay import reference
from assay.diagnostics import CATALOGUE
from assay.site.markup import anchor, code_spans, esc
from assay.site.pages import Output
from assay.site.template import render


def type_name(annotation: Any) -> Markup:
    """A reader's name for a field type, as HTML (nested models link to their section)."""
    return Markup(
        reference.type_name(
            annotation, code=lambda a: f"<code>{esc(a)}</code>", link=lambda n: f'<a href="#{anchor(n)}">{esc(n)}</a>', text=esc
        )
    )


def _default(info: Any) -> str:
    default = info.get_default(call_default_factory=True)
    return "" if default is PydanticUndefined else str(default)


@dataclass(frozen=True)
class Field:
    name: str
    type: Markup
    required: str
    default: str
    description: Markup


@dataclass(frozen=True)
class Section:
    slug: str
    name: str
    doc: Markup
    fields: list[Field]


def _section(model: type) -> Section:
    fields = [
        Field(
            name,
            type_name(info.annotation),
            "yes" if info.is_required() else "no",
            _default(info),
            Markup(code_spans(info.description or "")),
        )
        for name, info in model.model_fields.items()
    ]
    doc = (model.__doc__ or "").strip().split("\n\n")[0]
    return Section(anchor(model.__name__), model.__name__, Markup(code_spans(doc)), fields)


def records_page() -> Output:
    html = render(
        "reference.html",
        kind="records",
        records=[_section(m) for m in reference.record_models()],
        ledger=[_section(m) for m in reference.ledger_models()],
        freshness=Markup(code_spans(reference.FRESHNESS)),
    )
    return Output.page("reference/records.md", "Record reference", html, True)


def diagnostics_page() -> Output:
    rows = [(c.name, c.severity, Markup(code_spans(c.meaning))) for c in CATALOGUE.values()]
    html = render("reference.html", kind="diagnostics", catalogue=rows)
    return Output.page("reference/diagnostics.md", "Diagnostics", html, True)
