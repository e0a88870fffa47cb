"""What makes a claim's page citable: its own description and Open Graph tags (its title and verdict sentence), and
its "cite this claim" block: the claim as an entry of the knowledge base (``CITATION.cff``), at the commit that last
changed its record or results, read on the day the site was built, as BibTeX and CSL-JSON (``assay.citation``)."""

from __future__ import annotations

import json
import time

from assay.citation import ClaimCitation
from assay.site.markup import page_url, record_doc
from assay.site.views import ClaimView, SiteIndex


def cite(ix: SiteIndex, view: ClaimView) -> ClaimCitation | None:
    """The claim as an entry of the work ``CITATION.cff`` names; None where the knowledge base has no such file."""
    work = ix.work
    if work is None:
        return None
    cid = view.claim.id
    sha = ix.past.last_change(cid) if ix.past is not None and ix.past.available else ""
    when = ix.commit_times.get(sha)
    url = f"{work.url.rstrip('/')}/{page_url(record_doc(cid))}" if work.url else None
    day = time.strftime("%Y-%m-%d", time.gmtime(when)) if when is not None else ""
    return ClaimCitation(cid, view.claim.title, work, sha[:8], day, ix.accessed, url)


def meta(view: ClaimView, verdict: str, cited: ClaimCitation | None) -> list[tuple[str, str]]:
    """The page's description and Open Graph tags: what a link preview shows is the claim and its verdict."""
    title, words = f"{view.claim.id}: {view.claim.title}", f"{view.claim.title}. {verdict}"
    tags = [("description", words), ("og:type", "article"), ("og:title", title), ("og:description", words)]
    if cited is not None:
        tags.append(("og:site_name", cited.work.title))
        tags += [("og:url", cited.url)] if cited.url else []
    return tags


def csl_text(cited: ClaimCitation) -> str:
    return json.dumps(cited.csl(), indent=1, ensure_ascii=False)
