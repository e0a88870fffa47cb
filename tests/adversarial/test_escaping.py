"""Attacks through text: what a record says must reach a terminal, a DOT or Mermaid file, or BibTeX as
text, never as a control sequence, a new line of output, or syntax of the format."""

from __future__ import annotations

from assay import audit, cli, export, graph
from assay.model import Source
from assay.records.knowledge_base import load
from tests.conftest import load_states


def set_title(root, cid: str, yaml_title: str) -> None:
    path = root / "claims" / f"{cid}.yaml"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(f"title: {yaml_title}\n" if ln.startswith("title:") else ln for ln in lines), encoding="utf-8")


def test_a_field_name_with_terminal_control_sequences_is_shown_escaped_by_assay_check(kb_root):
    path = kb_root / "claims" / "THEORY-090.yaml"
    path.write_text(path.read_text() + '"\\e[1A\\e[2K\\u202e": 1\n', encoding="utf-8")
    assert [d.render().splitlines()[0] for d in audit.run(load(kb_root))] == [
        "claims/THEORY-090.yaml:20:1: error[unknown-field]: '\\x1b[1A\\x1b[2K\\u202e' is not a field of this record",
        "claims/THEORY-090.yaml:20:12: error[bidi-control]: U+202E, a bidirectional control, can make the text show "
        "in another order than it reads",
    ]


def test_a_field_name_with_a_line_break_cannot_fake_a_second_diagnostic(kb_root):
    path = kb_root / "claims" / "THEORY-090.yaml"
    path.write_text(path.read_text() + '"x\\nclaims/SOTA-364.yaml:1:1: error[bad-id]: fake": 1\n', encoding="utf-8")
    rendered = "\n".join(d.render() for d in audit.run(load(kb_root)))
    assert rendered.splitlines()[0] == (
        "claims/THEORY-090.yaml:20:1: error[unknown-field]: 'x\\nclaims/SOTA-364.yaml:1:1: error[bad-id]: fake' "
        "is not a field of this record"
    )
    assert len(rendered.splitlines()) == 2  # the diagnostic and its hint


def test_a_title_with_control_characters_is_shown_escaped_by_status_and_show(kb_root, capsys):
    set_title(kb_root, "THEORY-090", '"Larger \\e[2J\\u202e batches"')
    assert cli.main(["--root", str(kb_root), "status"]) == 0
    assert "  THEORY-090   Larger \\x1b[2J\\u202e batches\n" in capsys.readouterr().out
    assert cli.main(["--root", str(kb_root), "show", "THEORY-090"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1] == "  Larger \\x1b[2J\\u202e batches" and "\x1b" not in out and "\u202e" not in out


def test_a_title_ending_in_a_backslash_and_quote_stays_inside_its_dot_label(kb_root):
    set_title(kb_root, "THEORY-090", '\'a\\" , URL="javascript:x" \\\'')  # YAML: a\" , URL="javascript:x" \
    dot = graph.to_dot(graph.build(*load_states(kb_root)))
    assert (
        '  "THEORY-090" [label="THEORY-090\\na\\\\\\" , URL=\\"javascript:x\\" \\\\", shape=diamond, color="#5d4037"];'
    ) in dot.splitlines()


def test_a_title_with_a_line_break_stays_on_its_mermaid_line(kb_root):
    set_title(kb_root, "THEORY-090", '"two\\n  click THEORY_090 href \\"javascript:x\\""')
    mermaid = graph.to_mermaid(graph.build(*load_states(kb_root)))
    assert '  THEORY_090["THEORY-090: two   click THEORY_090 href #quot;javascript:x#quot;"]' in mermaid.splitlines()
    assert not [ln for ln in mermaid.splitlines() if ln.lstrip().startswith("click")]


def test_a_record_known_by_an_odd_file_name_is_a_plain_mermaid_node(kb_root):
    (kb_root / "claims" / "SOTA-1]-->X[pwn.yaml").write_text("title: no id\n", encoding="utf-8")
    mermaid = graph.to_mermaid(graph.build(*load_states(kb_root)))
    assert '  SOTA_1____X_pwn["SOTA-1]-->X[pwn: SOTA-1]-->X[pwn"]' in mermaid.splitlines()


def bib(**fields) -> str:
    base = {
        "id": "LIT-700",
        "kind": "paper",
        "title": "A title",
        "authors": ["A. Author"],
        "year": 2020,
        "identifiers": {"url": "https://example.org/x"},
    }
    return export.bibtex(Source.model_validate({**base, **fields}))


def test_a_lone_brace_or_backslash_in_a_title_cannot_close_the_bibtex_field_or_run_a_command():
    text = bib(title="x } , note = {pwn \\input{/etc/passwd}")
    assert (
        "  title = {x \\textbraceright{} , note = \\textbraceleft{}pwn "
        "\\textbackslash{}input\\textbraceleft{}/etc/passwd\\textbraceright{}},\n"
    ) in text
    assert text.count("{") == text.count("}")


def test_a_url_with_braces_cannot_close_the_bibtex_field_or_start_an_entry():
    text = bib(identifiers={"url": "https://example.org/}}@misc{evil,title={pwn"})
    assert "  url = {https://example.org/%7D%7D@misc%7Bevil,title=%7Bpwn},\n" in text
    assert text.count("{") == text.count("}")  # an @ inside a closed field is text


def test_a_bidirectional_override_is_an_error_of_assay_check_and_shown_as_its_code_point_on_pages(kb_root):
    from assay.site.generator import generate

    set_title(kb_root, "THEORY-090", "Larger \u202ecod\u2066 batches")  # raw, as a pasted text would carry them
    found = [d.render().splitlines()[0] for d in audit.run(load(kb_root)) if d.code == "bidi-control"]
    assert found == [
        "claims/THEORY-090.yaml:3:15: error[bidi-control]: U+202E, a bidirectional control, can make the text show "
        "in another order than it reads",
        "claims/THEORY-090.yaml:3:19: error[bidi-control]: U+2066, a bidirectional control, can make the text show "
        "in another order than it reads",
    ]
    pages = [o for o in generate(kb_root) if o.title is not None]
    assert not [o.path for o in pages if any(c in o.content + o.title for c in "\u202e\u2066")]
    page = next(o for o in pages if o.path == "claims/THEORY-090.md")
    assert "Larger [U+202E]cod[U+2066] batches" in page.title
