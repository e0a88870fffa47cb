"""assay.skeleton through `assay new`: a claim with its checks and a verifier stub that fail `assay check` with
placeholders only, check clean once a person replaced them, and run under `pytest verify`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay import cli

#: What a person writes in place of each placeholder of the claim (the quote is a passage of `assay init`'s source).
CLAIM_TEXTS = {
    "A short name for lists and the graph": "Batch statistics spread over a batch",
    "The claim as filed, in the source document's words.": "The spread of a batch is what batch statistics measure.",
    "§ where the quote stands: section, figure, table, page or equation": "Abstract",
    "The source's exact words.": (
        "Training Deep Neural Networks is complicated by the fact that the distribution of each layer's inputs "
        "changes during training, as the parameters of the previous layers change."
    ),
    "One self-contained sentence, in plain words, of what this part of the claim asserts.": (
        "A batch of random inputs has a spread that a constant batch lacks."
    ),
    "How the source's words relate to the filed ones (quoted, paraphrased, not in the source, contradicted).": (
        "The source names the distribution of inputs; the spread is our reading of it."
    ),
    "The sentence of the claim this check tests.": "The spread of a batch is what batch statistics measure.",
    "the unit of the effect": "standard deviation",
    "What the effect metric measures, in words a reader understands without the code.": (
        "The standard deviation of a batch of 64 Gaussian inputs."
    ),
    "The same measurement on a model without the effect, which must not show it.": "The same of a batch of zeros.",
    "Thresholds not yet measured: run the verifier over its seeds, set each threshold from the spread it shows, and\n"
    "      say here what was measured.": "Seeds 0-4: the effect was 0.96-1.03, the control 0; 0.5 lies between.",
    "kind: quoted": "kind: paraphrased",
}


#: The stub's metrics named for what they measure, in the verifier and the record (`scaffold-threshold` otherwise).
RENAMED = {'evidence.metric("effect"': 'evidence.metric("spread"', 'evidence.metric("control"': 'evidence.metric("zero_spread"'}
#: The record's metrics renamed likewise, and thresholds set from a measurement (randn's sd is about 1, the quiet
#: draw's about 0.01).
MEASURED = {
    "name: effect": "name: spread",
    "name: control": "name: zero_spread",
    '{metric: effect, op: ">", value: 0.5, against: [control]}': '{metric: spread, op: ">", value: 0.8, against: [zero_spread]}',
    '{metric: control, op: "<", value: 0.5, control: true, against: [effect]}': (
        '{metric: zero_spread, op: "<", value: 0.1, control: true, against: [spread]}'
    ),
}


def filled(text: str, replacements: dict[str, str]) -> str:
    for placeholder, mine in replacements.items():
        assert placeholder in text, placeholder
        text = text.replace(placeholder, mine)
    return text


def unmarked(module: str) -> str:
    """The stub with each line's `# assay new:` mark deleted, as a person does once the line is written."""
    return "".join(line.split("  # assay new:")[0].rstrip() + "\n" for line in module.splitlines())


@pytest.fixture
def new_kb(tmp_path, capsys) -> Path:
    """`assay init`, then `assay new claim --source LIT-001 --check blog-task --check zero-batch`."""
    root = tmp_path / "kb"
    assert cli.main(["init", str(root)]) == 0
    argv = ["--root", str(root), "new", "claim", "--source", "LIT-001", "--check", "blog-task", "--check", "zero-batch"]
    capsys.readouterr()
    assert cli.main(argv) == 0
    assert capsys.readouterr().out == "claims/SOTA-002.yaml\nverify/test_sota002.py\n"
    return root


