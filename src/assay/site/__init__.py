"""The site generator: records and ledger -> HTML pages and downloads (``generate``); MkDocs-free.

Modules: ``views`` (the page model), ``markup`` (escaping and HTML pieces), ``pages`` (record pages),
``dashboard``, ``explorer`` (the graph page), ``graph_layout``, ``neighbourhood`` (a claim's small graph),
``reference`` (record reference and diagnostics catalogue), ``generator`` (puts them together).
"""

from assay.site.generator import Output, generate
from assay.site.pages import Options

__all__ = ["Options", "Output", "generate"]
