"""Which tests of a run are verifiers, in which shard, on which device: what the plugin's collection decides.

Pure of state: the plugin's hooks call these with what pytest gives them.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any

import pytest

from assay.diagnostics import UsageProblem
from assay.evidence import limits
from assay.experiment import Check
from assay.files import link_out
from assay.model import Claim
from assay.records.knowledge_base import KnowledgeBase, is_knowledge_base
from assay.records.lookup import near, record_ids


def parse_shard(text: str | None) -> tuple[int, int]:
    """``"2/4"`` -> (2, 4); raises ``pytest.UsageError`` with the way out otherwise."""
    if text is None:
        return 1, 1
    m = re.fullmatch(r"\s*([0-9]+)\s*/\s*([0-9]+)\s*", text)
    if not m or not 1 <= int(m[1]) <= int(m[2]):
        raise pytest.UsageError(f"--shard {text!r}: expected I/N with 1 <= I <= N, e.g. --shard 2/4")
    return int(m[1]), int(m[2])


def claim_marker(item: pytest.Item) -> tuple[str, str] | None:
    """The (claim id, check id) a test's ``claim`` marker names; None for a test that is no verifier."""
    marker = item.get_closest_marker("claim")
    if marker is None:
        return None
    args = list(marker.args) + [marker.kwargs.get(k) for k in ("claim_id", "check_id") if k in marker.kwargs]
    return (str(args[0]) if args else "", str(args[1]) if len(args) > 1 else "")


