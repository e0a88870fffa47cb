"""The index of ``verify/``: which tests exist, which claim and check each is tied to, what each imports.

Read statically (``ast``), so ``assay check`` and ``assay status`` know the verifiers without
importing torch or running anything.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import NamedTuple

import msgspec

from assay import corpus
from assay.diagnostics import Diagnostic, bidi_controls
from assay.files import Miscoded, Unreadable, python_text, read_regular
from assay.fingerprints import Stamp, stamp
from assay.records.code import tree_digest
from assay.records.knowledge_base import inside
from assay.records.metric_calls import Recorded, read


@dataclass(frozen=True)
class Verifier:
    """One test function in ``verify/`` and the claim marker on it (or on its module)."""

    nodeid: str  # verify/test_x.py::test_name
    line: int
    claim: str | None
    check: str | None
    parametrized: bool = False  # a ``parametrize`` marker on it or on its module: pytest would run it several times

    def diag(self, code: str, message: str, hint: str | None = None) -> Diagnostic:
        """A diagnostic at the line of this test in its module."""
        return Diagnostic(self.nodeid.split("::")[0], self.line, 1, code, message, hint)


def _marker(decorators: list[ast.expr], name: str) -> ast.expr | None:
    """The first of ``decorators`` that is the marker ``name`` (``@pytest.mark.NAME(...)``, ``@mark.NAME``), or None."""
    for dec in decorators:
        func = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(func, ast.Attribute) and func.attr == name:
            return dec
    return None


def _marker_args(decorators: list[ast.expr]) -> tuple[str | None, str | None] | None:
    dec = _marker(decorators, "claim")
    if dec is None:
        return None
    # a marker argument counts when it is a literal string; any other keeps its place as None
    given = dec.args if isinstance(dec, ast.Call) else []
    args = [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None for a in given]
    return (args[0] if args else None, args[1] if len(args) > 1 else None)


def _module_markers(tree: ast.Module) -> list[ast.expr]:
    """The markers of a module's ``pytestmark`` (its last assignment at the top of the module, as Python keeps it)."""
    out: list[ast.expr] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets):
            out = stmt.value.elts if isinstance(stmt.value, (ast.List, ast.Tuple)) else [stmt.value]
    return out


class Index(dict[str, Verifier]):
    """The tests of ``verify/`` by node id, the modules that could not be read (path -> why), and what the text of those
    read says against them (``source_problems``)."""

    def __init__(self) -> None:
        super().__init__()
        self.unreadable: dict[str, str] = {}
        self.problems: list[Diagnostic] = []


def scan(root: Path, cache: bool = False) -> Index:
    """Every ``test_*`` function in ``verify/test_*.py`` under ``root``, by node id.

    A module is read by ``read_regular``'s rule: a link leading outside the knowledge base, a FIFO or an
    oversized file is not read; it is listed in ``Index.unreadable`` and none of its tests is indexed.
    ``cache``: keep each module's reading between runs while the file is unchanged (``assay.corpus``).
    """
    out = Index()
    for rel, reading in readings(root, cache).items():
        if isinstance(reading, str):
            out.unreadable[rel] = reading
        else:
            out.update(reading.tests)
            out.problems += reading.problems
    return out


class Reading(NamedTuple):
    """One verifier module as read, from one parse: its tests by node id (``tests_of``), what each records
    (``assay.records.metric_calls.read``), kept as plain data (MessagePack): a command that needs only the tests never
    decodes it, the modules it imports (``module_imports``) and the digest of what it runs: the inputs of its results
    read them, so a large knowledge base parses a module once for its tests and its inputs."""

    tests: dict[str, Verifier]
    calls: bytes
    problems: tuple[Diagnostic, ...] = ()  # what its text says against it (``source_problems``)
    imports: tuple[str, ...] = ()
    code: str | None = None  # the digest of what it runs (``records.code.tree_digest``) where it is UTF-8 and parses

    def recorded(self) -> dict[str, Recorded]:
        """What each test records, by function name."""
        return _CALLS.decode(self.calls)


_CALLS = msgspec.msgpack.Decoder(dict[str, Recorded])


