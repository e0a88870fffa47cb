"""The records `assay new` writes, and the placeholder texts in them that a person is to replace.

Kept apart from ``assay.scaffold`` (``assay init``): ``assay.records.within`` reads the placeholders when a record is
parsed, so this module is part of what a kept parse depends on (``assay.corpus.cache.PARSE_MODULES``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from assay.diagnostics import Diagnostic
from assay.files import Unreadable, read_regular

#: What `assay new` writes, per folder: a valid record whose texts say what to put there (a claim's is
#: ``claim_text``, with its checks).
RECORD_TEMPLATES = {
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
read_from: the version read, as arXiv v1, a URL read on 2000-01-01, or a commit
passages:
  - locator: §1
    exact: The words a claim quotes, exactly as the source prints them.
    prefix: The words just before them.
    suffix: The words just after them.
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

CLAIM = """\
# yaml-language-server: $schema=../schema/claim.schema.json
id: {id}
title: A short name for lists and the graph
statement: >-
  The claim as filed, in the source document's words.
tags: []
citations:
  - source: {source}
    locator: "§ where the quote stands: section, figure, table, page or equation"
    quote: >-
      The source's exact words.
assertions:
  - id: holds
    filed: ["The claim as filed, in the source document's words."]
    says: One self-contained sentence, in plain words, of what this part of the claim asserts.
    source:
      kind: quoted
      citations: [1]
      note: How the source's words relate to the filed ones (quoted, paraphrased, not in the source, contradicted).
    evidence:
{evidence}checks:
{checks}"""

CHECK = """\
  - id: {check}
    tests: The sentence of the claim this check tests.
    verifier: {verifier}
    tier: toy  # analytic (a theorem or identity), toy, reduced or full: the scale it runs at
    devices: [cpu, cuda]  # every device the verifier can run on; cuda without a GPU reads "not run", no harm
    seeds: {{count: 5}}
    metrics:
      - name: effect
        unit: the unit of the effect
        measures: What the effect metric measures, in words a reader understands without the code.
      - name: control
        unit: the unit of the effect
        measures: The same measurement on a model without the effect, which must not show it.
    expect:
      - {{metric: effect, op: ">", value: 0.5, against: [control]}}  {mark}
      - {{metric: control, op: "<", value: 0.5, control: true, against: [effect]}}  {mark}
    note: >-
      Thresholds not yet measured: run the verifier over its seeds, set each threshold from the spread it shows, and
      say here what was measured.
"""

#: What earlier versions of `assay new` wrote into a claim, still flagged where nobody replaced it.
LEGACY = """\
no_check_reason: >-
  Not yet checked: add a check with a verifier in verify/, or say why the claim cannot be checked.
"""

#: The comment that marks what ``assay new`` wrote for a person to replace: each line of a verifier stub (``assay
#: check`` flags it until the mark is deleted), and each threshold of a claim's check (flagged while the value on the
#: marked line is still the one written: ``THRESHOLD_MARK``).
MARK = "# assay new:"
#: The mark on the line of each threshold ``assay new`` writes: the threshold is a stand-in until it is measured.
THRESHOLD_MARK = f"{MARK} a stand-in, never measured"

VERIFIER = '''\
"""Verifiers of {id}."""  # assay new: one sentence of what they check

import matplotlib.pyplot as plt
import pytest
import torch
{tests}'''

TEST = '''

@pytest.mark.claim("{id}", "{check}")
def {test}(evidence, seeds, device):
    """What check {check} checks, in one sentence."""  # assay new: restate what the check checks
    effect, control = [], []
    for seed in seeds:  # the check's seeds (its seeds: in the record), one measurement each
        torch.manual_seed(seed)
        x = torch.randn(64, 8, device=device)  # N x D  # assay new: the experiment, citing the source's locator
        effect.append(x.std().item())  # the measure on the model with the effect
        quiet = 0.01 * torch.randn(64, 8, device=device)  # one without it, its own draw: a measured condition
        control.append(quiet.std().item())  # the same measure on it (never a constant: that challenges nothing)
    evidence.metric("effect", sum(effect) / len(effect), unit="the unit of the effect", seeds=effect)
    evidence.metric("control", sum(control) / len(control), unit="the unit of the effect", seeds=control)
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot(seeds, effect, "o-", label="effect")
    ax.plot(seeds, control, "s-", label="control")
    ax.set(xlabel="seed", ylabel="the unit of the effect")
    ax.legend()
    evidence.figure("per_seed", fig, caption="The effect and its control, one point per seed.")
    plt.close(fig)
'''


def stub_test(check: str) -> str:
    """The verifier test ``assay new`` writes for a check id."""
    return "test_" + check.replace("-", "_")


def verifier_path(rid: str) -> str:
    """The verifier module ``assay new`` writes for a claim id: ``verify/test_sota372.py``."""
    return f"verify/test_{rid.lower().replace('-', '')}.py"


def claim_text(rid: str, source: str, checks: list[str]) -> str:
    """The claim ``assay new`` writes: a citation of ``source``, one assertion and the ``checks`` it rests on."""
    module = verifier_path(rid)
    return CLAIM.format(
        id=rid,
        source=source,
        evidence="".join(f"      - {{check: {c}, stance: supports}}\n" for c in checks),
        checks="".join(CHECK.format(check=c, verifier=f"{module}::{stub_test(c)}", mark=THRESHOLD_MARK) for c in checks),
    )


def verifier_text(rid: str, checks: list[str]) -> str:
    """The verifier stub ``assay new`` writes beside the claim: one test per check, seeded, with a control and a figure."""
    return VERIFIER.format(id=rid, tests="".join(TEST.format(id=rid, check=c, test=stub_test(c)) for c in checks))


@dataclass(frozen=True)
class Placeholders:
    """The texts ``assay new`` writes for a person to replace, and the fields it writes them to: those of each folder
    as one nested mapping (``"*"``: every list item), where ``None`` marks a field's end and holds its number."""

    texts: frozenset[str]
    tries: dict[str, dict]


