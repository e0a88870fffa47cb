"""Every statement of the seed documents stands in some record (issue: content from the seeds).

The seeds live in ``../shared/seeds`` beside the repository (CI lays a copy of shared/ there); the test
skips where they are absent. A sentence counts as placed when its words, with quotes and dashes
normalised, occur in the text of some claim, source or decision record.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT.parent / "shared" / "seeds"

#: Seed sentences that records hold as structured fields rather than as text, with where they went.
AS_FIELDS = {
    "(2019), lit-590 - arxiv-1911.05722, §3.3, and chen et al.": "LIT-590 identifiers.arxiv and SOTA-364's citation locators",
    "(2020), lit-591 - arxiv-2002.05709, §2.2.": "LIT-591 identifiers.arxiv and SOTA-364's citation locators",
    "lit-590 because simclr's state-of-the-art table runs the comparison directly (adr-011);": "LIT-591 compared_against",
}


def normalise(text: str) -> str:
    for a, b in (("’", "'"), ("‘", "'"), ("“", '"'), ("”", '"'), ("—", "-"), ("–", "-")):
        text = text.replace(a, b)
    return re.sub(r"\s+", " ", text).strip().lower()


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def seed_sentences() -> Iterator[tuple[str, str]]:
    for seed in sorted(SEEDS.glob("*.txt")):
        for line in seed.read_text(encoding="utf-8").splitlines():
            for sentence in re.split(r"(?<=[.!?:;])\s+|\s+[-•]\s+", line):
                text = normalise(sentence.strip(" •-"))
                if len(text.split()) >= 5:  # headings and code fragments are not statements
                    yield seed.name, text


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the seed documents (../shared/seeds) are not beside this checkout")
def test_every_seed_statement_stands_in_some_record() -> None:
    records = [p for folder in ("claims", "sources", "decisions") for p in sorted((ROOT / folder).glob("*.yaml"))]
    corpus = normalise(" ".join(s for p in records for s in strings(yaml.safe_load(p.read_text(encoding="utf-8")))))
    missing = [f"{seed}: {text}" for seed, text in seed_sentences() if text.rstrip(".:;") not in corpus and text not in AS_FIELDS]
    assert missing == [], "seed sentences found in no record:\n" + "\n".join(missing)
