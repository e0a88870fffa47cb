"""What the rules across records read of a record: the ids it names, its checks' verifiers, a source's date, its
title, digests of its quotes or passages; made once per parse, so a knowledge base of 50,000 records is checked
without validating a record.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from assay.diagnostics import Loc
from assay.model import Claim, Source
from assay.records.passages import key


class CheckOutline(NamedTuple):
    """What the rules across records and the status of a claim need of one of its checks."""

    id: str
    verifier: str
    devices: tuple[str, ...]
    reads: tuple[str, ...]
    metrics: tuple[tuple[str, str], ...] = ()  # (name, unit) of each metric it declares


class Outline(NamedTuple):
    """What a valid record names that lies outside it, in file order, and its title; made once per parse."""

    title: str = ""
    sources: tuple[tuple[Loc, str], ...] = ()  # (where, source id): a claim's citations, reported numbers, discrepancies
    relations: tuple[tuple[str, str], ...] = ()  # (type, target) of a claim's relations
    checks: tuple[CheckOutline, ...] = ()  # a claim's checks
    compared: tuple[tuple[str, str], ...] = ()  # (source, decision) of a source's compared_against
    order: str = ""  # a source's date, else its year: what orders sources (ADR-011)
    quotes: tuple[tuple[str, str, str], ...] = ()  # (source, locator key, quote key) of each of a claim's citations
    passages: frozenset[tuple[str, str]] = frozenset()  # (locator key, exact key) of each of a source's passages
    prose: bool = False  # whether a claim has prose that may cite the ledger (``prose``)

    def depends_on(self) -> list[str]:
        return [target for kind, target in self.relations if kind == "depends_on"]


def outline(record: object) -> Outline | None:
    """The ``Outline`` of a valid record; None for a record that did not validate."""
    if isinstance(record, Claim):
        return Outline(
            title=record.title,
            sources=tuple(
                ((name, n, "source"), item.source)
                for name in ("citations", "reported", "discrepancies")
                for n, item in enumerate(getattr(record, name))
            ),
            relations=tuple((r.type, r.target) for r in record.relations),
            checks=tuple(
                CheckOutline(c.id, c.verifier, tuple(c.devices), tuple(c.reads), tuple((m.name, m.unit) for m in c.metrics))
                for c in record.checks
            ),
            quotes=tuple((c.source, key(c.locator), key(c.quote)) for c in record.citations),
            prose=any(True for _ in prose(record)),
        )
    if isinstance(record, Source):
        return Outline(
            title=record.title,
            compared=tuple((c.source, c.decision) for c in record.compared_against),
            order=record.date or str(record.year),
            passages=frozenset((key(p.locator), key(p.exact)) for p in record.passages),
        )
    return Outline(title=getattr(record, "title", record.id)) if record is not None else None


def prose(claim: Claim) -> Iterator[tuple[tuple, str]]:
    """Every prose field of ``claim`` that may cite the ledger (``assay.prose``), with its place in the record."""
    if claim.refined:
        yield ("refined",), claim.refined
    for i, a in enumerate(claim.assertions):
        for name in ("says", "refined"):
            if getattr(a, name):
                yield ("assertions", i, name), getattr(a, name)
    for n, c in enumerate(claim.checks):
        for name in ("note", "known_failing"):
            if getattr(c, name):
                yield ("checks", n, name), getattr(c, name)
