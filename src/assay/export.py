"""Exports of the whole knowledge base: BibTeX for every source, JSON for every record with status."""

from __future__ import annotations

import re
from typing import Any

from assay.graph import ClaimState, build, to_json
from assay.loader import KnowledgeBase
from assay.model import Source


def bibkey(source: Source) -> str:
    surname = re.sub(r"[^A-Za-z]", "", source.authors[0].split()[-1]) or "anon"
    word = next((w for w in re.findall(r"[A-Za-z]+", source.title) if len(w) > 3), "work")
    return f"{surname.lower()}{source.year}{word.lower()}"


# LaTeX's special characters, in one pass so the braces an escape brings are not escaped again. A lone brace
# is a command, not `\{`: BibTeX counts braces even after a backslash, so the field's stay balanced.
_BIB_SPECIAL = {"\\": r"\textbackslash{}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                "{": r"\textbraceleft{}", "}": r"\textbraceright{}", **{c: "\\" + c for c in "%&$#_"}}


def _bib_escape(text: str) -> str:
    """Record text as BibTeX field text: no brace can close the field, no backslash start a command."""
    return "".join(_BIB_SPECIAL.get(c, c) for c in text)


def _bib_url(text: str) -> str:
    """A URL or DOI as a BibTeX field, read verbatim: braces and backslashes percent-encoded, so none closes it."""
    return text.replace("\\", "%5C").replace("{", "%7B").replace("}", "%7D")


def bibtex(source: Source) -> str:
    """One BibTeX entry; ``@article`` for arXiv papers, ``@misc`` for blogs and code."""
    kind = {"paper": "inproceedings", "preprint": "article", "book": "book"}.get(source.kind, "misc")
    fields: list[tuple[str, str]] = [
        ("title", source.title),
        ("author", " and ".join(source.authors)),
        ("year", str(source.year)),
    ]
    if source.venue:
        fields.append(("booktitle" if kind == "inproceedings" else "journal" if kind == "article" else "howpublished", source.venue))
    ids = source.identifiers
    if ids.arxiv:
        fields += [("eprint", ids.arxiv), ("archiveprefix", "arXiv")]
    if ids.doi:
        fields.append(("doi", ids.doi))
    if ids.url:
        fields.append(("url", ids.url))
    fields.append(("note", f"Assay {source.id}"))
    body = ",\n".join(f"  {k} = {{{_bib_escape(v) if k not in ('url', 'doi') else _bib_url(v)}}}" for k, v in fields)
    return f"@{kind}{{{bibkey(source)},\n{body}\n}}\n"


def bibtex_all(kb: KnowledgeBase) -> str:
    return "\n".join(bibtex(s) for _, s in sorted(kb.sources.items()))


def as_json(kb: KnowledgeBase, states: dict[str, ClaimState]) -> dict[str, Any]:
    """Every valid record as the YAML says it, claims with their computed status, and the graph."""
    claims = []
    for cid, claim in sorted(kb.claims.items()):
        st = states[cid]
        claims.append({
            **claim.model_dump(mode="json"),
            "status": st.status,
            "closure": st.closure,
            "results": [
                {"check": c.check, "device": c.device, "status": c.status, "stale": c.stale, "flags": c.flags,
                 "off_lock": c.off_lock,
                 "metrics": {k: m.value for k, m in c.result.metrics.items()} if c.result else {},
                 "last_error": c.result.last_error.model_dump(mode="json") if c.result and c.result.last_error else None}
                for c in st.checks
            ],
        })
    return {
        "claims": claims,
        "sources": [s.model_dump(mode="json") for _, s in sorted(kb.sources.items())],
        "decisions": [d.model_dump(mode="json") for _, d in sorted(kb.decisions.items())],
        "graph": to_json(build(kb, states)),
    }
