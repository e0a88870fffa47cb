"""The site generator: records and ledger -> HTML pages and downloads (``generate``); MkDocs-free.

Modules: ``views`` (the page model), ``template`` (the Jinja2 environment: one template per page kind under
``templates/``, autoescape on), ``markup`` (escaping, links, status colours), ``claim_page`` (the claim page's
view), ``pages`` (the other record pages and what page kinds share), ``code`` (highlighted source listings),
``dashboard``, ``explorer`` (the graph page), ``graph_layout`` (its layers), ``neighbourhood`` (a claim's small graph),
``reference`` (record reference and diagnostics catalogue), ``check_view`` (a check on a claim page),
``legend`` (how the graphs draw records and links), ``search`` (search documents), ``plugin`` (the MkDocs
plugin), ``generator`` (puts them together).
A new page kind is a template and a view.
"""

from assay.site.generator import generate
from assay.site.pages import Options, Output

__all__ = ["Options", "Output", "generate"]
