"""The line reader (``assay.records.yaml_lines``) is held to libyaml's reading: where it reads a file, the data and
every mark are libyaml's; where it cannot be sure, it reads nothing and libyaml reads the file."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from assay.records import yaml_lines
from assay.records.yaml_safe import MAX_DEPTH, libyaml_marks, read_marks

REPO = Path(__file__).resolve().parents[2]


def libyaml(source: str) -> tuple[object, list[int]] | None:
    try:
        data, marks = libyaml_marks(source)
    except Exception:  # noqa: BLE001 - a refusal, a syntax error, a reader error: the line reader must not read it
        return None
    return (data, marks) if isinstance(data, dict) else None


def assert_same(source: str) -> bool:
    """Whether the line reader read ``source``; where it did, it read what libyaml reads."""
    quick = yaml_lines.read(source, MAX_DEPTH)
    if quick is None:
        return False
    assert libyaml(source) == quick, source
    return True


def records() -> list[Path]:
    return sorted(p for folder in ("claims", "sources", "decisions") for p in (REPO / folder).glob("*.yaml"))


def test_the_knowledge_base_s_records_read_as_libyaml_reads_them_and_most_without_it():
    paths = records()
    read = [p.name for p in paths if assert_same(p.read_text(encoding="utf-8"))]
    assert len(read) >= 0.8 * len(paths), sorted(set(p.name for p in paths) - set(read))


def test_every_fixture_the_line_reader_reads_is_read_as_libyaml_reads_it():
    paths = [p for p in sorted((REPO / "tests").rglob("*.yaml")) if p.is_file()]
    read = sum(assert_same(p.read_bytes().decode("utf-8", "replace")) for p in paths)
    assert read >= 40


SHAPES = {  # text: whether the line reader reads it (it reads what libyaml reads wherever it does)
    "id: SOTA-1\ntitle: A claim  with two spaces   \n": True,
    "# yaml-language-server: $schema=x\n\nid: a # a comment\n  # an indented comment\nn: 1.5\nb: yes\nz: ~\n": True,
    "when: 2024-01-02\nat: 2024-01-02 10:00:00\nbad: 2024-13-45\n": False,
    "a:\n  b:\n    c: [1, 'two', \"three\", four five, ]\n  d: {k: v, m: [x, y], n: 'q'}\n": True,
    "list:\n- a\n- b: 1\n  c: 2\n-   d\nnext: x\n": True,
    "list:\n  - a\n  b: 1\n": False,  # a key at the column of the list's items
    "a: 'it''s'\nb: \"x # y\"\nc: x#y\nd: http://x.org/a:b\n": True,
    "a: >-\n  one\n  two\n\n  three\n\n\nb: |\n  keep\n    indented\n  lines\nc: >\n  clipped\n": True,
    "a: >-\n  one\n    more indented\n": False,  # folding keeps the breaks around it
    "a: >\n  at the end without a break": False,
    "items:\n  - >-\n    folded in a list\n  - |-\n    literal\n": True,
    "a: 1\na: 2\n": False,
    "yes: 1\n": False,
    "a: &x 1\nb: *x\n": False,
    "a: !tag 1\n": False,
    'a: "esc\\n"\n': False,
    "a: plain\n  goes on\n": False,
    "a:\tb\n": False,
    "a: b\r\n": False,
    "a: \u00e9t\u00e9 \u4e2d\nb: [\u00e9, \u4e2d\u6587]\n": True,
    "---\na: 1\n": False,
    "a: b: c\n": False,
    "a: [1, 2\n": False,
    "a: {b: 1, b: 2}\n": False,
    "a: {b:\n": False,  # a flow key that ends its line (a mutated record once read past the line's end)
    "a: [1, {c:\n": False,
    "- a\n- b\n": False,
    "a:\n  - - x\n": False,
    "a: -1\nb: [-1]\nc: -x\n": False,
    "a: -x\nb: --\n": False,
    "a:\n    deep: 1\n  shallow: 2\n": False,
    "a: <<\n": False,
    "a: 0x1F\nb: 1_000\nc: .inf\nd: 0o17\ne: +1\n": True,
}


@pytest.mark.parametrize("text", list(SHAPES))
def test_each_shape_is_read_as_libyaml_reads_it_or_left_to_libyaml(text):
    assert assert_same(text) is SHAPES[text]


def test_deep_nesting_is_left_to_libyaml():
    text = "".join(f"{'  ' * i}k{i}:\n" for i in range(MAX_DEPTH + 2)) + f"{'  ' * (MAX_DEPTH + 2)}v: 1\n"
    assert yaml_lines.read(text, MAX_DEPTH) is None


SNIPPETS = [" ", "  ", "\n", "- ", "-", ":", ": ", "#", " #", "'", '"', "''", "[", "]", ",", "{", "}", "|", "|-", ">",
            ">-", "\t", "*a", "&a", "!x", "yes", "null", "~", "1.5", "2024-01-01", "2024-13-45", "\\", "\u00e4", "\u2028",
            "---", "? ", "0x1f", "<<", "=", "key: v\n", "  - x\n", "1:", "true:"]  # fmt: skip


def mutated(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        line, op = lines[i], rng.random()
        if op < 0.3 and line:
            j = rng.randrange(len(line) + 1)
            line = line[:j] + rng.choice(SNIPPETS) + line[j:]
        elif op < 0.45 and line:
            j = rng.randrange(len(line))
            line = line[:j] + line[j + 1 :]
        elif op < 0.6:
            line = " " + line
        elif op < 0.7:
            line = line[1:] if line.startswith(" ") else line
        elif op < 0.8:
            lines.insert(i, rng.choice(lines))
        elif op < 0.9:
            line += rng.choice(SNIPPETS)
        else:
            lines.insert(i, "")
        lines[i] = line
    out = "\n".join(lines)
    return out.rstrip("\n") if rng.random() < 0.1 else out


def test_mutated_records_are_read_as_libyaml_reads_them_or_left_to_it():
    """Edits of real records (indentation moved, indicators, quotes, tabs and breaks put in): 20,000 of these,
    run while the line reader was written, left 0 differences; this run keeps 2,000 of them."""
    rng = random.Random(20261202)
    texts = [p.read_text(encoding="utf-8") for p in records()]
    read = sum(assert_same(mutated(rng, rng.choice(texts))) for _ in range(2000))
    assert read >= 200  # the reader is tried, not only refused


def test_read_marks_gives_what_libyaml_gives_where_the_line_reader_reads(monkeypatch):
    text = (REPO / "claims" / "SOTA-361.yaml").read_bytes()
    quick = read_marks(text, "claims/SOTA-361.yaml")
    monkeypatch.setattr(yaml_lines, "read", lambda source, depth: None)
    assert read_marks(text, "claims/SOTA-361.yaml") == quick


def test_what_the_line_reader_reads_is_what_the_safe_loader_loads():
    for text in ("a: [1, 2]\nb: {c: d}\n", "a:\n  - x\n  - y: z\n"):
        assert yaml_lines.read(text, MAX_DEPTH) is not None
        assert yaml.safe_load(text) == yaml_lines.read(text, MAX_DEPTH)[0]


def test_the_possessive_row_pattern_cuts_every_line_as_the_plain_one_does():
    """``_ROW``'s parts never give characters back; the lines of every record here and of random text in the characters
    that matter to it (spaces, dashes, colons, keys, comments, quotes, brackets, tabs) are cut as the plain pattern cuts
    them."""
    import re

    plain = re.compile(r"^( *)(- +)?(?:([A-Za-z_][A-Za-z0-9_.-]*):( +|$))?(.*)$", re.M)
    rnd = random.Random(25)
    texts = [p.read_text() for folder in ("claims", "sources", "decisions") for p in sorted((REPO / folder).glob("*.yaml"))]
    texts += ["".join(rnd.choice(" -:ab_.#'\"[]{}\t\n") for _ in range(rnd.randint(0, 80))) for _ in range(20_000)]
    assert all(yaml_lines._ROW.findall(t) == plain.findall(t) for t in texts)


def test_a_value_met_before_is_read_with_the_marks_of_where_it_stands_now():
    """Short scalars and flat flow lists are kept between reads (``functools.lru_cache``): a second meeting, at
    another column and depth, marks its items where they stand, and a kept list too deep is still left to libyaml."""
    text = "a: [x, 'y', 2]\nb: -1\nc:\n  d: [x, 'y', 2]\n  e:\n    - [x, 'y', 2]\n    - -1\n"
    assert assert_same(text) is True
    assert assert_same(text) is True
    assert yaml_lines.read("a: [x, 'y', 2]\n", 1) is None
