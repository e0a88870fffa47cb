"""assay.corpus.cache: parses kept between runs, used only while the file, the engine and the cache are what they were."""

from __future__ import annotations

import ast
import os
import time
from pathlib import Path

import pytest

from assay import audit, corpus
from assay.corpus import cache
from assay.corpus import forking as bulk
from assay.corpus.cache import ParseCache
from assay.records import knowledge_base, validation
from assay.records.document import Loaded
from assay.records.knowledge_base import linked_out, load


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """The files the loader parses (rather than takes from the cache), in order; the cache lives in tmp_path."""
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "RACY_S", -1.0)  # files written by the test are older than the tick that stamps them
    seen: list[str] = []
    real = validation.load_record

    def counting(root: Path, rel: str, direct: bool = False) -> Loaded:
        seen.append(rel)
        return real(root, rel, direct)

    monkeypatch.setattr(knowledge_base, "load_record", counting)
    return seen


def rendered(root: Path) -> list[str]:
    return [d.render() for d in audit.run(load(root, cache=True))]


def test_a_second_load_parses_nothing_and_gives_the_same_diagnostics(make_kb, parsed):
    root = make_kb("unknown-field")
    first = rendered(root)
    assert len(parsed) == 7 and first[0].startswith("claims/SOTA-380.yaml:")
    parsed.clear()
    assert rendered(root) == first
    assert parsed == []


def test_a_changed_file_alone_is_parsed_again(make_kb, parsed):
    root = make_kb()
    load(root, cache=True)
    parsed.clear()
    path = root / "claims" / "THEORY-090.yaml"
    path.write_text(path.read_text().replace("title: ", "title: Retitled, ", 1))
    kb = load(root, cache=True)
    assert parsed == ["claims/THEORY-090.yaml"]
    assert kb.claims["THEORY-090"].title.startswith("Retitled, ")


def test_a_file_written_within_the_racy_window_is_not_kept(make_kb, parsed, monkeypatch):
    monkeypatch.setattr(cache, "RACY_S", 3600.0)
    root = make_kb()
    load(root, cache=True)
    parsed.clear()
    load(root, cache=True)
    assert len(parsed) == 6


def test_a_corrupt_cache_file_is_ignored_and_replaced(make_kb, parsed):
    root = make_kb()
    load(root, cache=True)
    (store,) = (Path(os.environ["ASSAY_CACHE_DIR"])).glob("*.msgpack")
    store.write_bytes(store.read_bytes()[:-40])  # cut short, as by a crash mid-write
    parsed.clear()
    assert list(load(root, cache=True).claims) == ["SOTA-364", "THEORY-085", "THEORY-090"]
    assert len(parsed) == 6
    parsed.clear()
    load(root, cache=True)
    assert parsed == []


def test_a_cache_folder_others_can_write_is_neither_read_nor_written(make_kb, parsed):
    root = make_kb()
    load(root, cache=True)
    os.chmod(os.environ["ASSAY_CACHE_DIR"], 0o777)
    parsed.clear()
    load(root, cache=True)
    assert len(parsed) == 6


def test_another_version_of_the_engine_starts_afresh(make_kb, parsed, monkeypatch):
    root = make_kb()
    load(root, cache=True)
    monkeypatch.setattr(cache, "_engine", lambda also=(): "another engine")
    parsed.clear()
    load(root, cache=True)
    assert len(parsed) == 6


def test_a_record_reached_through_a_linked_folder_is_never_taken_from_the_cache(make_kb, parsed, tmp_path):
    root = make_kb()
    (root / "data").mkdir()
    (root / "claims").rename(root / "data" / "claims")
    (root / "claims").symlink_to(root / "data" / "claims")  # inside the root: read, but its stamps stand for nothing
    load(root, cache=True)
    parsed.clear()
    kb = load(root, cache=True)
    assert parsed == ["claims/SOTA-364.yaml", "claims/THEORY-085.yaml", "claims/THEORY-090.yaml"]
    assert kb.by_id["SOTA-364"].diagnostics == []


