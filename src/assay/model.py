"""The record model: what a source, claim or decision YAML file says, declared once.

Validation, the JSON Schema for editors (``schema/*.schema.json``), the record reference page and the
site's field labels all derive from these classes and their field descriptions. A record here is pure
data: no I/O, no status (status is computed from the ledger, see ``assay.ledger``). A claim's checks are declared in
``assay.experiment``, a source's bibliographic parts and passages in ``assay.bibliography``.
"""

from __future__ import annotations

import re
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from assay.bibliography import AnthologyUnit, Comparison, Copy, Day, Identifiers, Passage, Published, Version
from assay.experiment import PART, Check, MetricName, MetricSpec, Slug, Text
from assay.ids import RECORD_ID, ClaimId, DecisionId, RecordId, SourceId


class Record(BaseModel):
    """Fields and settings shared by every record."""

    model_config = ConfigDict(**PART, str_strip_whitespace=True)

    tags: list[Slug] = Field(default_factory=list, description="Topic tags (kebab-case); the site lists records by tag.")


# --- sources ------------------------------------------------------------------------------------


class Source(Record):
    """A document that claims are cited from: a paper, a preprint, a blog post, a code repository."""

    id: SourceId = Field(description="`LIT-NNN`, equal to the file name.")
    kind: Literal["paper", "preprint", "blog", "code", "book"] = Field(description="What sort of document it is.")
    title: Text = Field(description="The title as the document gives it.")
    authors: list[Text] = Field(min_length=1, description="Authors in the document's order.")
    year: int = Field(
        ge=1900,
        le=2100,
        description="Year it was first made public (its first arXiv version, a post's date); a "
        "citation gives the venue's year where `published` names one.",
    )
    date: Annotated[str, StringConstraints(pattern=r"^[0-9]{4}-[0-9]{2}(-[0-9]{2})?$")] | None = Field(
        None, description="Publication date (YYYY-MM or YYYY-MM-DD) where the year does not order sources."
    )
    venue: Text | None = Field(
        None,
        description="Where it appears, in words, for a source not published in proceedings or a journal (a blog's "
        "site, `arXiv preprint`); a published paper names its venue in `published`.",
    )
    published: Published | None = Field(
        None, description="Where a paper was published: conference or journal, its name, year and pages."
    )
    identifiers: Identifiers = Field(description="arXiv id with version, DOI, URL.")
    anthology: AnthologyUnit | None = Field(None, description="The anthology unit the source stands in.")
    takeaways: list[Text] = Field(default_factory=list, description="Key takeaways, one sentence or paragraph each.")
    compared_against: list[Comparison] = Field(
        default_factory=list, description="Sources this one compares itself with directly, governed by ADR-011."
    )
    note: Text | None = Field(None, description="Anything a reader should know about the source itself.")
    read_from: Version | None = Field(
        None, description="The version its passages were read from: `arXiv v3`, `<url> read 2026-12-01`, `<repo> at <commit>`."
    )
    passages: list[Passage] = Field(default_factory=list, description="The passages its claims quote, each where it is.")
    copies: list[Copy] = Field(default_factory=list, description="Copies of its text its passages were found in.")

    @model_validator(mode="after")
    def _version_read(self) -> Source:
        if self.passages and not self.read_from:
            raise ValueError("a source with passages names the version they were read from in read_from")
        return self


# --- claims -------------------------------------------------------------------------------------


class Citation(BaseModel):
    """A pointer into a source: which source, where in it, and its exact words."""

    model_config = PART

    source: SourceId = Field(description="The cited source.")
    locator: Text = Field(description="Section, figure, table, page or equation, e.g. `§3.3`, `Figure A.1`.")
    quote: Text = Field(description="The source's exact words.")
    note: Text | None = Field(None, description="How the quote bears on the claim.")


Bound = Literal[">", ">=", "<", "<=", "~"]