def test_the_skeleton_fails_assay_check_with_placeholders_only_the_citation_and_the_stub_included(new_kb, capsys):
    assert cli.main(["--root", str(new_kb), "check"]) == 1
    out = capsys.readouterr().out.splitlines()
    found = [line for line in out if not line.startswith("  hint")]
    # the thresholds and metric names the stub compares were never measured: a warning each (2 checks x 2)
    assert {line.split("[")[1].split("]")[0] for line in found} == {"placeholder", "scaffold-threshold"}
    places = {line.split(": error")[0].rsplit(":", 2)[0] + ":" + line.split("'")[1] for line in found if "'" in line}
    assert "claims/SOTA-002.yaml:citations[0].locator" in places and "claims/SOTA-002.yaml:citations[0].quote" in places
    assert "claims/SOTA-002.yaml:checks[1].metrics[0].unit" in places and "claims/SOTA-002.yaml:checks[1].note" in places
    assert sum(line.startswith("verify/test_sota002.py:") for line in found) == 5  # the module's docstring, two per test
    assert len(found) == 24 + 4
    run = verify(new_kb)  # the stub runs at once, before anything is replaced
    assert run.returncode == 0, run.stdout + run.stderr


def verify(root: Path) -> subprocess.CompletedProcess[str]:
    """`python -m pytest verify` on the new claim, in the knowledge base's folder."""
    argv = [sys.executable, "-m", "pytest", "verify", "-q", "--device", "cpu", "--claim", "SOTA-002"]
    return subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=300)


def test_once_its_placeholders_are_replaced_the_claim_checks_clean_and_its_stub_verifies(new_kb, capsys):
    record, module = new_kb / "claims" / "SOTA-002.yaml", new_kb / "verify" / "test_sota002.py"
    record.write_text(filled(filled(record.read_text(), CLAIM_TEXTS), MEASURED))
    module.write_text(unmarked(filled(module.read_text(), {"the unit of the effect": "standard deviation"} | RENAMED)))
    assert cli.main(["--root", str(new_kb), "check"]) == 0, capsys.readouterr().out
    assert "0 error(s), 0 warning(s) in 3 records" in capsys.readouterr().err

    run = verify(new_kb)
    assert run.returncode == 0, run.stdout + run.stderr
    for check in ("blog-task", "zero-batch"):
        result = json.loads((new_kb / "results" / "SOTA-002" / f"{check}.cpu.json").read_text())
        assert result["verdict"] == "passed"
        quiet = result["metrics"]["zero_spread"]  # a measured condition: small, and not one constant
        assert quiet["unit"] == "standard deviation" and max(quiet["seeds"]) < 0.02 and len(set(quiet["seeds"])) == 5
        assert all(e["discriminates"] for e in result["expectation"])
        assert [f["name"] for f in result["figures"]] == ["per_seed"]


def test_a_unit_changed_in_the_record_but_not_in_the_stub_is_caught_before_it_runs(new_kb, capsys):
    record = new_kb / "claims" / "SOTA-002.yaml"
    record.write_text(filled(record.read_text(), CLAIM_TEXTS))
    assert cli.main(["--root", str(new_kb), "check"]) == 1
    out = capsys.readouterr().out
    assert (
        "verify/test_sota002.py:18:63: error[unit-mismatch]: 'test_blog_task' records metric 'effect' in 'the unit of "
        "the effect', but check 'blog-task' of SOTA-002 declares it in 'standard deviation' (claims/SOTA-002.yaml:32:9)"
    ) in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["claim"], "assay new claim needs --source LIT-NNN, the source its citation quotes (sources here: LIT-001)"),
        (["claim", "--source", "LIT-010"], "--source LIT-010: no such source; did you mean 'LIT-001'?"),
        (["claim", "--source", "LIT-001", "--check", "Blog_Task"], "--check Blog_Task: a check id is lower-case words"),
        (["claim", "--source", "LIT-001", "--check", "a", "--check", "a"], "--check a is given twice"),
        (["decision", "--check", "a"], "--source and --check are options of assay new claim"),
    ],
)
def test_new_refuses_what_it_cannot_scaffold_and_writes_nothing(tmp_path, capsys, argv, message):
    root = tmp_path / "kb"
    cli.main(["init", str(root)])
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    capsys.readouterr()
    assert cli.main(["--root", str(root), "new", *argv]) == 2
    assert capsys.readouterr().err.startswith(f"assay: error: {message}")
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before