def test_a_records_folder_linked_outside_is_not_read_at_all(make_kb, parsed, tmp_path):
    root = make_kb()
    (root / "claims").rename(tmp_path / "elsewhere")
    (root / "claims").symlink_to(tmp_path / "elsewhere")
    kb = load(root, cache=True)
    assert parsed == ["sources/LIT-590.yaml", "sources/LIT-612.yaml", "decisions/ADR-011.yaml"]
    assert [d.render() for d in linked_out(kb.root)] == [
        "claims/:1:1: error[unreadable-file]: claims/ is a link to a folder outside the knowledge base; nothing in it is "
        "read\n  hint: make claims/ a folder of the knowledge base: move its files in and remove the link"
    ]


def test_a_small_knowledge_base_keeps_no_cache_unless_asked(make_kb, parsed):
    load(make_kb())
    assert not Path(os.environ["ASSAY_CACHE_DIR"]).exists()


def test_the_modules_a_parse_depends_on_import_no_other_module_of_assay():
    # else a change to that module would not start the cache afresh; a ledger reading and a module's imports
    # depend on the modules they name too
    src = Path(cache.__file__).parent.parent
    from assay.ledger.inputs import CACHE_ALSO as INPUTS_ALSO
    from assay.ledger.store import CACHE_ALSO

    for also in [(), CACHE_ALSO, INPUTS_ALSO]:
        kept = set(cache.engine_files(also))
        for path in kept:
            tree = ast.parse(path.read_text())
            for n in ast.walk(tree):
                if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("assay."):
                    target = src.joinpath(*n.module.split(".")[1:])
                    assert target.with_suffix(".py") in kept or target / "__init__.py" in kept, (path.name, n.module)


def test_the_engine_key_covers_every_module_inside_a_package(tmp_path, monkeypatch):
    # a module moved into a package (records/, ledger/) must still start the cache afresh when it changes
    src = Path(cache.__file__).parent.parent
    assert src / "records" / "document.py" in cache.engine_files()
    assert src / "ledger" / "store.py" in cache.engine_files(("ledger.result", "ledger.store"))
    assert set(src.rglob("*.py")) == set(cache.engine_files(("*",)))
    copy = tmp_path / "assay"
    import shutil

    shutil.copytree(src, copy)
    monkeypatch.setattr(cache, "__file__", str(copy / "corpus" / "cache.py"))
    before = cache._engine()
    (copy / "records" / "within.py").write_text((copy / "records" / "within.py").read_text() + "\n# moved\n")
    assert cache._engine() != before