def verifier_id(item: pytest.Item) -> str:
    """The test as a check's ``verifier:`` names it: its node id without the ``@group`` that pytest-xdist's
    ``--dist loadgroup`` adds to a test marked ``xdist_group`` (``experiment_group``)."""
    groups = {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
    return item.nodeid.removesuffix("@" + "_".join(sorted(groups))) if groups else item.nodeid


def experiment_group(kb: KnowledgeBase, marked: tuple[str, str]) -> str | None:
    """The xdist group of a verifier whose check shares a training run (``experiment:``): one per experiment name,
    whichever claims name it (``training.Experiment`` shares the run across claims)."""
    check = kb.check(*marked)
    return f"experiment.{check.experiment}" if check and check.experiment else None


def shard_of(nodeid: str, n: int) -> int:
    """The shard (0-based, of ``n``) a test belongs to: the same on every machine."""
    return int(hashlib.sha256(nodeid.encode()).hexdigest(), 16) % n


def resolve_device(name: str) -> str:
    """The device a run verifies on: ``cuda`` only where torch sees one; ``auto`` takes it when it does."""
    import torch

    if name == "cuda" and not torch.cuda.is_available():
        raise pytest.UsageError(
            f"--device cuda: torch {torch.__version__} sees no CUDA device on this machine; use --device cpu, or auto"
        )
    if name != "auto":
        return name
    return "cuda" if torch.cuda.is_available() else "cpu"


def prepare(device_option: str) -> str:
    """Set up this process for verifiers and return the device they run on: one intra-op thread (small models
    run many times faster; pytest-xdist uses the cores), a non-interactive matplotlib backend (figures are
    written as SVG), and on CUDA the float32 of the CPU."""
    import matplotlib
    import torch

    torch.set_num_threads(1)
    matplotlib.use("Agg")
    device = resolve_device(device_option)
    if device == "cuda":
        full_float32(torch)
    return device


def wanted(item: pytest.Item, claims: set[str], shard: tuple[int, int]) -> bool:
    """Whether the test is in this run: a verifier of a ``--claim`` named (any, when none is), in this ``--shard``."""
    marker = claim_marker(item)
    if claims and (marker is None or marker[0] not in claims):
        return False
    i, n = shard
    return marker is None or shard_of(verifier_id(item), n) == i - 1


#: The marker of a verifier that costs CPU minutes (``assay.pytest_plugin.MARKERS`` declares it): a ``--stale`` run
#: (``make verify``) leaves it out unless the run asks for it (``asks_for_slow``).
SLOW = "slow"


def asks_for_slow(config: pytest.Config) -> bool:
    """Whether a run asks for slow verifiers: by a marker expression (``-m slow``; any ``-m`` lets markers decide) or by
    naming claims (``--claim``). A ``--stale`` run that does neither leaves them out, so that a newcomer's ``make``
    keeps its budget; one that does, and every run without ``--stale``, runs them."""
    return bool(config.getoption("markexpr", "")) or bool(config.getoption("claim"))


def slow_note(left_out: list[str]) -> str:
    """The line a ``--stale`` run ends with when it left out slow checks due a run: which, and how to run them."""
    return (
        f"left out {len(left_out)} slow check(s) whose result is missing, stale or an error: {', '.join(left_out)} "
        "(pytest verify -m slow, or --claim ID, runs them)"
    )


def full_float32(torch: Any) -> None:
    """float32 on CUDA as on the CPU: no TF32 in matrix products or convolutions (cuDNN's default allows it, with a
    10-bit mantissa), so a tolerance set from CPU runs means the same on a GPU. The environment variable reaches the
    processes a verifier spawns (torch.distributed ranks), which start with the defaults."""
    os.environ["NVIDIA_TF32_OVERRIDE"] = "0"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def check_folders(root: Path, ledger_root: Path) -> None:
    """Raise ``pytest.UsageError`` where the knowledge base's ``verify/`` or the ledger's ``results/`` is a link that
    leaves its root (``files.link_out``): verifiers from outside would run with code Assay cannot read as an
    input, so their results would never go stale, and a result would be written outside."""
    if not is_knowledge_base(root):
        return  # the plugin is inert outside a knowledge base
    for base, folder in ((root, "verify"), (ledger_root, "results")):
        if (why := link_out(base, Path(folder))) is not None:
            raise pytest.UsageError(
                f"{why}; pytest verify runs and writes only inside it (make {folder}/ a folder of the knowledge base)"
            )


def check_wanted(kb: KnowledgeBase, wanted: list[str], checks: list[str]) -> None:
    """Raise ``pytest.UsageError`` for a ``--claim`` that names no valid claim, or a ``--check`` that names no check of
    them, with a "did you mean" (``assay.records.lookup``)."""
    try:
        claims = record_ids(kb, wanted)
        known = sorted({c.id for cid in claims or kb.claims for c in kb.claims[cid].checks})
        whose = f"--claim {' '.join(claims)}" if claims else "this knowledge base"
        for check in checks:
            if check not in known:
                raise UsageProblem(f"--check {check}: no claim of {whose} has a check {check!r}{near(check, known)}")
    except UsageProblem as e:
        raise pytest.UsageError(str(e)) from None


def tie(kb: KnowledgeBase, nodeid: str, cid: str, check_id: str) -> tuple[tuple[Claim, Check] | None, str]:
    """The (claim, check) the test ``nodeid`` marked for ``cid``/``check_id`` verifies, or why it cannot."""
    check = kb.check(cid, check_id)
    if check is None:
        what = f"check '{check_id}', which {cid} does not have" if cid in kb.claims else f"'{cid}', which is not a valid claim"
        return None, f"{nodeid}: the claim marker names {what}; see `assay check`"
    if "[" in nodeid:
        return None, (
            f"{nodeid} is one of several parametrized tests marked for {cid}/{check_id}; a check has one test: give the "
            "values to the verifier as its seeds, or make each its own check"
        )
    if nodeid != check.verifier:
        return None, (
            f"{nodeid} is marked for {cid}/{check_id}, whose verifier is {check.verifier}; "
            "a check has one verifier (see `assay check`)"
        )
    return (kb.claims[cid], check), ""


def add_options(parser: pytest.Parser) -> None:
    """The options of ``pytest verify`` and the ini value of the least wall-clock limit."""
    group = parser.getgroup(
        "assay",
        "Assay claim verification (exit status: an inconclusive check does not fail the run; an unexpected failure, "
        "an error, an unwritten result or a verdict that moved with the same inputs does)",
    )
    add = group.addoption
    add(
        "--device",
        default="auto",
        choices=("auto", "cpu", "cuda"),
        help="device the verifiers run on (auto: cuda when available)",
    )
    add("--claim", action="append", default=[], metavar="ID", help="run only the checks of this claim (exact id; repeatable)")
    add("--shard", default=None, metavar="I/N", help="run the I-th of N deterministic shards")
    add("--stale", action="store_true", help="run only checks whose result on this device is missing, stale or an error")
    add("--no-ledger", action="store_true", help="do not write results/")
    add(
        "--ledger-root",
        default=None,
        metavar="DIR",
        help="write the ledger to DIR/results/ instead of the repository's (a shard's own folder; "
        "`assay merge DIR` brings it in by the ledger's rules)",
    )
    add(
        "--compare",
        action="store_true",
        help="rerun and compare with the ledger (verdict, largest metric change, environment); "
        "results are not replaced, a changed verdict with the same inputs is flagged unstable",
    )
    add("--check", action="append", default=[], metavar="ID", help="with --claim: only this check (repeatable)")
    add(
        "--measure",
        action="store_true",
        help="run the verifiers of --claim (and --check), even of checks the record does not have yet or that have no "
        "expectation; print each metric's seeds, mean, sd, min, max and unit with a YAML stub; judge nothing, write "
        "no ledger",
    )
    add(
        "--measure-seeds",
        type=int,
        default=None,
        metavar="N",
        help="--measure: read N seeds from 0 (default: the record's, else 5)",
    )
    add(
        "--settle-plan",
        default=None,
        metavar="FILE",
        help="a settling run's plan (written by `assay verify --settle`): only its checks run, each on the fresh "
        "seeds it names, and each result keeps the inconclusive one it settles",
    )
    add(
        "--in-process",
        action="store_true",
        help="run verifiers in pytest's own process (for a debugger); without -n each otherwise runs in a forked "
        "child, so that one that kills its process is recorded as a crash and the run goes on",
    )
    parser.addini(
        "assay_wall_floor_s",
        "the least wall-clock limit of a check, in seconds (its CPU limit is the check's `timeout`)",
        default=str(limits.WALL_FLOOR_S),
    )


def select(config: pytest.Config, items: list[pytest.Item], state: Any) -> None:
    """Deselect what this run does not verify: other claims, other shards, fresh results with --stale (and slow
    verifiers the run did not ask for, named in ``state.slow_left_out``), and with a settling plan every check it does
    not plan."""
    from assay.ledger import store
    from assay.status import run_reason

    claims, checks = set(config.getoption("claim")), set(config.getoption("check"))
    ledger = store.read_ledger(state.root) if config.getoption("stale") and not state.settle else None
    keep, drop = [], []
    for item in items:
        selected = wanted(item, claims, state.shard)
        tie = state.ties.get(item.nodeid)
        if selected and tie and checks:
            selected = tie[1].id in checks
        if selected and tie and state.settle:
            selected = f"{tie[0].id}/{tie[1].id}" in state.settle
        if selected and tie:
            # hashed now, before any verifier runs: a file saved during the run is not taken for the one that ran
            parts = state.parts[item.nodeid] = state.inputs.parts(*tie, state.device)
            if ledger is not None:
                selected = run_reason(ledger, (tie[0].id, tie[1].id, state.device), parts, state.inputs) != "fresh"
                if selected and item.get_closest_marker(SLOW) and not asks_for_slow(config):
                    selected = False
                    state.slow_left_out.append(f"{tie[0].id}/{tie[1].id}")
        (keep if selected else drop).append(item)
    if hasattr(config, "workeroutput"):  # xdist: what this worker left out, for the controller's closing line
        config.workeroutput["assay_slow_left_out"] = list(state.slow_left_out)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
