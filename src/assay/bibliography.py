"""A source's bibliographic parts: where it can be found, where it was published, what it compares itself with, and
the passages read from it with the copies they were found in.

Part of the record model (``assay.model``, whose ``Source`` holds them), as ``assay.experiment`` is of a claim's checks:
pure data, no I/O.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints, model_validator

from assay.experiment import PART, Text
from assay.ids import DecisionId, SourceId

#: A day, YYYY-MM-DD.
Day = Annotated[str, StringConstraints(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
#: A web address: http(s), printable ASCII.
WebAddress = Annotated[str, StringConstraints(pattern=r"^https?://[!-~]+$")]


class Identifiers(BaseModel):
    """Where a source can be found; at least one identifier is required."""

    model_config = PART

    arxiv: Annotated[str, StringConstraints(pattern=r"^[0-9]{4}\.[0-9]{4,5}v[0-9]+$")] | None = Field(
        None, description="arXiv id with the version read, e.g. `1911.05722v3`."
    )
    doi: Annotated[str, StringConstraints(pattern=r"^10\.[0-9]{4,9}/[!-~]+$")] | None = Field(
        None, description="DOI without the resolver prefix, e.g. `10.1109/CVPR42600.2020.00975`."
    )
    url: WebAddress | None = Field(None, description="A stable address of the document (a blog post, a code repository).")
    code: WebAddress | None = Field(None, description="The official code repository, where there is one.")

    @model_validator(mode="after")
    def _one_at_least(self) -> Identifiers:
        if not (self.arxiv or self.doi or self.url):
            raise ValueError("give at least one of arxiv, doi or url")
        return self


class AnthologyUnit(BaseModel):
    """The anthology unit a source stands in (LIT-591 is unit B of anthology 304)."""

    model_config = PART

    number: int = Field(ge=1, description="The anthology's number.")
    unit: Annotated[str, StringConstraints(pattern=r"^[A-Z]$")] = Field(description="The unit's letter.")
    title: Text | None = Field(None, description="The anthology's title, stated once on any of its sources.")


class Pages(BaseModel):
    """The pages a paper fills in its proceedings or journal."""

    model_config = PART

    first: int = Field(ge=1, description="Its first page.")
    last: int = Field(ge=1, description="Its last page (the first, for a one-page paper).")

    @model_validator(mode="after")
    def _in_order(self) -> Pages:
        if self.last < self.first:
            raise ValueError(f"the last page ({self.last}) comes before the first ({self.first})")
        return self


class Published(BaseModel):
    """Where a paper was published (a conference's proceedings, a journal), as a reference manager cites it. Its year
    is the venue's, which may differ from the year the source was first posted (MoCo: arXiv 2019, CVPR 2020)."""

    model_config = PART

    kind: Literal["conference", "journal", "workshop"] = Field(
        description="Proceedings of a conference or workshop, or a journal."
    )
    name: Text = Field(
        description="The proceedings' or journal's full name (`Proceedings of the 37th International Conference on "
        "Machine Learning`), without year or pages."
    )
    short: Text | None = Field(None, description="The venue as people name it, with its year (`ICML 2020`, `CVPR 2020`).")
    year: int = Field(ge=1900, le=2100, description="The year of the venue, the year a citation gives.")
    pages: Pages | None = Field(None, description="Its pages in the proceedings or journal.")
    volume: Text | None = Field(None, description="The volume (`119` of PMLR).")
    series: Text | None = Field(None, description="The series the volume is in (`Proceedings of Machine Learning Research`).")
    publisher: Text | None = Field(None, description="Its publisher (`PMLR`, `IEEE`).")


class Comparison(BaseModel):
    """A `compared_against` link: this source compares itself directly with another (ADR-011)."""

    model_config = PART

    source: SourceId = Field(description="The source compared against.")
    locator: Text = Field(description="Where this source runs the comparison (a table or figure).")
    reason: Text = Field(description="Why the link is filed in this direction.")
    decision: DecisionId = Field("ADR-011", description="The decision that governs the link.")


#: A version read: an arXiv version (`v3`), a date (`read 2026-12-01`) or a commit of code (`at 4397a04`).
Version = Annotated[
    str, StringConstraints(strip_whitespace=True, pattern=r"v[0-9]+\b|[0-9]{4}-[0-9]{2}-[0-9]{2}|\b[0-9a-f]{7,40}\b")
]


class Passage(BaseModel):
    """A passage a claim quotes, anchored as a W3C TextQuoteSelector is: its exact words, a few words either side."""

    model_config = PART

    locator: Text = Field(description="Where it is, as citations give it: section, figure, table, page, equation.")
    exact: Text = Field(description="Its words, as the source has them; a citation quotes them or a span of them.")
    prefix: Text | None = Field(None, description="The few words just before it in the source.")
    suffix: Text | None = Field(None, description="The few words just after it in the source.")
    read_from: Version | None = Field(
        None, description="Where it was read, where not in the source's `read_from` (its code at a commit, say)."
    )


class Copy(BaseModel):
    """A local copy of the source's text in which `assay sources verify` found every passage read from its version."""

    model_config = PART

    version: Version = Field(description="The version the copy is, as `read_from` names it.")
    file: Text = Field(description="The copy's file name (`1911.05722v3.html`, `builder.py`).")
    sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")] = Field(description="The copy's SHA-256.")
    format: Literal["text", "markdown", "html", "latex", "pdf"] = Field(description="How its text was read.")
    checked: Day = Field(description="The day it was checked.")
