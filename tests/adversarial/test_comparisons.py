"""Attacks on ADR-011: the comparison graph is acyclic by construction, so a source compared against
itself, or sources whose dates do not order them comparing against each other, are errors."""

from __future__ import annotations

from assay import audit
from assay.records.knowledge_base import load


def test_a_source_compared_against_itself_breaks_adr_011(diagnose):
    assert diagnose("compared-against-self") == (
        "sources/LIT-612.yaml:15:5: error[compared-against-self]: LIT-612 is compared against itself\n"
        "  hint: remove the link; a source lists the other sources it compares itself with (ADR-011)"
    )


def test_two_sources_whose_dates_do_not_order_them_cannot_compare_against_each_other(diagnose):
    assert diagnose("compared-against-cycle") == (
        "sources/LIT-590.yaml:14:5: error[compared-against-cycle]: compared_against cycle: LIT-590 -> LIT-612 -> LIT-590; "
        "their dates (2020, 2020-02) do not order them\n"
        "  hint: give each source its date (YYYY-MM-DD) and keep each link only on the later source (ADR-011)"
    )


SOURCE = """\
# yaml-language-server: $schema=../schema/source.schema.json
id: {id}
kind: paper
title: Source {id}
authors: [A. Author]
year: 2021
identifiers:
  url: https://example.org/{id}
compared_against:
{links}"""


def write_sources(root, links: dict[str, list[str]]) -> None:
    for sid, targets in links.items():
        text = "".join(f"  - source: {t}\n    locator: Table 1\n    reason: Same year.\n" for t in targets)
        (root / "sources" / f"{sid}.yaml").write_text(SOURCE.format(id=sid, links=text or "  []\n"), encoding="utf-8")


def test_a_knot_of_same_year_sources_is_one_diagnostic_naming_all_of_them(kb_root):
    # three sources of 2021 in a ring, and a fourth that points into it without closing a cycle
    write_sources(
        kb_root, {"LIT-700": ["LIT-701"], "LIT-701": ["LIT-702"], "LIT-702": ["LIT-700", "LIT-701"], "LIT-703": ["LIT-700"]}
    )
    found = [d.render() for d in audit.run(load(kb_root)) if d.code == "compared-against-cycle"]
    assert found == [
        "sources/LIT-700.yaml:10:5: error[compared-against-cycle]: compared_against cycle: LIT-700 -> LIT-701 -> LIT-702 "
        "-> LIT-700; their dates (2021) do not order them\n"
        "  hint: give each source its date (YYYY-MM-DD) and keep each link only on the later source (ADR-011)"
    ]


def test_sources_that_all_compare_against_each_other_are_one_diagnostic_not_one_per_cycle(kb_root):
    # 15 sources of one year, each compared against the 14 others: more simple cycles than atoms in a planet
    ids = [f"LIT-{n}" for n in range(700, 715)]
    write_sources(kb_root, {sid: [t for t in ids if t != sid] for sid in ids})
    found = [d for d in audit.run(load(kb_root)) if d.code == "compared-against-cycle"]
    assert [(d.path, d.message) for d in found] == [
        (
            "sources/LIT-700.yaml",
            "compared_against cycle: LIT-700 -> LIT-701 -> LIT-700, in a knot of 15 sources compared against one another: "
            + ", ".join(ids)
            + "; their dates (2021) do not order them",
        )
    ]