class Reported(BaseModel):
    """A number a source reports, kept beside ours on the claim page."""

    model_config = PART

    id: Slug = Field(description="Name of the number, unique in the claim; expectations refer to it.")
    what: Text = Field(description="What was measured, in words.")
    value: float = Field(allow_inf_nan=False, description="The number as reported.")
    bound: Bound | None = Field(
        None, description='Where the source reports a bound or an approximation (`>99.9 %` is `bound: ">"`, value 99.9).'
    )
    unit: Text = Field(description="Its unit (`%`, `MSE`, `hours`, `nats`).")
    quantity: Slug | None = Field(
        None,
        description="What kind of number it is (`top1-accuracy`, `reconstruction-mse`); an expectation links it "
        "only when its metric declares the same quantity and unit.",
    )
    source: SourceId = Field(description="The source that reports it.")
    locator: Text = Field(description="Where the source reports it.")
    note: Text | None = Field(None, description="Setting, caveats, or where the seed text differs.")

    @property
    def shown(self) -> str:
        """The number as a reader sees it, bound kept: `>99.9 %`."""
        return f"{self.bound or ''}{self.value:g} {self.unit}"

    def measured_by(self, spec: MetricSpec) -> bool:
        """Whether our metric ``spec`` measures the same quantity as this number, in the same unit (case and spacing
        aside): only then may an expectation of it link this number."""
        return bool(spec.quantity) and spec.quantity == self.quantity and spec.unit.lower().split() == self.unit.lower().split()


RelationType = Literal["depends_on", "supports", "contradicts", "refines", "generalises"]


class Relation(BaseModel):
    """A typed edge from this claim to another record."""

    model_config = PART

    type: RelationType = Field(description="How this claim relates to the target.")
    target: RecordId = Field(description="The related record.")
    note: Text | None = Field(None, description="Why.")


SourceKind = Literal["quoted", "paraphrased", "reported", "not-in-source", "contradicted"]
Stance = Literal["supports", "refutes"]


class SourceSays(BaseModel):
    """What the cited sources say about an assertion."""

    model_config = PART

    kind: SourceKind = Field(
        description="`quoted` (a citation has these words), `paraphrased` (it says this in other words), `reported` (the "
        "assertion reports what a source says, and asserts nothing about the world itself: it rests on its quote, and "
        "is cited only), `not-in-source` (the filed text goes beyond the sources), `contradicted` (a source says "
        "otherwise)."
    )
    citations: list[Annotated[int, Field(ge=1)]] = Field(
        default_factory=list, description="The claim's citations that bear on it, by number (1 is the first)."
    )
    note: Text | None = Field(None, description="How the source's words relate to the filed ones.")


class Support(BaseModel):
    """A check used as evidence for or against an assertion."""

    model_config = PART

    check: Slug = Field(description="The check's id.")
    stance: Stance = Field(
        description="`supports`: the expectation holding supports the assertion; `refutes`: it holding counts against it."
    )
    metrics: list[MetricName] = Field(
        default_factory=list,
        description="The metrics of the check's expectations that bear on this assertion; unset: all of them.",
    )
    because: Text | None = Field(
        None, description="Why the assertion reads only the `metrics` named, where it reads only some of the check's."
    )


class Protocol(BaseModel):
    """The source's setting and ours, side by side, where an assertion compares numbers across them."""

    model_config = PART

    source: Text = Field(description="The source's protocol: data, model, scale, steps, batch size.")
    ours: Text = Field(description="Ours, in the same terms.")


class Assertion(BaseModel):
    """One separate thing a claim says, with what the source says about it and the evidence for it."""

    model_config = PART

    id: Slug = Field(description="Assertion id, unique in the claim.")
    filed: list[Text] = Field(min_length=1, description="Its words: exact spans of the statement or of a condition.")
    says: Text | None = Field(None, description="One self-contained sentence, in plain words, of what it asserts.")
    source: SourceSays = Field(description="What the cited sources say about it.")
    evidence: list[Support] = Field(default_factory=list, description="The checks that bear on it, each with its stance.")
    cited_only: Text | None = Field(None, description="Why no check tests it (`needs ImageNet-scale training`).")
    refined: Text | None = Field(None, description="What our evidence found instead, where it differs from the filed words.")
    protocol: Protocol | None = Field(
        None, description="The source's setting beside ours, where the assertion compares a number of the source's with ours."
    )

    @model_validator(mode="after")
    def _evidence_or_reason(self) -> Assertion:
        if not self.evidence and not self.cited_only:
            raise ValueError("an assertion needs evidence (checks with a stance) or cited_only with the reason")
        if self.evidence and self.cited_only:
            raise ValueError("an assertion has either evidence or cited_only, not both")
        return self


