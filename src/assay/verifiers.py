"""The index of ``verify/``: which tests exist, which claim and check each is tied to, what each imports.

Read statically (``ast``), so ``assay check`` and ``assay status`` know the verifiers without
importing torch or running anything.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Verifier:
    """One test function in ``verify/`` and the claim marker on it (or on its module)."""

    nodeid: str  # verify/test_x.py::test_name
    line: int
    claim: str | None
    check: str | None


def _marker_args(decorators: list[ast.expr]) -> tuple[str | None, str | None] | None:
    for dec in decorators:
        call = dec if isinstance(dec, ast.Call) else None
        func = call.func if call else dec
        if isinstance(func, ast.Attribute) and func.attr == "claim":
            args = [a.value for a in (call.args if call else []) if isinstance(a, ast.Constant)]
            return (args[0] if args else None, args[1] if len(args) > 1 else None)
    return None


def _module_marker(tree: ast.Module) -> tuple[str | None, str | None] | None:
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets):
            values = stmt.value.elts if isinstance(stmt.value, (ast.List, ast.Tuple)) else [stmt.value]
            found = _marker_args(list(values))
            if found:
                return found
    return None


def scan(root: Path) -> dict[str, Verifier]:
    """Every ``test_*`` function in ``verify/test_*.py`` under ``root``, by node id."""
    out: dict[str, Verifier] = {}
    for path in sorted((root / "verify").glob("**/test_*.py")):
        rel = path.relative_to(root).as_posix()
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue  # pytest reports it when it collects the module
        module_marker = _module_marker(tree)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                marker = _marker_args(node.decorator_list) or module_marker or (None, None)
                claim, check = marker
                if module_marker and not check and module_marker[0]:
                    claim = claim or module_marker[0]
                out[f"{rel}::{node.name}"] = Verifier(f"{rel}::{node.name}", node.lineno, claim, check)
    return out


def local_imports(root: Path, module: Path) -> list[Path]:
    """``module`` and every module under ``root`` it imports, transitively (sorted, deduplicated)."""
    stamp = tuple(sorted((p.as_posix(), p.stat().st_mtime_ns) for p in (root / "verify").glob("**/*.py")))
    return list(_local_imports(root.resolve(), module.resolve(), stamp))


@functools.lru_cache(maxsize=1024)
def _local_imports(root: Path, module: Path, stamp: tuple[tuple[str, int], ...]) -> tuple[Path, ...]:
    """Cached per state of ``verify/`` (``stamp``: its files and modification times)."""
    seen: set[Path] = set()
    todo = [module.resolve()]
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for name in names:
                parts = name.split(".")
                for candidate in (root.joinpath(*parts).with_suffix(".py"), root.joinpath(*parts, "__init__.py")):
                    if candidate.is_file():
                        todo.append(candidate.resolve())
    return tuple(sorted(seen))
