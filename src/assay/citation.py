"""How a record is cited: a source as BibTeX, CSL-JSON and the ``citation_*`` tags reference managers read, each
right for where the source was published (a conference paper is ``@inproceedings`` and ``paper-conference`` with its
proceedings and pages, in the venue's year, its arXiv posting kept apart); a claim as an entry of the knowledge base,
whose ``CITATION.cff`` names the work it stands in, at the commit that last changed it and the day it was read.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.model import Source
from assay.records.yaml_safe import read_yaml


def bibkey(source: Source) -> str:
    surname = re.sub(r"[^A-Za-z]", "", source.authors[0].split()[-1]) or "anon"
    word = next((w for w in re.findall(r"[A-Za-z]+", source.title) if len(w) > 3), "work")
    return f"{surname.lower()}{year(source)}{word.lower()}"


def year(source: Source) -> int:
    """The year a citation gives: the venue's where the source names one (MoCo: CVPR 2020, though posted in 2019)."""
    return source.published.year if source.published else source.year


def pages(source: Source, dash: str = "–") -> str | None:
    """Its pages as ``first–last`` (one number for a one-page paper); None where the record gives none."""
    p = source.published.pages if source.published else None
    if p is None:
        return None
    return str(p.first) if p.first == p.last else f"{p.first}{dash}{p.last}"


def venue(source: Source) -> str:
    """Where it appeared, in words, for a page: ``CVPR 2020: IEEE/CVF Conference on …, pp. 9729–9738, IEEE``."""
    pub = source.published
    if pub is None:
        return source.venue or ""
    name = f"{pub.short}: {pub.name}" if pub.short else f"{pub.name} {pub.year}"
    volume = " ".join(x for x in (pub.series, pub.volume) if x)
    span = pages(source)
    parts = [name, volume, (f"pp. {span}" if "–" in span else f"p. {span}") if span else "", pub.publisher or ""]
    return ", ".join(p for p in parts if p)


def first_posted(source: Source) -> str:
    """When and where a published paper was first made public, where that is apart from its venue (``arXiv
    1911.05722v3, first posted 2019-11``); '' otherwise."""
    if source.published is None or not (source.identifiers.arxiv or source.date):
        return ""
    when = source.date or str(source.year)
    return f"arXiv {source.identifiers.arxiv}, first posted {when}" if source.identifiers.arxiv else f"first posted {when}"


def _address(source: Source) -> str | None:
    """Where a reader finds the source on the web: its url, else its arXiv abstract page; None where it has neither."""
    ids = source.identifiers
    return ids.url or (f"https://arxiv.org/abs/{ids.arxiv}" if ids.arxiv else None)


# --- BibTeX ----------------------------------------------------------------------------------------------------