class Discrepancy(BaseModel):
    """Where the filed text says something the primary source does not: both are kept."""

    model_config = PART

    filed: Text = Field(description="What the seed document says.")
    source_says: Text = Field(description="What the primary source says.")
    source: SourceId = Field(description="The primary source.")
    locator: Text = Field(description="Where the primary source says it.")


class Claim(Record):
    """A statement from the literature, its citations, and the checks that test it."""

    id: ClaimId = Field(description="`SOTA-NNN` (empirical) or `THEORY-NNN` (theoretical), equal to the file name.")
    title: Text = Field(description="A short name for lists and the graph.")
    statement: Text = Field(description="The claim as filed, in the source document's words.")
    refined: Text | None = Field(None, description="The statement as our checks found it to hold, where it differs.")
    conditions: list[Text] = Field(default_factory=list, description="Conditions under which the claim holds.")
    citations: list[Citation] = Field(min_length=1, description="Where the claim comes from, with exact quotes.")
    reported: list[Reported] = Field(default_factory=list, description="Numbers the sources report.")
    relations: list[Relation] = Field(default_factory=list, description="Typed links to other records.")
    discrepancies: list[Discrepancy] = Field(
        default_factory=list, description="Where the seed text and the primary source differ."
    )
    checks: list[Check] = Field(default_factory=list, description="Executable checks.")
    assertions: list[Assertion] = Field(
        default_factory=list,
        description="The claim cut into the separate things it says; together their spans cover every sentence.",
    )
    no_check_reason: Text | None = Field(
        None, description="Why the claim has no check (`cited only: needs ImageNet-scale training`)."
    )

    @model_validator(mode="after")
    def _checks_or_reason(self) -> Claim:
        if not self.checks and not self.no_check_reason:
            raise ValueError("a claim without checks must say why in no_check_reason")
        return self

    def check(self, check_id: str) -> Check | None:
        """The check with this id, or None."""
        return next((c for c in self.checks if c.id == check_id), None)


# --- decisions ----------------------------------------------------------------------------------


class Decision(Record):
    """A convention of the knowledge base itself, as an architecture decision record."""

    id: DecisionId = Field(description="`ADR-NNN`, equal to the file name.")
    title: Text = Field(description="The decision in a few words.")
    status: Literal["proposed", "accepted", "superseded"] = Field(description="Where the decision stands.")
    date: Day = Field(description="When it was taken.")
    context: Text = Field(description="The problem it answers.")
    decision: Text = Field(description="What was decided.")
    consequences: Text = Field(description="What follows, including what the validator enforces.")


# --- series -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Series:
    """An id series: the prefix of its ids, where its records live, what they are."""

    prefix: str  # `SOTA` of `SOTA-364`
    folder: str  # where its records live: `claims/SOTA-364.yaml`
    kind: str  # its node kind in the graph and the site
    model: type[Record]  # what its records validate against
    label: str  # what a reader calls one of its records


#: Every series, by prefix; folders in the order the knowledge base is loaded.
SERIES: dict[str, Series] = {
    s.prefix: s
    for s in (
        Series("LIT", "sources", "source", Source, "source"),
        Series("SOTA", "claims", "claim", Claim, "empirical claim"),
        Series("THEORY", "claims", "theory", Claim, "theoretical claim"),
        Series("ADR", "decisions", "decision", Decision, "decision"),
    )
}
#: The series of each node kind.
BY_KIND: dict[str, Series] = {s.kind: s for s in SERIES.values()}
#: The model of each record folder.
MODELS: dict[str, type[Record]] = {s.folder: s.model for s in SERIES.values()}


def nested_models(annotation: Any) -> list[type[BaseModel]]:
    """The models a field's type holds, in order of mention (``list[Passage] | None``: ``[Passage]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for a in typing.get_args(annotation) for m in nested_models(a)]


def series_of(record_id: str) -> Series | None:
    """The series an id's prefix names (also of a malformed id, `SOTA-36a`), or None when it names none."""
    return SERIES.get(record_id.split("-", 1)[0])


def series(record_id: str) -> str | None:
    """The series prefix of a well-formed id (`LIT`, `SOTA`, ...), or None when it has none we know."""
    m = re.fullmatch(RECORD_ID, record_id)
    return m.group(1) if m else None
