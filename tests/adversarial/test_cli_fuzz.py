"""The CLI under random arguments and random files: never an internal error, never a traceback.

``assay.cli.main(argv)`` runs in-process on a copy of the fixture knowledge base into which random
files have been written (random bytes, YAML-ish text, mutated records, JSON-ish ledger files), with
argument lists drawn from the real commands and options and random strings. Derandomized with a fixed
number of examples, so CI is deterministic.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay import cli

from ..conftest import VALID
from ..test_fuzz import VALUES, YAMLISH

WORDS = [
    "check",
    "new",
    "show",
    "status",
    "graph",
    "export",
    "schema",
    "readme",
    "claim",
    "source",
    "decision",
    "--theory",
    "--focus",
    "--depth",
    "--format",
    "json",
    "dot",
    "mermaid",
    "bibtex",
    "--debug",
    "--root",
    "SOTA-364",
    "THEORY-085",
    "LIT-590",
    "ADR-011",
    "SOTA-999",
    "0",
    "-1",
    "3",
    "99999",
    "",
    "-",
    "--",
    "..",
    "/",
]
ARGV = st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=8)), max_size=6)
COMMANDS = st.sampled_from(
    [
        ["check"],
        ["status"],
        ["show", "SOTA-364"],
        ["show", "SOTA-999"],
        ["graph"],
        ["graph", "--focus", "SOTA-364", "--depth", "2", "--format", "mermaid"],
        ["graph", "--format", "dot"],
        ["export", "json"],
        ["export", "bibtex"],
        ["new", "claim"],
    ]
)

RECORDS = [p.relative_to(VALID).as_posix() for p in sorted(VALID.glob("*/*.yaml"))]
PLACES = st.sampled_from(
    RECORDS
    + [
        "claims/SOTA-999.yaml",
        "sources/LIT-999.yaml",
        "decisions/ADR-999.yaml",
        "claims/LIT-998.yaml",
        "results/SOTA-364/shuffle-bn.cpu.json",
        "results/SOTA-364/bn-cross-sample.cuda.json",
        "results/THEORY-085/log-n-cap.cpu.json",
        "results/SOTA-999/x.cpu.json",
        "results/SOTA-364/shuffle-bn.cpu.top1.svg",
        "verify/test_sota364.py",
        "verify/test_fuzz.py",
    ]
)


IDS = ["SOTA-364", "THEORY-085", "THEORY-090", "LIT-590", "LIT-612", "ADR-011", "SOTA-３６４", "LIT-٥٩٠", "SOTA-1/../x"]
# an id as a quoted YAML string, perhaps with space or a line break around it or look-alike digits in it
TRICKY_ID = st.tuples(st.sampled_from(["", " ", "\n"]), st.sampled_from(IDS), st.sampled_from(["", " ", "\n"])).map(
    lambda t: json.dumps("".join(t), ensure_ascii=False)
)


@st.composite
def mutated(draw) -> tuple[str, bytes]:
    """A fixture record with one field's value replaced: mostly well-formed, oddly valued.

    Half the time the field is one that names a record (``id``, ``source``, ``target``) and the value a
    tricky id, since ids are the keys everything else looks records up by.
    """
    record = draw(st.sampled_from(RECORDS))
    lines = (VALID / record).read_text(encoding="utf-8").splitlines()
    fields = [n for n, ln in enumerate(lines) if ":" in ln and not ln.startswith("#")]
    naming = [n for n in fields if lines[n].strip().lstrip("- ").split(":")[0] in ("id", "source", "target")]
    aim = draw(st.booleans()) and naming
    n = draw(st.sampled_from(naming if aim else fields))
    head = lines[n][: lines[n].index(":") + 1] + " "
    lines[n] = head + draw(TRICKY_ID if aim else st.one_of(YAMLISH, st.text(max_size=20), TRICKY_ID))
    return record, "\n".join(lines).encode("utf-8", "surrogatepass")


CONTENT = st.one_of(
    st.binary(max_size=200),
    YAMLISH.map(lambda t: t.encode("utf-8", "surrogatepass")),
    VALUES.map(lambda v: json.dumps(v).encode()),
    st.dictionaries(
        st.sampled_from(
            [
                "format",
                "claim",
                "check",
                "device",
                "verdict",
                "metrics",
                "figures",
                "inputs",
                "finished",
                "environment",
                "message",
            ]
        ),
        VALUES,
        max_size=8,
    ).map(lambda d: json.dumps(d).encode()),
)
# mostly a record mutated in its own place; else anything anywhere
FILES = st.lists(
    st.one_of(mutated(), mutated(), st.tuples(PLACES, st.one_of(CONTENT, mutated().map(lambda m: m[1])))), max_size=4
)


@settings(
    max_examples=150,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(files=FILES, command=st.one_of(COMMANDS, COMMANDS, COMMANDS, ARGV))  # mostly real commands
def test_the_cli_never_gives_an_internal_error_or_a_traceback(tmp_path_factory, files, command):
    root = tmp_path_factory.mktemp("kb") / "kb"
    shutil.copytree(VALID, root)
    for place, content in files:
        (root / place).parent.mkdir(parents=True, exist_ok=True)
        (root / place).write_bytes(content)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(["--root", str(root), *command])
        except SystemExit as e:  # argparse: a usage error (2) or --help (0)
            status = e.code
    text = out.getvalue() + err.getvalue()
    assert status != 3 and "internal error" not in text and "Traceback" not in text, (command, files, text)
