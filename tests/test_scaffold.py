"""assay.scaffold through `assay init`: a new knowledge base that checks clean, verifies and builds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from assay import cli

BIN = Path(sys.executable).parent


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300, env=env)


def test_a_new_knowledge_base_checks_clean_verifies_and_builds_strict(tmp_path, capsys):
    root = tmp_path / "my-kb"
    assert cli.main(["init", str(root)]) == 0
    assert "my-kb/claims/SOTA-001.yaml" in capsys.readouterr().out
    assert cli.main(["--root", str(root), "check"]) == 0
    assert "0 error(s), 0 warning(s) in 2 records" in capsys.readouterr().err

    verified = run([sys.executable, "-m", "pytest", "verify", "-q"], root)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    result = json.loads((root / "results" / "SOTA-001" / "cross-sample.cpu.json").read_text())
    assert (result["verdict"], result["format"]) == ("passed", 2)
    assert result["inputs"]["parts"]["pin:torch"] != "unpinned"  # the lock file pins it

    built = run([str(BIN / "mkdocs"), "build", "--strict"], root)
    assert built.returncode == 0, built.stderr
    assert (root / "build" / "site" / "claims" / "SOTA-001.html").is_file()
    assert (root / "build" / "site" / "assets" / "vendor" / "katex" / "katex.min.js").is_file()


def test_a_record_made_by_assay_new_in_a_new_knowledge_base_finds_its_schema(tmp_path, capsys):
    root = tmp_path / "kb"
    cli.main(["init", str(root)])
    assert cli.main(["--root", str(root), "new", "claim", "--source", "LIT-001"]) == 0
    first = (root / "claims" / "SOTA-002.yaml").read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=../schema/claim.schema.json"
    assert (root / "claims" / first.split("=", 1)[1]).resolve().is_file()


def test_init_refuses_a_folder_that_holds_files(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    assert cli.main(["init", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"assay: error: {tmp_path} is not an empty folder; pick a new one\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
