"""A figure's own page, where the claim page's "full size" link leads: the figure in an ``<img>``, never the SVG
opened as a document (as an image, SVG runs nothing and loads nothing, whatever it holds).

A plain document beside the figure, outside the theme and MkDocs' pages (a figure costs the build one small file):
it runs no script, and its Content-Security-Policy lets it load the figure alone.
"""

from __future__ import annotations

from assay.site.markup import figure_page, href, record_doc
from assay.site.pages import Output
from assay.site.template import render
from assay.site.views import FigureFile


def outputs(f: FigureFile) -> list[Output]:
    """The figure's SVG and its own page."""
    here = figure_page(f.path)
    back = href(here, f"{record_doc(f.claim)}#check-{f.check}")  # the check's id on its claim page
    html = render("figure.html", f=f, back=back, svg=f.path.rsplit("/", 1)[-1])
    return [Output(f.path, f.svg), Output(here, html)]
