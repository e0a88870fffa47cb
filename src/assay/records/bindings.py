"""What the names of a verifier module may hold at a place, read statically: the module's constants and functions,
a function's loops, parameters and local dicts (``assay.records.metric_calls`` reads metric names with it).

A ``Scope`` holds, for one place of one function, groups of names bound together (a loop's target, a helper's
parameters) with the rows of values they take; ``Scope.evaluate`` gives every row of values some expressions take
together, so a name read is one the code can build, never a combination of values that never meet.
"""

from __future__ import annotations

import ast
import itertools
import math
import re
from collections import Counter
from dataclasses import dataclass

from assay.records import literals
from assay.records.literals import UNKNOWN

#: The most rows one evaluation may stand for (the product of its loops).
MAX_NAMES = 4096

#: Methods that change a list, dict or set in place.
_MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "add", "pop", "popitem", "remove", "clear"})

#: Builtins that only read the sequence they are given.
_READERS = frozenset({"len", "enumerate", "zip", "sorted", "reversed", "list", "tuple", "set", "range", "min", "max", "sum"})

NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)

#: What may be done with a local dict whose keys are read: call these methods, index it, loop over it, test membership.
_DICT_READS = frozenset({"items", "keys", "values", "get", "setdefault", "pop"})


@dataclass(frozen=True)
class Group:
    """Names bound together (a loop's target, a helper's parameters) and the rows of values they take."""

    names: tuple[str, ...]
    rows: tuple[tuple[object, ...], ...]


class Module:
    """The functions and constants of a module that a reading may follow: the names bound once, at its top."""

    def __init__(self, tree: ast.Module):
        count = Counter(name for node in tree.body for name in set().union(*_bindings([node])))
        rebound: set[str] = set()  # declared global somewhere, or changed in place (``SIZES.append(4)``, ``T[k] = v``)
        handed: set[str] = set()  # passed to a function, aliased or returned: a list there may be changed elsewhere
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                rebound |= set(node.names)
            elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.value, ast.Name):
                if isinstance(node.ctx, ast.Store) or getattr(node, "attr", "") in _MUTATORS:
                    rebound.add(node.value.id)
            handed |= {n.id for n in _handed(node)}
        once = {n for n, k in count.items() if k == 1 and n not in rebound}
        mutable = {  # a list, dict or set handed on is no constant
            t.id
            for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.value, (ast.List, ast.Dict, ast.Set))
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        once -= mutable & handed
        self.functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in once}
        self.constants: dict[str, object] = {}
        self._facts: dict[int, Facts] = {}  # by id of the function, made when it is first read
        for node in tree.body:
            target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
            target = node.target if isinstance(node, ast.AnnAssign) and node.value is not None else target
            found = literals.unpack(target, literals.value(node.value, self.constants)) if target else None  # type: ignore[union-attr]
            self.constants |= {n: v for n, v in found or [] if n in once and v is not UNKNOWN}

    def facts_of(self, func: ast.FunctionDef) -> Facts:
        """``Facts`` of one function of the module, found once."""
        if id(func) not in self._facts:
            self._facts[id(func)] = Facts(func)
        return self._facts[id(func)]


def _handed(node: ast.AST) -> list[ast.Name]:
    """The names ``node`` hands on as they are: arguments of a call (but to builtins that only read them), values
    assigned, returned or put in a container."""
    if isinstance(node, ast.Call):
        reads = isinstance(node.func, ast.Name) and node.func.id in _READERS
        found: list[ast.expr] = [] if reads else [*node.args, *(k.value for k in node.keywords)]
    elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.Return, ast.Yield, ast.Starred)):
        found = [node.value] if node.value is not None else []
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        found = list(node.elts)
    elif isinstance(node, ast.Dict):
        found = list(node.values)
    else:
        found = []
    return [n for n in found if isinstance(n, ast.Name)]


def parameters(func: ast.FunctionDef) -> list[str]:
    return [a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)]


