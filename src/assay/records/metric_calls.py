"""What each verifier test records, read from its ``evidence.metric(name, value, unit=...)`` calls with ``ast``.

A name is read where it is a literal or built of literals (``assay.records.literals``): an f-string or a ``+`` over
literals, module constants (``MODES = ("leak", "far")``), variables of loops over such sequences (``for n, N in
enumerate(SIZES)``), the keys of a local dict written only with such keys (``m[f"{mode}_acc"] = ...`` then ``for
k, v in m.items()``), or parameters of a function of the same module the test hands the evidence to
(``_summary(evidence, "gap", v)`` recording ``name + "_min"``). A loop's variables are enumerated together, so every
name read is one the test can record.

Whatever else the reading meets (a name from a dict a function returns, the evidence handed to a function of another
module, stored, or used in a closure) leaves the reading incomplete, with the line and the reason kept:
``assay.records.metric_rules`` reports only what the reading proves.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from assay.diagnostics import shortened
from assay.records import literals
from assay.records.bindings import NESTED, Group, Module, Scope, parameters, pattern, scope_of, statement_parts
from assay.records.literals import UNKNOWN

#: The fixture through which a verifier test records (``assay.pytest_plugin``).
FIXTURE = "evidence"

#: The deepest chain of helpers followed.
MAX_DEPTH = 8

#: Attributes of the evidence through which a metric could be recorded other than by calling ``metric(...)``.
_WRITES = frozenset({"metric", "metrics", "units"})


class Call(NamedTuple):
    """One metric a test records: its name, where the call is, and the ``unit=`` it gives and where (a tuple: a
    knowledge base's readings are kept between runs, and thousands load fastest as tuples)."""

    name: str
    line: int
    col: int
    unit: str | None = None  # None: no unit given (the check's declared one is kept), or one not read
    unit_line: int = 0  # where the unit is written; 0 where none is
    unit_col: int = 0
    unit_read: bool = True  # False: ``unit=`` is an expression this reading could not evaluate


class Recorded(NamedTuple):
    """The metrics one test records, as far as they can be read, and what could not be read: (line, reason)."""

    calls: tuple[Call, ...] = ()
    unread: tuple[tuple[int, str], ...] = ()
    #: Regular expressions that every name recorded where the reading could not follow matches (``.*``: any name).
    patterns: tuple[str, ...] = ()

    names: frozenset[str] = frozenset()  # the names of ``calls``

    def may_record(self, name: str) -> bool:
        """Whether ``name`` is among the names read, or one of those not read could be it."""
        return name in self.names or any(re.fullmatch(p, name) for p in self.patterns)


def read(tree: ast.Module) -> dict[str, Recorded]:
    """What each ``test*`` function at the top of the module records, by function name.

    A test whose only uses of the evidence are statements ``evidence.metric("name", value, unit="unit")`` with
    literal names and units (most are) is read from those statements alone (``_literal_calls``): what the full
    reading would find there, without its walks over the module and the function. The module's constants and
    functions are found only if some test needs the full reading.
    """
    module: Module | None = None
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            if FIXTURE not in parameters(node):
                out[node.name] = Recorded(unread=((node.lineno, f"it takes no `{FIXTURE}` fixture"),), patterns=(".*",))
                continue
            literal = _literal_calls(node, FIXTURE)
            if literal is not None:
                calls = tuple(dict.fromkeys(literal))
                out[node.name] = Recorded(calls, names=frozenset(c.name for c in calls))
                continue
            module = module or Module(tree)
            reader = _Reader(module)
            reader.function(node, FIXTURE, Group((), ((),)), ())
            calls, unread, patterns = (tuple(dict.fromkeys(found)) for found in (reader.calls, reader.unread, reader.patterns))
            out[node.name] = Recorded(calls, unread, patterns, frozenset(c.name for c in calls))
    return out


def _literal_calls(func: ast.FunctionDef, ev: str) -> list[Call] | None:
    """The calls of ``func`` where each statement of its body that names the evidence ``ev`` is a metric call of
    literal arguments (``_literal_call``); None where any other statement names it (the full reading decides)."""
    calls = []
    rest: list[ast.AST] = []  # what must not name the evidence: the other statements, the calls' arguments
    for stmt in func.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "metric":
            if _is(call.func.value, ev):
                found = _literal_call(call)
                if found is None:
                    return None
                calls.append(found)
                rest += call.args
                rest += [k.value for k in call.keywords]
                continue
        rest.append(stmt)
    return None if _names(rest, ev) else calls


def _literal_call(call: ast.Call) -> Call | None:
    """``evidence.metric(...)`` read as ``_Reader._metric`` reads it, where its name is a literal string, its unit
    absent or a literal and nothing is unpacked; else None."""
    name, unit = _name_and_unit(call) or (None, None)
    if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
        return None
    if unit is not None and not isinstance(unit, ast.Constant):
        return None
    return _call(call, name.value, unit, unit.value if unit is not None else None)


def _name_and_unit(call: ast.Call) -> tuple[ast.expr | None, ast.expr | None] | None:
    """The name and the ``unit=`` a metric call passes (None where it passes none); None where it unpacks arguments."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    keywords = {k.arg: k.value for k in call.keywords}
    return call.args[0] if call.args else keywords.get("name"), call.args[2] if len(call.args) > 2 else keywords.get("unit")


def _call(call: ast.Call, name: str, unit: ast.expr | None, given: object) -> Call:
    read = given is None or isinstance(given, str)
    at = (unit.lineno, unit.col_offset + 1) if unit is not None else (0, 0)
    return Call(name, call.lineno, call.col_offset + 1, given if read else None, *at, read)


def _names(nodes: list[ast.AST], ev: str) -> bool:
    """Whether any of ``nodes`` holds the name ``ev`` anywhere, nested functions included."""
    todo = list(nodes)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name):
            if n.id == ev:
                return True
            continue
        if isinstance(n, ast.Constant):
            continue
        for f in n._fields:
            v = getattr(n, f, None)
            if isinstance(v, list):
                todo += [x for x in v if isinstance(x, ast.AST)]
            elif isinstance(v, ast.AST):
                todo.append(v)
    return False


@dataclass
class _Reader:
    """One test's reading: the calls found and what could not be read, over the helpers it follows."""

    module: Module
    calls: list[Call] = field(default_factory=list)
    unread: list[tuple[int, str]] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)  # one per place not read: what the names recorded there match
    uses: set[int] = field(default_factory=set)  # the nodes of the function being read that hold the evidence

    def _escape(self, line: int, why: str, pattern: str = ".*") -> None:
        """A place this reading cannot follow, and a regular expression every name it may record there matches."""
        self.unread.append((line, why))
        self.patterns.append(pattern)

    def function(self, func: ast.FunctionDef, ev: str, given: Group, stack: tuple[str, ...]) -> None:
        """Read ``func``'s body, the evidence being its parameter ``ev`` and ``given`` the values of other parameters."""
        scope = scope_of(self.module, func, given)
        self.uses = self.module.facts_of(func).holding(frozenset({ev}))
        self._body(func.body, ev, scope, (*stack, func.name))

    def _body(self, body: list[ast.stmt], ev: str, scope: Scope, stack: tuple[str, ...]) -> None:
        for stmt in body:
            if id(stmt) not in self.uses:
                continue  # a statement that does not name the evidence records nothing
            if isinstance(stmt, (ast.For, ast.AsyncFor)):
                self._expr(stmt.iter, ev, scope, stack)
                self._body(stmt.body, ev, scope.within(stmt.target, stmt.iter), stack)
                self._body(stmt.orelse, ev, scope, stack)
            elif isinstance(stmt, NESTED):
                self._escape(stmt.lineno, f"the evidence is used inside the nested `{stmt.name}`")
            else:
                for part in statement_parts(stmt):
                    if isinstance(part, ast.stmt):
                        self._body([part], ev, scope, stack)
                    else:
                        self._expr(part, ev, scope, stack)

    def _expr(self, node: ast.AST, ev: str, scope: Scope, stack: tuple[str, ...]) -> None:
        """Every use of the evidence in an expression: a metric call read, a helper followed, anything else unread."""
        if id(node) not in self.uses:
            return
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            self._escape(node.lineno, "the evidence is used inside a lambda or a comprehension")
            return
        if isinstance(node, ast.Call):
            args = [*node.args, *(k.value for k in node.keywords)]
            if isinstance(node.func, ast.Attribute) and _is(node.func.value, ev) and node.func.attr == "metric":
                self._metric(node, scope)
            elif any(_is(a, ev) for a in args):
                self._helper(node, ev, scope, stack)
            else:
                self._expr(node.func, ev, scope, stack)
            for a in args:
                if not _is(a, ev):
                    self._expr(a, ev, scope, stack)
        elif isinstance(node, ast.Attribute) and _is(node.value, ev):
            if node.attr in _WRITES:
                self._escape(node.lineno, f"it reaches `{ev}.{node.attr}` other than by calling `{ev}.metric(...)`")
        elif _is(node, ev):
            self._escape(node.lineno, "the evidence is passed on or stored")
        else:
            for child in ast.iter_child_nodes(node):
                self._expr(child, ev, scope, stack)

    def _metric(self, call: ast.Call, scope: Scope) -> None:
        name, unit = _name_and_unit(call) or (None, None)
        if name is None:
            self._escape(call.lineno, "a metric call passes its arguments unpacked")
            return
        rows = scope.evaluate([name] if unit is None else [name, unit], partial=True)  # a unit not read hides no name
        if rows is None or any(not isinstance(row[0], str) for row in rows):
            why = f"the metric name `{_snippet(name)}` is not one this reading can evaluate"
            self._escape(call.lineno, why, pattern(name, scope))
            return
        self.calls += [_call(call, row[0], unit, row[1] if unit is not None else None) for row in rows]

    def _helper(self, call: ast.Call, ev: str, scope: Scope, stack: tuple[str, ...]) -> None:
        """Follow the evidence into a function of this module, its other parameters bound to the call's arguments."""
        name = call.func.id if isinstance(call.func, ast.Name) else None
        func = self.module.functions.get(name) if name and name not in scope.local else None
        if func is None:
            self._escape(call.lineno, f"the evidence is passed to `{_snippet(call.func)}`, not a function of this module")
            return
        if func.name in stack or len(stack) >= MAX_DEPTH:
            self._escape(call.lineno, f"`{func.name}` is called recursively, or too deep to follow")
            return
        bound = _arguments(func, call)
        receives = [p for p, a in (bound or {}).items() if isinstance(a, ast.expr) and _is(a, ev)]
        if bound is None or len(receives) != 1:
            self._escape(call.lineno, f"`{_snippet(call)}` passes its arguments in a way this reading cannot match")
            return
        names = tuple(p for p in bound if p != receives[0])
        passed = [p for p in names if isinstance(bound[p], ast.expr)]
        rows = scope.evaluate([bound[p] for p in passed], partial=True) if passed else [()]  # type: ignore[misc]
        defaults = {p: literals.value(v.default, self.module.constants) for p, v in bound.items() if isinstance(v, _Default)}
        if rows is None:
            group = Group(names, ((UNKNOWN,) * len(names),))
        else:
            group = Group(names, tuple(tuple(dict(zip(passed, r)).get(p, defaults.get(p)) for p in names) for r in rows))
        uses = self.uses
        self.function(func, receives[0], group, stack)
        self.uses = uses


@dataclass(frozen=True)
class _Default:
    default: ast.expr


def _arguments(func: ast.FunctionDef, call: ast.Call) -> dict[str, ast.expr | _Default] | None:
    """Each parameter of ``func`` and the argument ``call`` passes it (or its default); None where they cannot be matched."""
    positional = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    if len(call.args) > len(positional) or func.args.kwarg is not None:
        return None
    bound: dict[str, ast.expr | _Default] = dict(zip(positional, call.args))
    bound |= {k.arg: k.value for k in call.keywords if k.arg is not None}
    defaults = dict(zip(positional[len(positional) - len(func.args.defaults) :], func.args.defaults))
    defaults |= {a.arg: d for a, d in zip(func.args.kwonlyargs, func.args.kw_defaults) if d is not None}
    bound |= {p: _Default(defaults[p]) for p in parameters(func) if p not in bound and p in defaults}
    return bound if set(bound) <= set(parameters(func)) else None


def _is(node: ast.AST, ev: str) -> bool:
    return isinstance(node, ast.Name) and node.id == ev


def _snippet(node: ast.AST) -> str:
    return shortened(" ".join(ast.unparse(node).split()))
