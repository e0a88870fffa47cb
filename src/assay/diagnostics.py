"""Diagnostics are data: a stable code, a location, a message, and the way out.

``CATALOGUE`` is the one list of codes; the CLI prints from it and the site's diagnostics page is
generated from it. A diagnostic renders as ``path:line:col: severity[code]: message`` with an
optional ``hint:`` line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Code:
    """One diagnostic code: its name, severity and what it means."""

    name: str
    severity: Severity
    meaning: str


_CODES = [
    # reading files
    Code("unreadable-file", "error", "A file is a link leading outside the knowledge base, not a regular file, or too large; "
         "it is not read."),
    Code("not-utf8", "error", "The file is not valid UTF-8; save it as UTF-8."),
    Code("yaml-syntax", "error", "The YAML does not parse."),
    Code("yaml-duplicate-key", "error", "A mapping repeats a key; YAML would silently keep the last one."),
    Code("yaml-tag", "error", "A YAML tag (`!!python/object`, `!custom`) is used; records are plain data."),
    Code("yaml-alias", "error", "An anchor or alias (`&a`, `*a`) is used; records spell every value out."),
    Code("yaml-not-mapping", "error", "The document is not a mapping of fields, or the file holds several documents."),
    Code("yaml-too-deep", "error", "The document nests deeper than any record does."),
    Code("schema-line", "warning", "The `# yaml-language-server: $schema=` line is missing, so editors cannot validate."),
    # the record itself
    Code("bad-id", "error", "The id does not have the form of its series (`LIT-NNN`, `SOTA-NNN`, `THEORY-NNN`, `ADR-NNN`)."),
    Code("id-mismatch", "error", "The id differs from the file name."),
    Code("wrong-folder", "error", "The record's series belongs in another folder."),
    Code("duplicate-id", "error", "Two records share an id."),
    Code("missing-field", "error", "A required field is absent."),
    Code("unknown-field", "error", "A field the schema does not define."),
    Code("wrong-type", "error", "A field's value has the wrong type or form."),
    Code("bad-value", "error", "A field's value is not one of those allowed, or breaks a rule of the record."),
    Code("missing-locator", "error", "A citation, reported number or comparison has no locator."),
    Code("empty-quote", "error", "A citation's quote is empty."),
    Code("duplicate-check", "error", "Two checks of a claim share an id."),
    Code("duplicate-reported", "error", "Two reported numbers of a claim share an id."),
    # references between records
    Code("unknown-source", "error", "A citation, reported number or comparison names a source that does not exist."),
    Code("unknown-record", "error", "A relation names a record that does not exist."),
    Code("unknown-reported", "error", "An expectation refers to a reported number the claim does not have."),
    Code("unknown-decision", "error", "A comparison is governed by a decision that does not exist."),
    Code("self-relation", "error", "A record relates to itself."),
    Code("depends-on-cycle", "error", "`depends_on` relations form a cycle, so no claim in it can be verified first."),
    Code("compared-against-later", "error", "ADR-011: a source can only have compared itself against earlier sources."),
    Code("uncited-source", "warning", "No claim cites the source."),
    # verifiers
    Code("unknown-verifier", "error", "A check names a verifier test that does not exist."),
    Code("verifier-mismatch", "error", "A check's verifier test is tied (by its marker) to another claim or check."),
    Code("orphan-verifier", "error", "A verifier test is tied to a claim or check that does not exist."),
    Code("untied-verifier", "error", "A test in `verify/` carries no `claim` marker."),
    # the ledger
    Code("bad-ledger", "error", "A ledger file is not a result this version of Assay can read."),
]

CATALOGUE: dict[str, Code] = {c.name: c for c in _CODES}


@dataclass(frozen=True, order=True)
class Diagnostic:
    """A problem found at a place in a file."""

    path: str
    line: int
    col: int
    code: str
    message: str
    hint: str | None = None

    def __post_init__(self) -> None:
        if self.code not in CATALOGUE:
            raise ValueError(f"unknown diagnostic code {self.code!r}")

    @property
    def severity(self) -> Severity:
        return CATALOGUE[self.code].severity

    def render(self) -> str:
        """``path:line:col: severity[code]: message``, then ``  hint: ...`` when there is one."""
        text = f"{self.path}:{self.line}:{self.col}: {self.severity}[{self.code}]: {self.message}"
        return f"{text}\n  hint: {self.hint}" if self.hint else text


def errors(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Only the diagnostics of severity error."""
    return [d for d in diagnostics if d.severity == "error"]
