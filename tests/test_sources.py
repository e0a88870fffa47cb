"""assay.sources (`assay sources verify`) and assay.copies: a source's passages against a local copy of its text."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import cli
from assay.bibliography import Copy
from assay.copies import html_text, latex_text
from assay.sources import with_copies
from tests.conftest import FIXTURES

COPIES = FIXTURES.parent / "copies"
SHA = {
    "LIT-590.txt": "25645146507beb1849ec28dda0bdcc85fa4108b3fab647f66841468458c54f50",
    "LIT-590.html": "4eba9af0928f8d5efbbd4298e6b8ab938a16d457a8e29cc4fe7e4b60992753e7",
    "LIT-590.tex": "be61483be94a50754613e348149d6af0ff8adee2b7b1b97f2d08a149c5d14101",
    "LIT-590.pdf": "4f53254fee3329e7ccdf3083802d9c4c86afafb1b172d2a734bf9e107aea1679",  # the .txt typeset by matplotlib
}


def verify(root: Path, *argv: str) -> int:
    return cli.main(["--root", str(root), "sources", "verify", *argv])


@pytest.fixture
def today(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr("assay.sources._today", lambda: "2026-12-01")
    return "2026-12-01"


@pytest.mark.parametrize(
    ("name", "fmt"), [("LIT-590.txt", "text"), ("LIT-590.html", "html"), ("LIT-590.tex", "latex"), ("LIT-590.pdf", "pdf")]
)
def test_a_clean_copy_holds_every_passage_and_its_sha256_is_recorded(kb_root, capsys, today, name, fmt):
    before = (kb_root / "sources" / "LIT-590.yaml").read_text()
    assert verify(kb_root, "LIT-590", "--copy", str(COPIES / name)) == 0
    assert capsys.readouterr().out == (
        f"LIT-590: 2 of 2 passages read from 'arXiv v3' are in {name} ({fmt}, sha256 {SHA[name]}); "
        "recorded under copies: in sources/LIT-590.yaml\n"
    )
    assert (kb_root / "sources" / "LIT-590.yaml").read_text() == before + (
        f'copies:\n  - {{version: "arXiv v3", file: "{name}", sha256: "{SHA[name]}", format: {fmt}, checked: "{today}"}}\n'
    )
    assert cli.main(["--root", str(kb_root), "check"]) == 0


def test_a_copy_where_a_passage_was_altered_fails_shows_the_difference_and_records_nothing(make_kb, capsys):
    root = make_kb("passage-not-in-copy")
    before = (root / "sources" / "LIT-590.yaml").read_text()
    assert verify(root, "LIT-590", "--copy", str(root / "copy.txt")) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[:2] == [
        "sources/LIT-590.yaml:17:5: error[passage-not-in-copy]: passage 1 of LIT-590 (at '§3.3') is not in copy.txt; "
        "the nearest words there (99% alike): …ning good representation{+s+}.",
        "  hint: [-x-] is the copy's, {+x+} the passage's; correct the passage, or check that the copy is 'arXiv v3'",
    ]
    assert out.splitlines()[2].endswith("; nothing recorded")
    assert (root / "sources" / "LIT-590.yaml").read_text() == before


def test_a_passage_in_the_copy_under_other_words_than_its_prefix_is_a_warning(make_kb, capsys, today):
    root = make_kb("passage-context")
    assert verify(root, "LIT-590", "--copy", str(root / "copy.txt")) == 0
    assert capsys.readouterr().out.splitlines()[:2] == [
        "sources/LIT-590.yaml:18:5: warning[passage-context]: passage 1 of LIT-590 (at '§3.3') is in copy.txt, but "
        "its prefix 'Our encoders both have Batch Normalization.' is 'Both our encoders have Batch Normalization.' there",
        "  hint: take the prefix and suffix from the copy: the few words on either side of the passage",
    ]


def test_without_an_id_the_source_is_the_one_whose_passages_the_copy_holds(kb_root, capsys, today):
    assert verify(kb_root, "--copy", str(COPIES / "LIT-590.txt")) == 0
    assert capsys.readouterr().out.startswith("LIT-590: 2 of 2 passages")


def test_a_copy_verified_again_replaces_its_entry_and_keeps_the_others(kb_root, today):
    for name in ("LIT-590.txt", "LIT-590.html", "LIT-590.txt"):
        assert verify(kb_root, "LIT-590", "--copy", str(COPIES / name)) == 0
    text = (kb_root / "sources" / "LIT-590.yaml").read_text()
    assert text.count("copies:") == 1 and text.count(SHA["LIT-590.txt"]) == 1 and text.count(SHA["LIT-590.html"]) == 1


def test_the_copies_block_is_replaced_where_it_stands_and_what_follows_it_stays():
    entry = Copy(version="v3", file="paper.txt", sha256="0" * 64, format="text", checked="2026-12-01")
    text = "id: LIT-1\ncopies:\n  - {version: v2}\n  - {version: v1}\n\nnote: kept\n"
    assert with_copies(text, [entry]) == (
        'id: LIT-1\ncopies:\n  - {version: "v3", file: "paper.txt", sha256: "' + "0" * 64 + '", format: text, '
        'checked: "2026-12-01"}\n\nnote: kept\n'
    )


def test_passages_read_from_another_version_are_not_checked_against_the_copy(kb_root, capsys, today):
    assert verify(kb_root, "LIT-590", "--copy", str(COPIES / "LIT-590.txt"), "--version", "arXiv v1") == 2
    assert capsys.readouterr().err == "assay: error: LIT-590 keeps no passage read from 'arXiv v1'\n"


def test_a_pdf_that_is_no_pdf_or_holds_no_text_is_refused_with_the_way_out(kb_root, tmp_path, capsys):
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(b"%PDF-1.5\n")
    assert verify(kb_root, "LIT-590", "--copy", str(pdf)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"assay: error: {pdf}: cannot be read as a PDF (") and err.endswith(
        "); pass its HTML or LaTeX source instead\n"
    )


def test_an_altered_pdf_copy_fails_as_an_altered_text_copy_does(kb_root, tmp_path, capsys):
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["pdf.fonttype"] = 42
    import matplotlib.pyplot as plt

    lines = (COPIES / "LIT-590.txt").read_text().replace("good repre-", "bad repre-").splitlines()
    fig = plt.figure(figsize=(6, 3))
    for i, line in enumerate(lines):
        fig.text(0.03, 1 - (i + 1) / (len(lines) + 1), line, fontsize=9)
    altered = tmp_path / "altered.pdf"
    fig.savefig(altered)
    plt.close(fig)
    assert verify(kb_root, "LIT-590", "--copy", str(altered)) == 1
    out = capsys.readouterr().out
    assert "error[passage-not-in-copy]: passage 1 of LIT-590 (at '§3.3') is not in altered.pdf" in out
    assert out.rstrip().endswith("; nothing recorded")


def test_a_copy_that_holds_no_passage_of_any_source_asks_for_the_id(kb_root, tmp_path, capsys):
    other = tmp_path / "other.txt"
    other.write_text("Nothing cited here.\n")
    assert verify(kb_root, "--copy", str(other)) == 2
    assert "other.txt holds no passage of any source; name the source" in capsys.readouterr().err


def test_html_loses_its_markup_scripts_and_styles_and_keeps_its_words():
    page = "<html><head><style>p{}</style></head><body><p>a <em>b</em>&nbsp;c</p><script>x</script></body></html>"
    assert html_text(page).split() == ["a", "b", "c"]


def test_latex_loses_comments_commands_and_citations_and_typesets_quotes_and_dashes():
    assert latex_text("A \\emph{b} ``c'' d--e~\\cite{x}. % gone\n\\% kept") == "A b “c” d–e. \n% kept"


def test_the_fixture_copies_are_the_files_whose_sha256_the_tests_expect():
    import hashlib

    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(COPIES.iterdir())} == SHA


@pytest.fixture
def arxiv(tmp_path, monkeypatch):
    """A local server standing in for arXiv, serving the fixture PDF at /pdf/1911.05722v3."""
    import functools
    import http.server
    import shutil
    import threading

    served = tmp_path / "served"
    (served / "pdf").mkdir(parents=True)
    shutil.copy(COPIES / "LIT-590.pdf", served / "pdf" / "1911.05722v3")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("ASSAY_ARXIV_URL", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    yield server
    server.shutdown()


def test_fetch_downloads_the_pinned_version_into_the_cache_and_verify_reads_it(kb_root, arxiv, tmp_path, capsys, today):
    assert cli.main(["--root", str(kb_root), "sources", "fetch", "LIT-590"]) == 0
    out = capsys.readouterr().out.splitlines()
    saved = tmp_path / "cache" / "sources" / "LIT-590-1911.05722v3.pdf"
    port = arxiv.server_address[1]
    assert out[0] == (
        f"LIT-590: http://127.0.0.1:{port}/pdf/1911.05722v3 saved as {saved} ({saved.stat().st_size:,} bytes, "
        f"sha256 {SHA['LIT-590.pdf']})"
    )
    assert out[1] == f"check its passages against it: assay sources verify LIT-590 --copy {saved}"
    assert verify(kb_root, "LIT-590", "--copy", str(saved)) == 0
    assert "2 of 2 passages read from 'arXiv v3' are in LIT-590-1911.05722v3.pdf (pdf, sha256" in capsys.readouterr().out


def test_fetch_without_a_network_says_so_and_how_to_go_on(kb_root, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ASSAY_ARXIV_URL", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    assert cli.main(["--root", str(kb_root), "sources", "fetch", "LIT-590"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("assay: error: could not download http://127.0.0.1:9/pdf/1911.05722v3 (")
    assert err.endswith("); where there is no network, save a copy by hand\n")
    assert not (tmp_path / "cache" / "sources").exists()
