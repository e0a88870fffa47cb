"""assay.ledger.committed through InputParts.upgrade: a result recorded from a module's bytes before the token digest
is compared by what its committed version ran, on small git repositories built in tmp."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.fingerprints import digest
from assay.ledger import committed
from assay.ledger.inputs import InputParts
from tests.conftest import write_result
from tests.ledger.test_history import commit
from tests.ledger.test_history import git as run_git
from tests.ledger.test_inputs import HELPER, VERIFIER, edit, parts, recorded_from_bytes
from tests.test_cli import assay


@pytest.fixture
def repo(kb_root: Path) -> Path:
    run_git(kb_root, "init", "-q", "-b", "main")
    commit(kb_root, "the knowledge base")
    return kb_root


@pytest.fixture(autouse=True)
def new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """What git answered, as a new process has it: nothing yet."""
    monkeypatch.setattr(committed, "_versions", {})
    monkeypatch.setattr(committed, "_tokens", {})


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """Every git command the engine runs (each still runs)."""
    calls: list[tuple[str, ...]] = []
    output, blobs = committed.output, committed.blobs
    monkeypatch.setattr(committed, "output", lambda cwd, *args: calls.append(args) or output(cwd, *args))
    monkeypatch.setattr(committed, "blobs", lambda cwd, ids, **kw: calls.append(("cat-file", *ids)) or blobs(cwd, ids, **kw))
    return calls


def stale(root: Path, recorded: dict[str, str]) -> list[str]:
    return InputParts(root).stale(recorded, parts(root))


def reword_docstring(root: Path, module: str) -> None:
    path = root / module
    path.write_text(path.read_text().replace('"""', '"""Reworded: ', 1))


@pytest.mark.parametrize("module", [VERIFIER, HELPER])
def test_a_result_recorded_from_committed_bytes_stays_fresh_after_a_docstring_edit(repo, module):
    recorded = recorded_from_bytes(repo)
    reword_docstring(repo, module)
    assert stale(repo, recorded) == []


def test_a_result_recorded_from_committed_bytes_stays_fresh_after_the_edit_is_committed_too(repo):
    recorded = recorded_from_bytes(repo)
    reword_docstring(repo, HELPER)
    (repo / HELPER).write_text((repo / HELPER).read_text() + "\n# and a comment\n")
    commit(repo, "words")
    assert stale(repo, recorded) == []


def test_a_result_recorded_from_committed_bytes_is_stale_after_a_code_edit_with_todays_reason(repo):
    recorded = recorded_from_bytes(repo)
    edit(repo / HELPER, "SEED = 0", "SEED = 1")
    assert stale(repo, recorded) == ["verify/helpers.py changed"]


def test_a_result_recorded_from_bytes_never_committed_is_stale_after_a_docstring_edit(repo):
    edit(repo / HELPER, "SEED = 0", "SEED = 2")  # run from these bytes, never committed
    recorded = recorded_from_bytes(repo)
    reword_docstring(repo, HELPER)
    assert stale(repo, recorded) == ["verify/helpers.py changed"]


def test_a_made_up_byte_digest_matches_no_committed_version_and_stays_stale(repo):
    recorded = {**parts(repo), "code:verify/helpers.py": "0123456789abcdef"}
    assert stale(repo, recorded) == ["verify/helpers.py changed"]


def test_the_committed_bytes_of_another_file_are_not_taken_for_this_one(repo):
    # the path is asked as named: a digest of the verifier's committed bytes recorded as the helper's finds nothing
    recorded = {**recorded_from_bytes(repo), "code:verify/helpers.py": digest((repo / VERIFIER).read_bytes())}
    assert stale(repo, recorded) == ["verify/helpers.py changed"]


def test_a_path_is_asked_literally_never_as_a_pattern(repo, asked):
    recorded = {**parts(repo), "code:verify/*.py": digest((repo / HELPER).read_bytes())}
    assert InputParts(repo).upgrade(recorded) == recorded
    assert [a[-1] for a in asked if "log" in a] == ["verify/*.py"] and "--literal-pathspecs" in asked[0]


def test_without_a_repository_git_is_not_asked_and_a_docstring_edit_stales_as_before(kb_root, asked):
    recorded = recorded_from_bytes(kb_root)
    reword_docstring(kb_root, HELPER)
    assert (stale(kb_root, recorded), asked) == (["verify/helpers.py changed"], [])


def test_without_git_installed_a_docstring_edit_stales_as_before_and_nothing_fails(repo, monkeypatch, tmp_path):
    recorded = recorded_from_bytes(repo)
    reword_docstring(repo, HELPER)
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert stale(repo, recorded) == ["verify/helpers.py changed"]


def test_uncommitted_bytes_equal_to_the_recorded_digest_are_fresh_without_asking_git(repo, asked):
    reword_docstring(repo, HELPER)  # not committed
    recorded = recorded_from_bytes(repo)
    assert (stale(repo, recorded), asked) == ([], [])


def test_git_is_asked_once_per_path_in_a_process_however_many_results_read_it(repo, asked):
    first = recorded_from_bytes(repo)
    reword_docstring(repo, HELPER)
    commit(repo, "a docstring")
    second = recorded_from_bytes(repo)
    edit(repo / HELPER, "Reworded: ", "Reworded again: ")
    assert [stale(repo, first), stale(repo, second), stale(repo, first)] == [[], [], []]
    logs = [a for a in asked if "log" in a]
    assert [a[-1] for a in logs] == ["verify/helpers.py"]  # one log; the second digest's one blob read on its own
    assert len([a for a in asked if a[0] == "cat-file"]) == 2


def test_a_committed_version_larger_than_assay_reads_is_passed_over(repo, monkeypatch):
    recorded = recorded_from_bytes(repo)
    monkeypatch.setattr(committed, "MAX_BYTES", 10)
    reword_docstring(repo, HELPER)
    assert stale(repo, recorded) == ["verify/helpers.py changed"]


def test_a_committed_version_is_tokenized_never_run(repo):
    ran = repo / "ran"
    (repo / HELPER).write_text(f'"""Writes a file when run."""\nopen({str(ran)!r}, "w").close()\nSEED = 0\n')
    commit(repo, "a helper that writes")
    recorded = recorded_from_bytes(repo)
    reword_docstring(repo, HELPER)
    assert (stale(repo, recorded), ran.exists()) == ([], False)


def test_a_file_outside_the_knowledge_base_is_never_looked_up_in_history(tmp_path, kb_root, asked):
    (tmp_path / "beside.py").write_text("X = 1\n")
    run_git(tmp_path, "init", "-q", "-b", "main")
    commit(tmp_path, "a repository around the knowledge base, with a file beside it")
    (tmp_path / "beside.py").write_text('"""Words."""\nX = 1\n')
    recorded = {"code:../beside.py": digest(b"X = 1\n"), f"code:{tmp_path / 'beside.py'}": digest(b"X = 1\n")}
    assert (InputParts(kb_root).upgrade(recorded), asked) == (recorded, [])


def test_status_reports_no_stale_result_after_a_docstring_edit_of_a_verifier_recorded_from_committed_bytes(repo, capsys):
    path = repo / "verify" / "test_theory085.py"
    old = {"code:verify/test_theory085.py": digest(path.read_bytes())}
    write_result(repo, "THEORY-085", "log-n-cap", "cpu", "passed", parts=old, excess=0.0)
    commit(repo, "a result recorded from the verifier's bytes")
    edit(path, "tied by a module-level marker", "tied to its claim by a module-level marker")
    assert assay(repo, "status") == 0
    assert "stale" not in capsys.readouterr().out
    edit(path, '"excess", 0.0', '"excess", 0.5')
    assert assay(repo, "status") == 0
    assert "    log-n-cap.cpu is stale: verify/test_theory085.py changed" in capsys.readouterr().out.splitlines()