def readings(root: Path, cache: bool = False) -> dict[str, Reading | str]:
    """The ``Reading`` of every ``verify/test_*.py`` under ``root`` by path, or why it cannot be read (the rule of
    ``scan``); ``cache``: keep each reading between runs while the file is unchanged (``assay.corpus``)."""
    store = corpus.ParseCache(root, "verifiers", value=Reading | str) if cache else None
    rels = [path.relative_to(root).as_posix() for path in modules(root)]
    return dict(zip(rels, corpus.kept_or_read(store, rels, partial(_stamp, root), partial(_read_stamped, root), COST)))


def ahead(root: Path) -> None:
    """Start reading every verifier module under the resolved ``root`` (``corpus.ahead``) if the verifiers' cache
    keeps none: ``readings`` takes what was read."""
    if not corpus.kept(root, "verifiers"):
        corpus.ahead(partial(_read_stamped, root), [p.relative_to(root).as_posix() for p in modules(root)], COST)


def modules(root: Path) -> list[Path]:
    """The verifier modules under ``root`` (``verify/**/test_*.py``): none where verify/ is a link that leaves it
    (``knowledge_base.linked_out``)."""
    if not inside(root, "verify"):
        return []
    return sorted((root / "verify").glob("**/test_*.py"))


def _stamp(root: Path, rel: str) -> Stamp | None:
    """The stamp of the module at ``rel`` where it stands for its content (no link on its way), else None."""
    path = root / rel
    return stamp(path) if path.parent.resolve() == path.parent else None


def _read_stamped(root: Path, rels: Sequence[str]) -> list[tuple[Stamp | None, Reading | str]]:
    """``read_module`` of each path with its stamp just before (``_stamp``); a module that could not be read has none:
    it is read again next time."""
    out = []
    for rel in rels:
        current, reading = _stamp(root, rel), read_module(root, rel)
        out.append((None if isinstance(reading, str) else current, reading))
    return out


#: What reading a verifier module costs beside a record (``corpus.large``): its syntax tree is parsed and walked for its
#: tests, what they record, its imports and its code's digest.
COST = 50


def read_module(root: Path, rel: str) -> Reading | str:
    """The ``Reading`` of the module at ``rel`` (relative to ``root``), or why it cannot be read (``Unreadable``).

    A module that does not parse has no tests and records nothing (pytest reports it when it collects the module).
    """
    try:
        source = read_regular(root, root / rel)
    except Unreadable as e:
        return str(e)
    problems, package = tuple(source_problems(rel, source)), ".".join(Path(rel).parent.parts)
    try:
        tree = ast.parse(source.decode("utf-8"))  # as Assay reads it everywhere; a module in another coding is refused
    except (SyntaxError, UnicodeDecodeError, ValueError, RecursionError, MemoryError):
        return Reading({}, msgspec.msgpack.encode({}), problems, tuple(module_imports(source, package)))
    tests, calls = tests_of(tree, rel), msgspec.msgpack.encode(read(tree))
    # Python reads the same tree where the module is UTF-8 with no byte-order mark and declares no other coding
    if _python_coding(source) != "utf-8":
        return Reading(tests, calls, problems, tuple(module_imports(source, package)))
    return Reading(tests, calls, problems, tuple(imported_names(tree, package, source)), tree_digest(tree))


