"""The values of literal expressions, as far as they can be known without running anything.

``value`` evaluates constants, f-strings, ``+``, tuples, lists and dict literals, given the values of some names;
``items`` is what a ``for`` loop over an expression yields; ``unpack`` binds a loop target to one of them. What
cannot be known is ``UNKNOWN``; a tuple or a dict may hold it as an item or a value (a loop over ``(("gap", gap),
...)`` still binds ``"gap"``). Used by ``assay.records.metric_calls``.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

#: The most items a ``range`` is expanded to.
MAX_ITEMS = 4096


class _Unknown:
    def __repr__(self) -> str:
        return "<unknown>"


UNKNOWN = _Unknown()

_SCALARS = (str, int, float, bool, type(None))


def value(node: ast.AST | None, names: Mapping[str, object]) -> object:
    """The value of a literal expression, ``names`` giving the values of the names it may use; else UNKNOWN."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return names.get(node.id, UNKNOWN)
    if isinstance(node, ast.JoinedStr):
        parts = [_formatted(v, names) for v in node.values]
        return UNKNOWN if any(p is UNKNOWN for p in parts) else "".join(map(str, parts))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = value(node.left, names), value(node.right, names)
        if isinstance(a, str) and isinstance(b, str):
            return a + b
        return a + b if type(a) in (int, float) and type(b) in (int, float) else UNKNOWN  # type: ignore[operator]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        a = value(node.operand, names)
        return -a if type(a) in (int, float) else UNKNOWN  # type: ignore[operator]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return tuple(value(e, names) for e in node.elts)
    if isinstance(node, ast.Dict) and None not in node.keys:
        keys = [value(k, names) for k in node.keys]
        if any(k is UNKNOWN or not isinstance(k, _SCALARS) for k in keys):
            return UNKNOWN
        return dict(zip(keys, (value(v, names) for v in node.values)))
    return UNKNOWN


def _formatted(node: ast.expr, names: Mapping[str, object]) -> object:
    """One part of an f-string, formatted as Python would; UNKNOWN where its value is."""
    if not isinstance(node, ast.FormattedValue):
        return value(node, names)
    x = value(node.value, names)
    spec = value(node.format_spec, names) if node.format_spec is not None else ""
    if x is UNKNOWN or spec is UNKNOWN or not isinstance(x, _SCALARS):
        return UNKNOWN
    converted = {115: str, 114: repr, 97: ascii}.get(node.conversion, lambda v: v)(x)
    try:
        return format(converted, str(spec))
    except (TypeError, ValueError):
        return UNKNOWN


def items(node: ast.expr, names: Mapping[str, object]) -> list[object] | None:
    """What a loop over ``node`` yields, where it is a literal sequence, a known name, or a few builtins over them
    (``enumerate``, ``zip``, ``range``, ``sorted``, a dict's ``items()``); None where that cannot be known."""
    if isinstance(node, ast.Call) and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args):
        func, args = node.func, node.args
        if isinstance(func, ast.Attribute) and func.attr in ("items", "keys", "values") and not args:
            d = value(func.value, names)
            return list(getattr(d, func.attr)()) if isinstance(d, dict) else None
        name = func.id if isinstance(func, ast.Name) else ""
        if name == "range" and 1 <= len(args) <= 3:
            bounds = [value(a, names) for a in args]
            return list(range(*bounds))[: MAX_ITEMS + 1] if all(type(b) is int for b in bounds) else None  # type: ignore[arg-type]
        inner = [items(a, names) for a in args]
        if not inner or any(i is None for i in inner):
            return None
        if name == "enumerate" and len(inner) == 1:
            return list(enumerate(inner[0]))  # type: ignore[arg-type]
        if name == "zip":
            return list(zip(*inner))  # type: ignore[misc]
        if name in ("list", "tuple", "sorted", "reversed", "set") and len(inner) == 1:
            return list(inner[0])  # type: ignore[arg-type]  # the order does not matter to what is recorded
        return None
    found = value(node, names)
    return list(found) if isinstance(found, (tuple, dict, str)) else None


def unpack(target: ast.expr, item: object) -> list[tuple[str, object]] | None:
    """The names of a loop target, in order, and the values ``item`` gives them; None where it cannot be unpacked."""
    if isinstance(target, ast.Name):
        return [(target.id, item)]
    if not isinstance(target, (ast.Tuple, ast.List)) or any(isinstance(e, ast.Starred) for e in target.elts):
        return None
    if item is not UNKNOWN and (not isinstance(item, tuple) or len(item) != len(target.elts)):
        return None
    parts = [unpack(e, UNKNOWN if item is UNKNOWN else item[i]) for i, e in enumerate(target.elts)]  # type: ignore[index]
    return None if any(p is None for p in parts) else [pair for p in parts for pair in p or []]