def _bindings(nodes: list[ast.stmt]) -> tuple[set[str], set[str]]:
    """The names statements bind in their scope: as targets of ``for`` statements, and in any other way (a
    comprehension's variables are its own; a nested function or class binds only its name). A name a loop nested in
    another loop over it binds again counts as bound otherwise: after the inner loop it holds the inner loop's last
    value, not the outer loop's."""
    loop: set[str] = set()
    other: set[str] = set()
    todo: list[tuple[ast.AST, bool, frozenset[str]]] = [(n, False, frozenset()) for n in nodes]
    while todo:
        n, in_target, outer = todo.pop()
        if isinstance(n, NESTED):
            other |= {n.name} if not isinstance(n, ast.Lambda) else set()
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            (loop if in_target else other).add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            other |= {(a.asname or a.name).split(".")[0] for a in n.names}
        elif isinstance(n, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and n.name:
            other.add(n.name)
        if isinstance(n, (ast.For, ast.AsyncFor)):
            targets = frozenset(free(n.target))
            other |= targets & outer
            todo += [(n.target, True, outer)] + [(c, False, outer | targets) for c in (*n.body, *n.orelse)]
            todo.append((n.iter, False, outer))
        elif isinstance(n, ast.comprehension):
            todo += [(c, False, outer) for c in (n.iter, *n.ifs)]
        else:
            todo += [(c, in_target, outer) for c in ast.iter_child_nodes(n)]
    return loop, other


class Facts:
    """What a reading needs of one function, found in one walk: its bindings and dicts, and which nodes hold a name."""

    def __init__(self, func: ast.FunctionDef):
        self.parents: dict[int, ast.AST] = {}
        self.names: list[ast.Name] = []
        self.nested: set[int] = set()  # the names inside a function, lambda or class nested in this one
        todo: list[tuple[ast.AST, bool]] = [(func, False)]
        while todo:
            node, nested = todo.pop()
            inner = nested or (isinstance(node, NESTED) and node is not func)
            for c in ast.iter_child_nodes(node):
                self.parents[id(c)] = node
                todo.append((c, inner))
            if isinstance(node, ast.Name):
                self.names.append(node)
                if nested:
                    self.nested.add(id(node))
        self.loop, self.other = _bindings(func.body)
        self.dicts = _dicts(func, self)
        self._holding: dict[frozenset[str], set[int]] = {}

    def holding(self, names: frozenset[str]) -> set[int]:
        """The ids of the nodes that are, or contain, a name of ``names``: only those can use it."""
        if names not in self._holding:
            out: set[int] = set()
            for n in self.names:
                node: ast.AST | None = n
                while n.id in names and node is not None and id(node) not in out:
                    out.add(id(node))
                    node = self.parents.get(id(node))
            self._holding[names] = out
        return self._holding[names]


def _dicts(func: ast.FunctionDef, facts: Facts) -> set[str]:
    """Local names bound only to dict literals and otherwise only indexed, looped over or read through ``_DICT_READS``:
    their keys are all written where this reading sees them."""
    parents = facts.parents
    good: set[str] = set()
    stored: set[str] = set()
    bad: set[str] = set(parameters(func))
    for n in facts.names:
        p = parents.get(id(n))
        if isinstance(n.ctx, ast.Store):
            one = isinstance(p, ast.Assign) and len(p.targets) == 1 and p.targets[0] is n
            ok = one and isinstance(p.value, ast.Dict) and None not in p.value.keys  # type: ignore[union-attr]
            stored.add(n.id)
        elif isinstance(n.ctx, ast.Load):
            call = parents.get(id(p))
            ok = (
                (isinstance(p, ast.Subscript) and p.value is n)
                or (isinstance(p, ast.Attribute) and p.attr in _DICT_READS and isinstance(call, ast.Call) and call.func is p)
                or (isinstance(p, (ast.For, ast.comprehension)) and p.iter is n)
                or (isinstance(p, ast.Compare) and any(c is n for c in p.comparators))
            )
        else:
            ok = False
        (good if ok and id(n) not in facts.nested else bad).add(n.id)
    return (good & stored) - bad  # a name the function never binds is not its dict (a module constant, say)


def scope_of(module: Module, func: ast.FunctionDef, given: Group) -> Scope:
    """The scope at the top of ``func``'s body, ``given`` the values of the parameters a caller passes."""
    facts = module.facts_of(func)
    loop, other = facts.loop, facts.other
    params = set(parameters(func)) | {a.arg for a in (func.args.vararg, func.args.kwarg) if a is not None}
    local = params | loop | other
    known = (loop - other - params) | (set(given.names) - loop - other)
    scope = Scope(module, local, local - known, (given,), {})
    if facts.dicts:
        keys: dict[str, set[object] | None] = dict.fromkeys(facts.dicts, set())
        _Keys(keys, facts.holding(frozenset(facts.dicts))).body(func.body, scope)
        scope.dicts = {d: dict.fromkeys(k, UNKNOWN) for d, k in keys.items() if k is not None}
    return scope


@dataclass
class _Keys:
    """The keys written to each local dict of ``_dicts`` (None for a dict with a key this reading cannot evaluate)."""

    keys: dict[str, set[object] | None]
    holding: set[int]  # the nodes that hold one of the dicts

    def body(self, body: list[ast.stmt], scope: Scope) -> None:
        for stmt in body:
            if id(stmt) not in self.holding:
                continue
            if isinstance(stmt, (ast.For, ast.AsyncFor)):
                self.body(stmt.body, scope.within(stmt.target, stmt.iter))
                self.body(stmt.orelse, scope)
                continue
            if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Dict):
                for k in stmt.value.keys:
                    self._add(stmt.targets[0].id, k, scope)  # type: ignore[arg-type]
            for part in statement_parts(stmt):
                if isinstance(part, ast.stmt):
                    self.body([part], scope)
                    continue
                for n in ast.walk(part):
                    if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name):
                        self._add(n.value.id, n.slice, scope)
                    elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "setdefault":
                        if isinstance(n.func.value, ast.Name) and n.args:
                            self._add(n.func.value.id, n.args[0], scope)

    def _add(self, name: str, key: ast.expr, scope: Scope) -> None:
        found = self.keys.get(name)
        if found is None:
            return
        rows = scope.evaluate([key])
        self.keys[name] = found | {r[0] for r in rows} if rows is not None else None


