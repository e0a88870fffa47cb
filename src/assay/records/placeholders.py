"""The records `assay new` writes, and the placeholder texts in them that a person is to replace.

Kept apart from ``assay.scaffold`` (``assay init``): ``assay.records.within`` reads the placeholders when a record is
parsed, so this module is part of what a kept parse depends on (``assay.cache.PARSE_MODULES``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import yaml

#: What `assay new` writes, per folder: a valid record whose texts say what to put there.
RECORD_TEMPLATES = {
    "claims": """\
# yaml-language-server: $schema=../schema/claim.schema.json
id: {id}
title: A short name for lists and the graph
statement: >-
  The claim as filed, in the source document's words.
tags: []
citations:
  - source: {source}
    locator: "§1"
    quote: >-
      The source's exact words.
no_check_reason: >-
  Not yet checked: add a check with a verifier in verify/, or say why the claim cannot be checked.
""",
    "sources": """\
# yaml-language-server: $schema=../schema/source.schema.json
id: {id}
kind: paper
title: The title as the document gives it
authors: [First Author, Second Author]
year: {year}
identifiers:
  url: https://example.org/replace-me
takeaways: []
""",
    "decisions": """\
# yaml-language-server: $schema=../schema/decision.schema.json
id: {id}
title: The decision in a few words
status: proposed
date: "{date}"
context: >-
  The problem this decision answers.
decision: >-
  What is decided.
consequences: >-
  What follows, including what the validator enforces.
""",
}


@dataclass(frozen=True)
class Placeholders:
    """The texts ``assay new`` writes for a person to replace, and the fields (per folder) it writes them to."""

    texts: frozenset[str]
    fields: dict[str, tuple[tuple[str, ...], ...]]


@cache
def placeholders() -> Placeholders:
    """What a record that is not finished still holds: prose and dummy addresses, not ids or dates."""
    texts: set[str] = set()
    fields: dict[str, tuple[tuple[str, ...], ...]] = {}
    for folder, text in RECORD_TEMPLATES.items():
        data = yaml.safe_load(text.format(id="X-000", source="LIT-000", year=2000, date="2000-01-01"))
        found = [(path, v) for path, v in _strings(data, ()) if " " in v or "replace-me" in v]
        texts |= {" ".join(v.split()) for _, v in found}
        fields[folder] = tuple(dict.fromkeys(path for path, _ in found))
    return Placeholders(frozenset(texts), fields)


def _strings(node: object, path: tuple[str, ...]) -> list[tuple[tuple[str, ...], str]]:
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in _strings(v, path + (k,))]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v, path + ("*",))]
    return [(path, node)] if isinstance(node, str) else []