def module_imports(source: bytes, package: str) -> list[str]:
    """``imported_names`` of a module's ``source`` as Python reads it (by its coding cookie), in the dotted ``package``;
    none where Python would not parse it (pytest reports that where it collects the module)."""
    try:
        return imported_names(ast.parse(source), package, source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []


def _python_coding(source: bytes) -> str:
    try:
        return tokenize.detect_encoding(io.BytesIO(source).readline)[0]
    except SyntaxError:
        return ""


def source_problems(rel: str, source: bytes) -> list[Diagnostic]:
    """What a Python module's text says against it, at ``rel``: a coding cookie other than UTF-8 (``files.python_text``:
    Python would run other text than the rules and the site read), and bidirectional controls (text that shows in
    another order than it runs)."""
    try:
        text = python_text(source)
    except Miscoded as e:
        return [Diagnostic(rel, 1, 1, "not-utf8", f"{rel} {e}", "delete the coding line; save the module as UTF-8")]
    except UnicodeDecodeError:
        return []  # Python refuses to run it too; pytest reports it where it collects the module
    return bidi_controls(text, rel)


def tests_of(tree: ast.Module, rel: str) -> dict[str, Verifier]:
    """The ``test*`` functions at the top of a parsed module (at ``rel``) with their claim markers, by node id."""
    out: dict[str, Verifier] = {}
    markers = _module_markers(tree)
    module_marker = _marker_args(markers)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            claim, check = _marker_args(node.decorator_list) or module_marker or (None, None)
            if module_marker and not check and module_marker[0]:
                claim = claim or module_marker[0]
            several = _marker([*node.decorator_list, *markers], "parametrize") is not None
            out[f"{rel}::{node.name}"] = Verifier(f"{rel}::{node.name}", node.lineno, claim, check, several)
    return out


def imported_names(tree: ast.Module, package: str, source: bytes | None = None) -> list[str]:
    """Dotted names of the modules a module imports, absolute, relative or by ``importlib``.

    ``package`` is the dotted package the module sits in (``verify.sub``), for relative imports.
    ``importlib.import_module("x.y")`` and ``__import__("x")`` count when the name is a literal; given the
    module's ``source``, expressions are searched for them only when its text names them.
    Every prefix of a dotted name is listed too: importing ``verify.sub.mod`` runs ``verify/__init__.py``
    and ``verify/sub/__init__.py``.
    """
    names: list[str] = []
    files: list[str] = []
    dynamic = source is None or any(w in source for w in (b"import_module", b"__import__", b"spec_from_file_location"))
    for node in _statements(tree, dynamic):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: max(0, len(package.split(".")) - (node.level - 1))] if package else []
                base = ".".join(anchor + ([node.module] if node.module else []))
            if base:
                names += [base] + [f"{base}.{a.name}" for a in node.names if a.name != "*"]
        elif isinstance(node, ast.Call) and _is_dynamic_import(node.func) and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                names.append(arg.value)
        elif isinstance(node, ast.Call) and _is_file_import(node.func) and len(node.args) >= 2:
            location = _literal_file(node.args[1])
            if location:
                files.append(FILE_IMPORT + location)
    out: list[str] = []
    for name in names:
        parts = name.split(".")
        out += [".".join(parts[: i + 1]) for i in range(len(parts))]
    return list(dict.fromkeys(out + files))


def _statements(tree: ast.Module, dynamic: bool) -> Iterator[ast.AST]:
    """The statements of a module, nested ones too; every node when a dynamic import may hide in an expression."""
    if dynamic:
        yield from ast.walk(tree)
        return
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            todo += [n for n in getattr(node, name, ()) if isinstance(n, (ast.stmt, ast.excepthandler, ast.match_case))]


#: How ``imported_names`` gives a file imported by its path (``importlib.util.spec_from_file_location``): this prefix
#: and the path as written, relative to the importing module's folder unless absolute.
FILE_IMPORT = "file:"


def _is_file_import(func: ast.expr) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name == "spec_from_file_location"


def _literal_file(arg: ast.expr) -> str:
    """The file a location argument names where its last part is a literal: ``"helper.py"``, ``HERE / "helper.py"``,
    ``Path(__file__).with_name("helper.py")`` (``parent / "sub" / "h.py"`` gives ``sub/h.py``); else empty."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Div) and isinstance(arg.right, ast.Constant):
        head = _literal_file(arg.left) if isinstance(arg.left, ast.BinOp) else ""
        return f"{head}/{arg.right.value}" if head else str(arg.right.value)
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr in ("with_name", "joinpath"):
        literal = [a.value for a in arg.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        return "/".join(literal) if literal and len(literal) == len(arg.args) else ""
    return ""


def _is_dynamic_import(func: ast.expr) -> bool:
    if isinstance(func, ast.Attribute):
        return func.attr == "import_module"
    return isinstance(func, ast.Name) and func.id in ("import_module", "__import__")
