"""The guide's example (``docs/examples/groupnorm``): a knowledge base `assay check` passes, whose verifier verifies
its claim and can fail, whose site builds, and whose commands print what the guide's transcripts show."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assay import cli

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "groupnorm"
GUIDE = ROOT / "site" / "guide" / "adding-a-claim.md"
VERIFIER = "verify/test_sota001_groupnorm.py"


def transcripts() -> dict[str, list[str]]:
    """The guide's transcripts (```text blocks that open with ``$ command``), by what each shows."""
    blocks = re.findall(r"^```text\n\$ (.+?)\n(.*?)^```", GUIDE.read_text(encoding="utf-8"), re.S | re.M)
    names = ["measure", "check", "check-changed-quote", "verify", "verify-with-the-effect", "show"]
    assert [command for command, _ in blocks] == [
        "pytest verify --measure --claim SOTA-001 --measure-seeds 20",
        "assay check --claim SOTA-001",
        "assay check --claim SOTA-001",
        "pytest verify --claim SOTA-001",
        "pytest verify --claim SOTA-001",
        "assay show SOTA-001",
    ]
    return {name: [line for line in body.splitlines() if line != "…"] for name, (_, body) in zip(names, blocks)}


def assert_shows(output: str, transcript: list[str]) -> None:
    """Each line of ``transcript`` is within a line of ``output``, in order (runs of spaces read as one)."""
    lines = iter(" ".join(line.split()) for line in output.splitlines())
    for want in transcript:
        want = " ".join(want.split())
        assert any(want in line for line in lines), f"{want!r} is not in the output, in order:\n{output}"


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A knowledge base `assay init` starts, with its example claim replaced by the guide's, as the guide says: in
    git, with nothing committed yet."""
    root = tmp_path / "my-kb"
    assert cli.main(["init", str(root)]) == 0
    for rel in ("claims/SOTA-001.yaml", "sources/LIT-001.yaml", "verify/test_sota001_example.py"):
        (root / rel).unlink()
    shutil.copytree(EXAMPLE, root, dirs_exist_ok=True)
    git(root, "init", "-q")
    return root


@pytest.fixture
def kb(example: Path) -> Path:
    """The example with the record, its expectations and the verifier committed, as before the ledger's run."""
    commit(example, "the claim, before its run")
    return example


def git(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "g",
        "GIT_AUTHOR_EMAIL": "g@g",
        "GIT_COMMITTER_NAME": "g",
        "GIT_COMMITTER_EMAIL": "g@g",
    }
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True).stdout


def commit(root: Path, message: str) -> str:
    """Everything in ``root`` committed; the commit's short hash, as `assay history` prints it."""
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)
    return git(root, "rev-parse", "--short=8", "HEAD").strip()


def assay(root: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    status = cli.main(["--root", str(root), *args])
    out, err = capsys.readouterr()
    return status, out + err


def verify(root: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """``pytest verify --claim SOTA-001`` in ``root``, on the CPU, as a user runs it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    command = [sys.executable, "-m", "pytest", "verify", *options, "--claim", "SOTA-001", "--device", "cpu"]
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=300)


def test_the_guide_shows_every_file_of_the_example_as_it_is() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    shown = set(re.findall(r"<!-- BEGIN file docs/examples/groupnorm/(\S+) -->", text))
    files = {p.relative_to(EXAMPLE).as_posix() for p in EXAMPLE.rglob("*") if p.is_file() and p.stat().st_size}
    assert shown == files == {"sources/LIT-001.yaml", "claims/SOTA-001.yaml", VERIFIER}
    # that the copies are current: tests/test_reference.py, which renders the guide's generated sections


def test_assay_check_passes_the_example_and_catches_a_quote_changed_by_one_character(kb, capsys) -> None:
    shown = transcripts()
    status, output = assay(kb, capsys, "check", "--claim", "SOTA-001")
    assert status == 0
    assert_shows(output, shown["check"])
    claim = kb / "claims" / "SOTA-001.yaml"
    claim.write_text(claim.read_text().replace("  GN's computation is independent", "  GN computation is independent"))
    status, output = assay(kb, capsys, "check", "--claim", "SOTA-001")
    assert status == 1
    assert_shows(output, shown["check-changed-quote"])


def test_the_verifier_verifies_the_claim_on_the_cpu_and_cuda_not_run_leaves_it_verified(kb, capsys) -> None:
    shown = transcripts()
    run = verify(kb)
    assert run.returncode == 0, run.stdout + run.stderr
    assert_shows(run.stdout, shown["verify"])
    assert {p.name for p in (kb / "results" / "SOTA-001").glob("*.json")} == {"cross-sample.cpu.json", "alone.cpu.json"}
    status, output = assay(kb, capsys, "show", "SOTA-001")
    assert status == 0
    assert_shows(output, shown["show"])
    assert "status: verified" in output and "assertions: cpu: 1 supported; cuda: not run" in output


def test_the_guides_path_probes_once_for_both_checks_and_every_expectation_reads_registered(example, capsys) -> None:
    pilot = verify(example, "--measure", "--measure-seeds", "20")
    assert pilot.returncode == 0, pilot.stdout + pilot.stderr
    assert "SOTA-001/cross-sample on seeds 0..19:" in pilot.stdout and "SOTA-001/alone on seeds 0..19:" in pilot.stdout
    assert_shows(pilot.stdout, transcripts()["measure"])
    assert not list((example / "results").rglob("*.json")), "a measuring run writes no ledger"
    stated = commit(example, "the claim and its expectations, measured on pilot seeds 0-19")
    run = verify(example)
    assert run.returncode == 0, run.stdout + run.stderr
    ran = commit(example, "the ledger, on seeds 20-24")
    status, output = assay(example, capsys, "history", "SOTA-001")
    assert status == 0
    day = r"\(\d{4}-\d\d-\d\d\)"
    registration = [line[4:] for line in output.splitlines() if re.match(r"    \w+: [\w-]+: ", line)]  # one a metric
    assert [re.sub(day, "(DAY)", line) for line in registration] == [
        f"{metric}: registered: stated at {stated} (DAY), before its first result at {ran} (DAY)"
        for metric in ("gn_cross_sample", "bn_cross_sample", "gn_alone_gap", "bn_alone_gap")
    ]


def test_with_the_model_that_has_the_effect_in_its_place_the_check_fails_and_the_claim_is_contradicted(kb, capsys) -> None:
    verifier = kb / VERIFIER
    text = verifier.read_text()
    assert text.count("nn.GroupNorm(2, 4)") == 1  # in probe_both, which both checks read
    verifier.write_text(text.replace("nn.GroupNorm(2, 4)", "nn.BatchNorm2d(4)"))
    run = verify(kb)
    assert run.returncode == 1, run.stdout + run.stderr
    assert_shows(run.stdout, transcripts()["verify-with-the-effect"])
    status, output = assay(kb, capsys, "show", "SOTA-001")
    assert "status: contradicted" in output


def test_the_examples_site_builds_strict_with_the_claims_page(kb) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q"], cwd=kb, env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    assert "Group norm keeps the samples of a batch apart" in (kb / "build" / "site" / "claims" / "SOTA-001.html").read_text()