@dataclass
class Scope:
    """What the names of one function may hold at a place: its parameters', its enclosing loops', its dicts' keys."""

    module: Module
    local: set[str]  # every name the function binds
    unknown: set[str]  # those whose values cannot be read (bound otherwise than by a loop or a helper's call)
    groups: tuple[Group, ...]
    dicts: dict[str, dict[object, object]]  # the local dicts whose keys are read, as dicts of unknown values

    def within(self, target: ast.expr, iterable: ast.expr) -> Scope:
        """The scope inside a loop over ``iterable`` bound to ``target``: its names take the rows the loop yields, or
        one unknown row where the loop's items cannot be read."""
        shape = literals.unpack(target, UNKNOWN)  # the names in the order the values unpack into them
        names = tuple(n for n, _ in shape) if shape is not None else tuple(n.id for n in names_in(target))
        known = self.module.constants | self.dicts
        found = literals.items(iterable, known) if not free(iterable) & (self.local - set(self.dicts)) else None
        rows = [literals.unpack(target, item) for item in found] if found is not None and shape is not None else None
        if rows is None or any(r is None or len(r) != len(names) for r in rows):
            group = Group(names, ((UNKNOWN,) * len(names),))
        else:
            group = Group(names, tuple(tuple(v for _, v in r or []) for r in rows))
        return Scope(self.module, self.local, self.unknown, (*self.groups, group), self.dicts)

    def evaluate(self, exprs: list[ast.expr], partial: bool = False) -> list[tuple[object, ...]] | None:
        """Every row of values ``exprs`` take together over the loops they depend on; None where any is unknown, or,
        ``partial``, UNKNOWN in the place of each that is."""
        groups: list[Group] = []
        readable = []
        for e in exprs:
            used = free(e) & self.local
            found = [next((g for g in reversed(self.groups) if n in g.names), None) for n in used - self.unknown]
            readable.append(not used & self.unknown and None not in found)
            if not readable[-1] and not partial:
                return None
            groups += [g for g in found if readable[-1] and g is not None and g not in groups]
        if math.prod(len(g.rows) for g in groups) > MAX_NAMES:
            return None
        out: dict[str, tuple[object, ...]] = {}
        for combo in itertools.product(*(g.rows for g in groups)):
            env = self.module.constants | {n: v for g, row in zip(groups, combo) for n, v in zip(g.names, row)}
            row = tuple(literals.value(e, env) if ok else UNKNOWN for e, ok in zip(exprs, readable))
            if not partial and any(v is UNKNOWN for v in row):
                return None
            out.setdefault(repr(row), row)
        return list(out.values())


def pattern(node: ast.expr, scope: Scope) -> str:
    """A regular expression that every name ``node`` can evaluate to matches: the parts it can read as they are (an
    f-string's literal text, a part whose values are known), ``.*`` for the rest."""
    rows = scope.evaluate([node])
    if rows is not None and all(isinstance(r[0], str) for r in rows) and len(rows) <= 64:
        alternatives = "|".join(re.escape(str(r[0])) for r in rows)
        return alternatives if len(rows) == 1 else f"(?:{alternatives})"
    if isinstance(node, ast.JoinedStr) and len(node.values) > 1:  # each part alone: its text, or what it can be
        return "".join(
            re.escape(str(v.value)) if isinstance(v, ast.Constant) else pattern(ast.JoinedStr(values=[v]), scope)
            for v in node.values
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return pattern(node.left, scope) + pattern(node.right, scope)
    return ".*"


def statement_parts(stmt: ast.stmt) -> list[ast.AST]:
    """A statement's own expressions and the statements it holds (those of its except clauses and match cases too)."""
    out: list[ast.AST] = []
    for child in ast.iter_child_nodes(stmt):
        out += ast.iter_child_nodes(child) if isinstance(child, (ast.excepthandler, ast.match_case)) else [child]
    return out


def names_in(node: ast.AST) -> list[ast.Name]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Name)]


def free(node: ast.AST) -> set[str]:
    return {n.id for n in names_in(node)}
