"""The Jinja2 environment of the generated pages: one template per page kind under ``templates/``.

Autoescape is on, so every value a view hands a template is record text and is escaped; markup made
elsewhere (the neighbourhood SVG, a highlighted code listing) reaches a template only as ``Markup``.
The shared pieces (a status chip, a link, the legend, the breadcrumb) are macros in ``macros.html``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from assay import vocabulary as vocab
from assay.site import markup
from assay.vocabulary import Status

TEMPLATES = Path(__file__).parent / "templates"


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES)), autoescape=True, undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True
    )
    env.globals.update(
        href=markup.href,
        record_doc=markup.record_doc,
        anchor=markup.anchor,
        figure_page=markup.figure_page,
        vocab=vocab,
        status_class=markup.status_class,
        paragraphs=markup.paragraphs,
        code_like=markup.code_like,
    )
    env.filters.update(breakable=breakable, rich=markup.rich)
    env.globals.update(chip=chip, legend=lambda names: legend(tuple(names)))
    return env


def breakable(name: str) -> Markup:
    """A metric name that may wrap after its underscores, never inside a word (``knn_gap_<wbr>end``)."""
    return Markup("_<wbr>").join(str(name).split("_"))


def render(name: str, **view: Any) -> str:
    """The template ``name`` rendered with ``view``'s fields."""
    return environment().get_template(name).render(**view)


@lru_cache(maxsize=1)
def macros() -> Any:
    """The macros of ``macros.html``, callable from Python (``chip`` and ``legend``)."""
    return environment().get_template("macros.html").module


@lru_cache(maxsize=4096)
def chip(status: Status, label: str | None = None, prefix: str = "", with_icon: bool = True, titled: bool = True) -> Markup:
    """``macros.html``'s chip, rendered once per distinct status and label: a page kind that shows many uses this
    global instead of importing the macro (a macro call costs more than the chip it draws)."""
    return Markup(macros().chip(status, label, prefix, with_icon, titled))


@lru_cache(maxsize=64)
def legend(names: tuple[str, ...]) -> Markup:
    """``macros.html``'s legend of the vocabularies ``names``, rendered once per set of names."""
    return Markup(macros().legend(names))
