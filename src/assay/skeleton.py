"""``assay new``: a record with the next free id of its series, and beside a claim the verifier stub of its checks.

The texts are ``assay.records.placeholders``': every one a person is to replace (the claim's citation, its
assertion's words, each check's units and thresholds, the stub's experiment) is flagged by ``assay check`` until
it is replaced; the rest (ids, the verifier's path, the claim marker) is consistent as written, so that the
skeleton fails ``assay check`` with placeholders only.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from assay.diagnostics import UsageProblem
from assay.experiment import SLUG
from assay.files import link_out
from assay.ids import SOURCE_ID
from assay.model import BY_KIND
from assay.records.knowledge_base import next_id
from assay.records.lookup import near
from assay.records.placeholders import RECORD_TEMPLATES, claim_text, verifier_path, verifier_text

#: The check a new claim gets when ``--check`` names none.
DEFAULT_CHECK = "main"


def new_record(root: Path, kind: str, *, theory: bool = False, source: str | None = None, checks: list[str] = ()) -> list[str]:
    """Write the skeleton of a new ``kind`` record (``claim``, ``source``, ``decision``) under ``root``; a claim cites
    ``source`` and has ``checks`` (one, ``DEFAULT_CHECK``, when none is named), each with a test in its verifier stub.
    Returns the paths written, relative to the root. Raises ``UsageProblem`` before writing anything it refuses."""
    series = BY_KIND["theory" if kind == "claim" and theory else kind]
    rid = next_id(root, series.prefix)
    if kind != "claim":
        if source or checks:
            raise UsageProblem("--source and --check are options of assay new claim")
        today = dt.date.today()
        return _write(
            root,
            {
                f"{series.folder}/{rid}.yaml": RECORD_TEMPLATES[series.folder].format(
                    id=rid, year=today.year, date=today.isoformat()
                )
            },
        )
    ids = _check_ids(list(checks) or [DEFAULT_CHECK])
    files = {
        f"{series.folder}/{rid}.yaml": claim_text(rid, _source(root, source), ids),
        verifier_path(rid): verifier_text(rid, ids),
    }
    if not (root / "verify").exists():
        files["verify/__init__.py"] = ""  # verifiers import each other as the package verify
    return _write(root, files)


def _source(root: Path, given: str | None) -> str:
    """The source a new claim cites: one that exists here, named by ``--source``."""
    lit = BY_KIND["source"]
    known = sorted(p.stem for p in (root / lit.folder).glob(f"{lit.prefix}-*.yaml") if re.fullmatch(SOURCE_ID, p.stem))
    if given is None:
        listed = ", ".join(known[:5]) + (", ..." if len(known) > 5 else "")
        have = f"sources here: {listed}" if known else "there is none yet: assay new source starts one"
        raise UsageProblem(f"assay new claim needs --source {lit.prefix}-NNN, the source its citation quotes ({have})")
    if given not in known:
        raise UsageProblem(f"--source {given}: no such source{near(given, known)}")
    return given


def _check_ids(ids: list[str]) -> list[str]:
    for check in ids:
        if not re.fullmatch(SLUG, check):
            raise UsageProblem(f"--check {check}: a check id is lower-case words joined by hyphens (blog-task)")
    repeated = sorted({c for c in ids if ids.count(c) > 1})
    if repeated:
        raise UsageProblem(f"--check {repeated[0]} is given twice; each check has its own id")
    return ids


def _write(root: Path, files: dict[str, str]) -> list[str]:
    """Write each new file, none of which may exist; all are checked before the first is written."""
    for rel in files:
        path = root / rel
        if (why := link_out(root, path.parent)) is not None:
            raise UsageProblem(f"{why}; assay new writes only inside it")
        if path.exists():
            raise UsageProblem(f"{rel} exists already; assay new writes only new files")
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        with open(root / rel, "x", encoding="utf-8") as fh:
            fh.write(text)
    return list(files)