@cache
def placeholders() -> Placeholders:
    """What a record that is not finished still holds: prose and dummy addresses, not ids or dates."""
    texts: set[str] = set()
    tries: dict[str, dict] = {}
    templates = RECORD_TEMPLATES | {"claims": claim_text("X-000", "LIT-000", ["x"]) + LEGACY}
    for folder, text in templates.items():
        data = yaml.safe_load(text.format(id="X-000", year=2000, date="2000-01-01") if folder != "claims" else text)
        found = [(path, v) for path, v in _strings(data, ()) if " " in v or "replace-me" in v]
        texts |= {" ".join(v.split()) for _, v in found}
        trie = tries[folder] = {}
        for number, path in enumerate(dict.fromkeys(path for path, _ in found)):
            node = trie
            for part in path:
                node = node.setdefault(part, {})
            node[None] = number
    return Placeholders(frozenset(texts), tries)


@dataclass(frozen=True)
class Scaffolded:
    """What the check ``assay new`` writes compares: its metric names, and the values of its thresholds (each on a
    line that carries ``MARK``)."""

    metrics: frozenset[str]
    values: frozenset[float]


@cache
def scaffolded() -> Scaffolded:
    """The metric names and threshold values of the check ``assay new`` writes: stand-ins that nobody measured."""
    check = yaml.safe_load(claim_text("X-000", "LIT-000", ["x"]))["checks"][0]
    return Scaffolded(frozenset(m["name"] for m in check["metrics"]), frozenset(float(e["value"]) for e in check["expect"]))


def marks(raw: bytes) -> dict[int, int]:
    """Line -> column (both from 1) of ``MARK`` on each line of a record file's bytes that carries it: where
    ``assay new`` wrote a stand-in that is still marked as one."""
    mark = MARK.encode()
    if mark not in raw:
        return {}
    lines = raw.decode("utf-8", "replace").split("\n")
    return {n: line.index(MARK) + 1 for n, line in enumerate(lines, 1) if MARK in line}


def _strings(node: object, path: tuple[str, ...]) -> list[tuple[tuple[str, ...], str]]:
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in _strings(v, path + (k,))]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v, path + ("*",))]
    return [(path, node)] if isinstance(node, str) else []


def in_verifiers(root: Path) -> Iterator[Diagnostic]:
    """A ``placeholder`` diagnostic at each line of ``verify/`` that still carries the stub's ``MARK``
    (a module that cannot be read is reported where the verifiers are indexed, ``assay.records.verifiers``)."""
    for path in sorted((root / "verify").glob("**/*.py")):
        try:
            text = read_regular(root, path).decode("utf-8")
        except (Unreadable, UnicodeDecodeError):
            continue
        if MARK not in text:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            col = line.find(MARK)
            if col >= 0:
                yield Diagnostic(
                    path.relative_to(root).as_posix(),
                    n,
                    col + 1,
                    "placeholder",
                    f"the verifier still holds what assay new wrote: {line[col + len(MARK) :].strip()}",
                    "write it, then delete the mark",
                )
