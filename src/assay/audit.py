"""Every diagnostic of a knowledge base, as ``assay check`` prints them.

The rules of the records (``assay.records.across``, with those within each file) and of the ledger's files
(``assay.ledger.store``), sorted by file and line, at most ``PER_FILE`` of a file listed and the rest counted.
"""

from __future__ import annotations

from assay.diagnostics import Diagnostic, capped
from assay.ledger import store
from assay.records import across
from assay.records.knowledge_base import KnowledgeBase


def run(kb: KnowledgeBase) -> list[Diagnostic]:
    """All diagnostics of ``kb``, sorted and capped (``capped``)."""
    found = set(across.diagnostics(kb)) | set(store.diagnostics(kb))
    return capped(found, {f.path: f.unlisted for f in kb.files if f.unlisted})