# LaTeX's special characters, in one pass so the braces an escape brings are not escaped again. A lone brace
# is a command, not `\{`: BibTeX counts braces even after a backslash, so the field's stay balanced.
_BIB_SPECIAL = {
    "\\": r"\textbackslash{}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "{": r"\textbraceleft{}",
    "}": r"\textbraceright{}",
    **{c: "\\" + c for c in "%&$#_"},
}
_VERBATIM = ("url", "doi")


def _bib_escape(text: str) -> str:
    """Record text as BibTeX field text: no brace can close the field, no backslash start a command."""
    return "".join(_BIB_SPECIAL.get(c, c) for c in text)


def _bib_url(text: str) -> str:
    """A URL or DOI as a BibTeX field, read verbatim: braces and backslashes percent-encoded, so none closes it."""
    return text.replace("\\", "%5C").replace("{", "%7B").replace("}", "%7D")


def _entry(kind: str, key: str, fields: list[tuple[str, str]], escaped: tuple[str, ...] = ()) -> str:
    """A BibTeX entry; the fields named in ``escaped`` are BibTeX already."""

    def value(k: str, v: str) -> str:
        return v if k in escaped else _bib_url(v) if k in _VERBATIM else _bib_escape(v)

    body = ",\n".join(f"  {k} = {{{value(k, v)}}}" for k, v in fields)
    return f"@{kind}{{{key},\n{body}\n}}\n"


#: A source's kind as a BibTeX entry type, where it names no venue it was published in.
BIB_TYPES = {"paper": "inproceedings", "preprint": "article", "book": "book"}
#: The kind of a venue a paper was published in, as a BibTeX entry type and the field that names the venue.
BIB_PUBLISHED = {
    "conference": ("inproceedings", "booktitle"),
    "workshop": ("inproceedings", "booktitle"),
    "journal": ("article", "journal"),
}


def bibtex(source: Source) -> str:
    """One BibTeX entry: ``@inproceedings`` with its proceedings, pages and publisher for a conference paper,
    ``@article`` for a journal's or an arXiv preprint, ``@misc`` for blogs and code."""
    fields: list[tuple[str, str]] = [
        ("title", source.title),
        ("author", " and ".join(source.authors)),
        ("year", str(year(source))),
    ]
    pub = source.published
    if pub is not None:
        kind, field = BIB_PUBLISHED[pub.kind]
        fields.append((field, pub.name))
        fields += [(k, v) for k, v in (("series", pub.series), ("volume", pub.volume), ("pages", pages(source, "--"))) if v]
        fields += [("publisher", pub.publisher)] if pub.publisher else []
    else:
        kind = BIB_TYPES.get(source.kind, "misc")
        if source.venue:
            field = "booktitle" if kind == "inproceedings" else "journal" if kind == "article" else "howpublished"
            fields.append((field, source.venue))
    ids = source.identifiers
    if ids.arxiv:
        fields += [("eprint", ids.arxiv), ("archiveprefix", "arXiv")]
    if ids.doi:
        fields.append(("doi", ids.doi))
    if ids.url:
        fields.append(("url", ids.url))
    posted = first_posted(source)
    fields.append(("note", f"Assay {source.id}" + (f"; {posted}" if posted else "")))
    return _entry(kind, bibkey(source), fields)


# --- CSL-JSON --------------------------------------------------------------------------------------------------

#: A source's kind as a CSL item type (https://docs.citationstyles.org/en/stable/specification.html#appendix-iii-types),
#: where it names no venue it was published in; and the kind of a venue as one.
CSL_TYPES = {"paper": "paper-conference", "preprint": "article", "book": "book", "blog": "post-weblog", "code": "software"}
CSL_PUBLISHED = {"conference": "paper-conference", "workshop": "paper-conference", "journal": "article-journal"}


def _csl_name(name: str) -> dict[str, str]:
    """``Kaiming He`` as CSL's ``{"family": "He", "given": "Kaiming"}``; a one-word name (a team) stays literal."""
    given, _, family = name.strip().rpartition(" ")
    return {"family": family, "given": given} if given else {"literal": family}


def _date(text: str) -> dict[str, list[list[int]]]:
    return {"date-parts": [[int(x) for x in text.split("-")]]}


def csl(source: Source) -> dict[str, Any]:
    """One CSL-JSON item, as Zotero, Mendeley and pandoc's citeproc read it."""
    ids, pub = source.identifiers, source.published
    if pub is not None:  # the venue's year; the arXiv posting as the day it was first available
        issued, kind = str(pub.year), CSL_PUBLISHED[pub.kind]
    else:  # the publication date where the record gives one in its year, else that year (BibTeX's)
        issued = source.date if source.date and source.date.startswith(str(source.year)) else str(source.year)
        kind = CSL_TYPES[source.kind]
    item: dict[str, Any] = {
        "id": source.id,
        "type": kind,
        "title": source.title,
        "author": [_csl_name(a) for a in source.authors],
        "issued": _date(issued),
        "citation-key": bibkey(source),
    }
    if pub is not None:
        item["container-title"] = pub.name
        optional = {"page": pages(source, "-"), "volume": pub.volume, "collection-title": pub.series, "publisher": pub.publisher}
        item.update({k: v for k, v in optional.items() if v})
        if source.date:
            item["available-date"] = _date(source.date)
    elif source.venue:
        item["container-title"] = source.venue
    if ids.doi:
        item["DOI"] = ids.doi
    if url := _address(source):
        item["URL"] = url
    if ids.arxiv:
        item["number" if pub is None else "note"] = f"arXiv:{ids.arxiv}"
    return item


def csl_json(items: list[dict[str, Any]]) -> str:
    return json.dumps(items, indent=1, ensure_ascii=False) + "\n"


# --- tags a page carries -----------------------------------------------------------------------------------------

#: The ``citation_*`` tag that names the venue, per kind of venue (Google Scholar's inclusion guidelines).
HIGHWIRE_VENUE = {
    "conference": "citation_conference_title",
    "workshop": "citation_conference_title",
    "journal": "citation_journal_title",
}


def highwire(source: Source) -> list[tuple[str, str]]:
    """The Highwire Press ``citation_*`` tags that reference managers read from a page (Zotero's embedded-metadata
    translator, Google Scholar): the title, each author, the venue's date and name as its kind wants, its volume and
    pages, the date it was first posted, and the identifiers."""
    ids, pub = source.identifiers, source.published
    tags = [("citation_title", source.title)] + [("citation_author", a) for a in source.authors]
    if pub is not None:
        tags += [("citation_publication_date", str(pub.year)), (HIGHWIRE_VENUE[pub.kind], pub.name)]
        p = pub.pages
        optional = [("citation_volume", pub.volume), ("citation_publisher", pub.publisher)]
        optional += [("citation_firstpage", str(p.first)), ("citation_lastpage", str(p.last))] if p else []
        tags += [(k, v) for k, v in optional if v]
        if source.date:
            tags.append(("citation_online_date", source.date.replace("-", "/")))
    else:
        tags.append(("citation_publication_date", (source.date or str(source.year)).replace("-", "/")))
        if source.venue:
            tags.append(("citation_journal_title" if source.kind == "paper" else "citation_publisher", source.venue))
    if ids.arxiv:
        tags += [("citation_arxiv_id", ids.arxiv), ("citation_pdf_url", f"https://arxiv.org/pdf/{ids.arxiv}")]
    if ids.doi:
        tags.append(("citation_doi", ids.doi))
    if url := _address(source):
        tags.append(("citation_public_url", url))
    return tags


# --- a claim, as an entry of the knowledge base ------------------------------------------------------------------


@dataclass(frozen=True)
class Work:
    """The knowledge base as its ``CITATION.cff`` names it: what a claim is cited as part of."""

    title: str
    authors: tuple[str, ...]
    version: str | None = None
    url: str | None = None  # where its site is published; a claim's page is under it


def work(root: Path) -> Work | None:
    """The work ``CITATION.cff`` at ``root`` describes; None where there is none, or it names no title."""
    path = root / "CITATION.cff"
    if not path.is_file():
        return None
    data, _, diags = read_yaml(path.read_bytes(), path.name)
    if diags or not isinstance(data, dict) or not data.get("title"):
        return None
    names = [_cff_name(a) for a in data.get("authors") or [] if isinstance(a, dict)]
    return Work(str(data["title"]), tuple(n for n in names if n), _str(data.get("version")), _str(data.get("url")))


def _cff_name(author: dict[str, Any]) -> str:
    """A CFF person (``given-names``, ``family-names``) or entity (``name``) as one name."""
    person = " ".join(str(author[k]) for k in ("given-names", "name-particle", "family-names") if author.get(k))
    return person or str(author.get("name") or "")


def _str(value: Any) -> str | None:
    return str(value) if value else None


@dataclass(frozen=True)
class ClaimCitation:
    """A claim cited as an entry of the work: its id and title, the commit that last changed it (and that commit's
    day), the day it was read, and where its page is."""

    id: str
    title: str
    work: Work
    commit: str  # short id; '' where the repository has no history
    date: str  # the commit's day, YYYY-MM-DD; '' without one
    accessed: str  # YYYY-MM-DD
    url: str | None

    @property
    def version(self) -> str:
        """``0.1.0, commit 1a2b3c4d``: the work's version and the claim's commit, whichever are known."""
        return ", ".join(x for x in (self.work.version, f"commit {self.commit}" if self.commit else "") if x)

    def bibtex(self) -> str:
        # each author in braces: a team's name (``The Assay contributors``) is one name, not a given and a family one
        fields = [("title", f"{self.id}: {self.title}")]
        fields += [("author", " and ".join("{" + _bib_escape(a) + "}" for a in self.work.authors))] if self.work.authors else []
        fields += [("year", (self.date or self.accessed)[:4]), ("howpublished", self.work.title)]
        fields += [("version", self.version)] if self.version else []
        fields += [("url", self.url)] if self.url else []
        fields += [("urldate", self.accessed), ("note", f"Claim {self.id}, accessed {self.accessed}")]
        return _entry("misc", f"assay-{self.id.lower()}", fields, escaped=("author",))

    def csl(self) -> dict[str, Any]:
        item: dict[str, Any] = {
            "id": self.id,
            "type": "entry",
            "title": f"{self.id}: {self.title}",
            "author": [{"literal": a} for a in self.work.authors],
            "container-title": self.work.title,
            "issued": _date(self.date or self.accessed),
            "accessed": _date(self.accessed),
        }
        if self.version:
            item["version"] = self.version
        if self.url:
            item["URL"] = self.url
        return item