@pytest.fixture
def validated(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The record files whose record a command validated from the data the cache kept (``Loaded.record``), in order."""
    seen: list[str] = []
    real = Loaded.record.fget

    def counting(self: Loaded) -> object:
        if self._record is None and self._derived:
            seen.append(self.path)
        return real(self)

    monkeypatch.setattr(Loaded, "record", property(counting))
    return seen


def test_checking_a_kept_knowledge_base_validates_no_record(make_kb, parsed, validated):
    root = make_kb()
    first = rendered(root)
    parsed.clear()
    assert rendered(root) == first
    assert parsed == [] and validated == []


def test_a_fault_across_records_is_placed_without_validating_a_record(make_kb, parsed, validated):
    root = make_kb()
    rendered(root)
    (root / "sources" / "LIT-590.yaml").unlink()  # cited by SOTA-364, compared against by LIT-612
    parsed.clear()
    found = rendered(root)
    assert [d.split(": ")[0] for d in found if "error[unknown-source]" in d] == [
        "claims/SOTA-364.yaml:8:5",
        "claims/SOTA-364.yaml:20:5",
        "sources/LIT-612.yaml:12:5",
    ]
    assert parsed == [] and validated == []  # placed by the positions the cache kept, no record validated


def test_a_kept_ledger_reading_is_validated_only_when_looked_at_and_a_rewritten_file_is_read_again(kb_root, parsed):
    from assay.ledger.store import read_ledger
    from tests.conftest import write_result

    write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    first = read_ledger(kb_root, cache=True)
    kept = read_ledger(kb_root, cache=True)
    key = ("THEORY-085", "log-n-cap", "cpu")
    assert isinstance(kept.results._plain[key], bytes) and key not in kept.results._made  # not validated yet
    assert kept.results[key] == first.results[key] and kept.stamps[key] is not None
    write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "failed", excess=1.0)
    assert read_ledger(kb_root, cache=True).results[key].verdict == "failed"


def _briefs(root: Path, cache: bool) -> dict:
    from assay import overview

    return overview.briefs(load(root, cache=cache), cache=cache)


def test_a_status_kept_between_runs_is_the_status_computed_afresh_after_each_change(kb_root, parsed, validated):
    from tests.conftest import write_result

    write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    fresh = _briefs(kb_root, cache=False)
    assert fresh["THEORY-085"].status == "verified"
    assert _briefs(kb_root, cache=True) == fresh
    validated.clear()
    assert _briefs(kb_root, cache=True) == fresh
    assert validated == []  # every claim's status kept: no record validated, no result read
    write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "failed", excess=1.0)  # a new result
    assert _briefs(kb_root, cache=True) == _briefs(kb_root, cache=False) != fresh
    assert _briefs(kb_root, cache=True)["THEORY-085"].status == "contradicted"
    verifier = kb_root / "verify" / "test_theory085.py"
    verifier.write_text(verifier.read_text() + "\nEDITED = True\n")  # its code: the result goes stale
    now = _briefs(kb_root, cache=True)
    assert now == _briefs(kb_root, cache=False)
    assert now["THEORY-085"].status == "stale" and "verify/test_theory085.py changed" in now["THEORY-085"].stale[0][2]
    (kb_root / "requirements.lock").write_text("numpy==0.0.1\n")  # a pin: every result goes stale
    now = _briefs(kb_root, cache=True)
    assert now == _briefs(kb_root, cache=False)
    assert "the lock's pin of numpy changed from unpinned to 0.0.1" in now["THEORY-085"].stale[0][2]
    claim = kb_root / "claims" / "THEORY-085.yaml"
    claim.write_text(claim.read_text().replace('unit: "fraction"', 'unit: "ratio"', 1))  # its measurement, in its own file
    now = _briefs(kb_root, cache=True)
    assert now == _briefs(kb_root, cache=False)
    assert "the definition of check log-n-cap in THEORY-085 changed" in now["THEORY-085"].stale[0][2]


def test_files_parsed_by_several_processes_are_kept_as_one_process_parses_them(make_kb, parsed, monkeypatch):
    root = make_kb("unknown-field")
    alone = [d.render() for d in audit.run(load(root, cache=False))]
    parsed.clear()
    monkeypatch.setattr(corpus, "LARGE_FROM", 2)
    monkeypatch.setattr(bulk.threading, "active_count", lambda: 1)  # pytest-xdist's worker runs a thread of its own
    monkeypatch.setattr(bulk.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert rendered(root) == alone
    assert parsed == []  # parsed in forked processes: none of the seven in this one
    assert rendered(root) == alone and parsed == []  # then kept


def test_ledger_files_read_by_several_processes_are_read_as_one_process_reads_them(kb_root, monkeypatch):
    from assay.ledger import store as ledger_store
    from tests.conftest import write_result

    write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    (kb_root / "results" / "THEORY-085" / "nothing.cpu.json").write_text("{not json")  # a broken file: a diagnostic
    alone = ledger_store.read_ledger(kb_root)
    forked: list[int] = []
    real = bulk.pool
    monkeypatch.setattr(bulk, "pool", lambda: forked.append(1) or real())
    monkeypatch.setattr(corpus, "LARGE_FROM", 1)
    monkeypatch.setattr(bulk.threading, "active_count", lambda: 1)  # pytest-xdist's worker runs a thread of its own
    monkeypatch.setattr(bulk.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    shared = ledger_store.read_ledger(kb_root)
    assert forked == [1]  # read by forked processes
    assert dict(shared.results.items()) == dict(alone.results.items()) and len(alone.results) > 0
    assert [d.render() for d in shared.diagnostics] == [d.render() for d in alone.diagnostics] != []
    assert shared.stamps == alone.stamps


def test_a_figure_is_hashed_once_per_change_and_a_changed_figure_is_still_reported(kb_root, parsed, monkeypatch):
    from assay import fingerprints
    from assay.ledger import problems as ledger_problems
    from assay.ledger import store as ledger_store
    from assay.ledger.result import Figure, Result
    from tests.conftest import write_result

    path = write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    r = Result.model_validate_json(path.read_text())
    fig = Figure(
        name="curve",
        file="log-n-cap.cpu.curve.svg",
        sha256=fingerprints.sha256(b"<svg xmlns='http://www.w3.org/2000/svg'>drawn</svg>"),
    )
    ledger_store.write_result(
        kb_root, r.model_copy(update={"figures": [fig]}), {fig.file: "<svg xmlns='http://www.w3.org/2000/svg'>drawn</svg>"}
    )
    read: list[str] = []
    real = ledger_problems.read_regular
    monkeypatch.setattr(ledger_problems, "read_regular", lambda root, p, *a: read.append(p.name) or real(root, p, *a))

    def problems() -> list[str]:
        store = ParseCache(kb_root, "figures")
        found = ledger_problems.figure_problems(kb_root, r.key, ((fig.file, fig.sha256),), store)
        store.save()
        return found

    assert problems() == [] and read == [fig.file]
    assert problems() == [] and read == [fig.file]  # kept: not read again
    (path.parent / fig.file).write_text("<svg xmlns='http://www.w3.org/2000/svg'>another</svg>")
    assert problems() == [f"{fig.file} is not the figure this result drew (its hash differs)"]
    assert read == [fig.file, fig.file]


def test_a_large_cache_written_by_a_forked_process_is_there_for_the_next_reading_and_as_written(make_kb, parsed, monkeypatch):
    root = make_kb()
    monkeypatch.setattr(bulk.threading, "active_count", lambda: 1)  # pytest-xdist's worker runs a thread of its own
    monkeypatch.setattr(bulk.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(cache, "BEHIND_FROM", 1)
    forked: list[int] = []
    real_fork = bulk.os.fork
    monkeypatch.setattr(bulk.os, "fork", lambda: forked.append(1) or real_fork())
    first = load(root, cache=True)
    assert forked and bulk._BEHIND  # written behind, and not yet waited for
    parsed.clear()
    second = load(root, cache=True)  # the reading waits for the writing
    assert not bulk._BEHIND
    assert parsed == []
    assert [f.path for f in second.files] == [f.path for f in first.files]
    assert [d.render() for f in second.files for d in f.diagnostics] == [d.render() for f in first.files for d in f.diagnostics]


def test_work_behind_runs_here_where_no_process_may_be_forked(monkeypatch, tmp_path):
    monkeypatch.setattr(bulk, "can_fork", lambda: False)
    done: list[int] = []
    bulk.behind(lambda: done.append(1))
    assert done == [1] and not bulk._BEHIND


def test_settling_one_name_waits_for_that_work_alone(monkeypatch, tmp_path):
    """Reading one cache waits for the writing of that cache, not for another still being written."""
    monkeypatch.setattr(bulk.threading, "active_count", lambda: 1)
    monkeypatch.setattr(bulk.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    slow, quick = tmp_path / "slow", tmp_path / "quick"
    bulk.behind(lambda: (time.sleep(3), slow.write_text("done")), "slow")
    bulk.behind(lambda: quick.write_text("done"), "quick")
    bulk.settle("quick")
    assert quick.read_text() == "done" and not slow.exists()
    assert list(bulk._BEHIND.values()) == ["slow"]
    bulk.settle()
    assert slow.read_text() == "done" and not bulk._BEHIND


def _first_check_forked(root: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A first check of ``root`` whose records, verifier modules and ledger forked processes read ahead."""

    monkeypatch.setattr(bulk.threading, "active_count", lambda: 1)  # pytest-xdist's worker runs a thread of its own
    monkeypatch.setattr(bulk.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(corpus, "LARGE_FROM", 1)
    audit.ahead(root)
    assert len(bulk._AHEAD) == 3
    kb = load(root)
    bulk.settle()
    found = [d.render() for d in audit.run(kb)]
    monkeypatch.setattr(bulk, "can_fork", lambda: False)  # from now on, whatever is read is read here
    return found


def test_a_first_reading_by_forked_processes_is_kept_and_a_second_run_reads_nothing(kb_root, parsed, monkeypatch):
    from assay.ledger import store as ledger_store
    from assay.records import verifiers
    from tests.conftest import write_result

    write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    (kb_root / "results" / "THEORY-085" / "nothing.cpu.json").write_text("{not json")  # kept with its diagnostic
    parsed.clear()  # writing the result read the claim
    first = _first_check_forked(kb_root, monkeypatch)
    assert parsed == [] and any("nothing.cpu.json" in d for d in first)
    kinds = [_kind(path) for path in sorted(Path(os.environ["ASSAY_CACHE_DIR"]).glob("*.msgpack"))]
    assert sorted(kinds) == ["judgement", "ledger", "records", "verifiers"]
    alone = ledger_store.read_ledger(kb_root)  # as read with no cache
    read: list[str] = []
    real_entry, real_module = ledger_store._read_entry, verifiers.read_module
    monkeypatch.setattr(ledger_store, "_read_entry", lambda root, *item: read.append(item[1]) or real_entry(root, *item))
    monkeypatch.setattr(verifiers, "read_module", lambda root, rel: read.append(rel) or real_module(root, rel))
    assert [d.render() for d in audit.run(load(kb_root))] == first
    assert parsed == [] and read == []  # records, ledger files and verifier modules all kept
    kept = ledger_store.read_ledger(kb_root, cache=True)
    assert read == [] and dict(kept.results.items()) == dict(alone.results.items()) and len(alone.results) == 1
    assert [d.render() for d in kept.diagnostics] == [d.render() for d in alone.diagnostics] != []


def test_a_first_reading_within_the_racy_window_is_not_kept_though_processes_read_it(kb_root, parsed, monkeypatch):
    from tests.conftest import write_result

    write_result(kb_root, "THEORY-085", "log-n-cap", "cpu", "passed", excess=0.0)
    monkeypatch.setattr(cache, "RACY_S", 3600.0)  # every file was changed within the hour
    first = _first_check_forked(kb_root, monkeypatch)
    parsed.clear()
    assert [d.render() for d in audit.run(load(kb_root))] == first
    assert parsed == [f"{folder}/{name}" for folder, name in knowledge_base.record_names(kb_root.resolve())]  # none kept


def _kind(path: Path) -> str:
    """The kind a cache file keeps, from its head (``ParseCache._write``)."""
    import msgspec

    return msgspec.msgpack.decode(path.read_bytes())[2]


def test_a_kept_value_comes_back_as_the_type_its_kind_declares(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "RACY_S", -1.0)
    root = tmp_path / "kb"
    root.mkdir()
    stamp = (1, 2, 3, 4, 5)
    kind = tuple[str, tuple[tuple[str, int], ...], frozenset[str]]
    first = ParseCache(root, "things", value=kind)
    first.put("a.txt", stamp, ("a", (("x", 1),), frozenset({"y"})))
    first.save()
    assert ParseCache(root, "things", value=kind).get("a.txt", stamp) == ("a", (("x", 1),), frozenset({"y"}))
    assert ParseCache(root, "things", value=tuple[int, int]).get("a.txt", stamp) is None  # not of this type: afresh


def test_what_a_verifier_module_runs_is_kept_between_runs_and_not_digested_again(parsed, kb_root, monkeypatch):
    from assay.ledger import inputs as ledger_inputs
    from assay.records import code

    module = "verify/test_theory085.py"
    first = ledger_inputs.InputParts(kb_root, cache=True)
    made = first.code_parts(module)
    first.save()
    monkeypatch.setattr(code, "_form", lambda tree: pytest.fail("digested again"))
    assert ledger_inputs.InputParts(kb_root, cache=True).code_parts(module) == made
    assert made[f"code:{module}"].startswith(code.TREE)
