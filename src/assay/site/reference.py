"""Pages generated from the engine's own tables: the record reference (from the pydantic models) and
the diagnostics catalogue (from ``assay.diagnostics.CATALOGUE``)."""

from __future__ import annotations

from typing import Any

from pydantic_core import PydanticUndefined

from assay import reference
from assay import status as vocab
from assay.diagnostics import CATALOGUE
from assay.site.markup import anchor, chip, code_spans, esc, table
from assay.site.pages import Page


def type_name(annotation: Any) -> str:
    """A reader's name for a field type, as HTML (nested models link to their section)."""
    return reference.type_name(annotation, code=lambda a: f"<code>{esc(a)}</code>",
                               link=lambda n: f'<a href="#{anchor(n)}">{esc(n)}</a>', text=esc)


def _default(info: Any) -> str:
    if info.default is not PydanticUndefined:
        return f"<code>{esc(info.default)}</code>"
    if info.default_factory is not None:
        return f"<code>{esc(info.default_factory())}</code>"
    return ""


def records_page() -> Page:
    parts = ["<h1>Record reference</h1>",
             "<p>Generated from <code>assay.model</code>: the same classes validate the records and produce the "
             "JSON Schemas under <code>schema/</code>.</p>"]
    parts += [_model_section(model) for model in reference.record_models()]
    parts.append('<h2 id="statuses">Statuses</h2><p>Computed from the ledger, never typed (<code>assay.status</code>).</p>')
    for title, vocabulary in vocab.VOCABULARIES.items():
        parts.append(f"<h3>{esc(title)}</h3>" + table(["Name", "Meaning"], [[chip(s), esc(s.meaning)] for s in vocabulary.values()]))
    parts.append('<h2 id="ledger">The ledger</h2><p>One file per check and device, '
                 "<code>results/&lt;CLAIM&gt;/&lt;check&gt;.&lt;device&gt;.json</code>, validated against "
                 "<code>schema/result.schema.json</code>.</p><p>" + code_spans(reference.FRESHNESS) + "</p>")
    parts += [_model_section(model) for model in reference.ledger_models()]
    return Page("reference/records.md", "Record reference", "".join(parts), True)


def _model_section(model: type) -> str:
    rows = [[f"<code>{esc(name)}</code>", type_name(info.annotation), "yes" if info.is_required() else "no",
             _default(info), code_spans(info.description or "")] for name, info in model.model_fields.items()]
    doc = (model.__doc__ or "").strip().split("\n\n")[0]
    return (f'<h2 id="{anchor(model.__name__)}">{esc(model.__name__)}</h2><p>{code_spans(doc)}</p>'
            + table(["Field", "Type", "Required", "Default", "Description"], rows))


def diagnostics_page() -> Page:
    rows = [[f'<code id="{esc(c.name)}">{esc(c.name)}</code>', esc(c.severity), code_spans(c.meaning)] for c in CATALOGUE.values()]
    intro = ("<p><code>assay check</code> prints every problem as "
             "<code>path:line:col: severity[code]: message</code>, with a hint where one helps.</p>")
    return Page("reference/diagnostics.md", "Diagnostics", "<h1>Diagnostics</h1>" + intro
                + table(["Code", "Severity", "Meaning"], rows), True)
