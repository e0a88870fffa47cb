"""Reference text generated from the code: the record and ledger reference (from the models), the status
legend (from ``assay.vocabulary``) and the diagnostics catalogue (from ``assay.diagnostics``).

``assay readme`` (``assay.readme``) writes them into the repository's pages, with the cluster settings and the
guide's example files, and a test keeps them current. The site renders the same tables from the same models at
build time (``assay.site.reference``).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from assay import vocabulary
from assay.diagnostics import CATALOGUE
from assay.model import Claim, Decision, Source, nested_models


def models_under(*roots: type[BaseModel]) -> list[type[BaseModel]]:
    """``roots``, then every model nested in them, in order of first mention."""
    out: list[type[BaseModel]] = []
    todo: list[type[BaseModel]] = list(roots)
    while todo:
        model = todo.pop(0)
        if model in out:
            continue
        out.append(model)
        for info in model.model_fields.values():
            todo += [m for m in nested_models(info.annotation) if m not in out]
    return out


def record_models() -> list[type[BaseModel]]:
    """The three record models and every model nested in them."""
    return models_under(Claim, Source, Decision)


def ledger_models() -> list[type[BaseModel]]:
    """The ledger record (one result file) and every model nested in it."""
    from assay.ledger.result import Result

    return models_under(Result)


#: What freshness, off-lock and unstable mean: the reference pages and the site's reference print this text.
FRESHNESS = (
    "A result is stale only when an input in the repository that decides what it measured changed since it was "
    "computed: the check's verifier, seeds, `reads` and metric declarations (names and units) in the record, the "
    "verifier module and every local module it imports "
    "(absolute, relative and `importlib` imports, package `__init__` files, the `conftest.py` chain), the data files "
    "the check declares in `reads`, the pins of torch, numpy, scikit-learn and scipy in the committed lock file "
    "(`requirements.lock`), and the device kind. The inputs are hashed when the test is collected, before it runs. "
    "What only weighs a result is no input: the sentences a check tests, its expectations, counterparts, regime and "
    "readings, the tier, notes and prose are judged again from the recorded measurements whenever the record is read "
    "(`assay rejudge` writes that judgement into the ledger), never rerun. "
    "A module is hashed as the code Python runs, its syntax tree: its docstrings, comments, blank lines, the spacing "
    "within a line, parentheses that change nothing and the way a literal is written are words, so editing them "
    "leaves its results fresh (a verifier that reads its own `__doc__` is not rerun for it); a result recorded while "
    "a module was hashed by its tokens is fresh while the module's tokens are the same; a result recorded while a "
    "module was hashed by its bytes is compared by what those bytes run: the module's "
    "own while it keeps them, else those of the version committed with them, read from the git history, so an edit "
    "of words leaves it fresh too where either holds them. "
    "What the machine had (Python, the torch build and its CUDA and cuDNN, BLAS and the instruction set it "
    "dispatched to, CPU model, cores, threads, GPU and driver, a hash of the host name) is the result's "
    "environment: recorded in full and shown, never a reason for staleness, so every machine computes the "
    "same freshness and a `cuda` result written on a GPU box is fresh on a CPU laptop. A result whose machine had "
    "other versions of the pinned packages than the lock is marked off-lock, with both versions. A rerun with "
    "the same inputs that changes the verdict marks the result unstable (`pytest verify --compare` reruns "
    "without replacing anything and prints, per check, the verdict then and now, the largest metric change and "
    "whether the environments differ). A crash or a timeout is recorded as an error beside the last completed "
    "measurement, which stays in the ledger and on the page; it never replaces it."
)


def type_name(annotation: Any, code: Callable[[Any], str], link: Callable[[str], str], text: Callable[[str], str] = str) -> str:
    """A reader's name for a field type; ``code`` shows a literal value, ``link`` a nested model, ``text`` the rest."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return type_name(args[0], code, link, text)
    if origin in (typing.Union, types.UnionType):
        names = [type_name(a, code, link, text) for a in args if a is not type(None)]
        return " or ".join(names) + (" or null" if type(None) in args else "")
    if origin is list:
        return f"list of {type_name(args[0], code, link, text)}"
    if origin is typing.Literal:
        return " | ".join(code(a) for a in args)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return link(annotation.__name__)
    return text(getattr(annotation, "__name__", str(annotation)))


def markdown_type(annotation: Any) -> str:
    return type_name(annotation, code=lambda a: f"`{a}`", link=lambda n: f"[{n}](#{n.lower()})").replace("|", "\\|")


def record_reference() -> str:
    """Markdown tables of every record kind and the structures inside them, from the model."""
    return model_reference(record_models())


def ledger_reference() -> str:
    """What a ledger file holds, from ``assay.ledger.result.Result``, after what freshness means."""
    return FRESHNESS + "\n\n" + model_reference(ledger_models())


def model_reference(models: list[type[BaseModel]]) -> str:
    """Markdown tables of ``models``: each field with its type, whether it is required, and its meaning."""
    out: list[str] = []
    for model in models:
        doc = " ".join((model.__doc__ or "").split())
        out += [f"### {model.__name__}", "", doc, "", "| field | type | required | meaning |", "|---|---|---|---|"]
        for name, info in model.model_fields.items():
            required = "yes" if info.is_required() else "no"
            description = (info.description or "").replace("|", "\\|")
            out.append(f"| `{name}` | {markdown_type(info.annotation)} | {required} | {description} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def status_legend() -> str:
    """The status vocabulary as Markdown tables."""
    out = []
    for title, table in vocabulary.VOCABULARIES.items():
        out += [f"**{title}**", "", "| name | meaning |", "|---|---|"]
        out += [f"| `{s.name}` | {s.meaning} |" for s in table.values()]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def diagnostics_catalogue() -> str:
    """Every diagnostic code of ``assay check`` with its severity and meaning, as a Markdown table."""
    out = ["| code | severity | meaning |", "|---|---|---|"]
    for code in CATALOGUE.values():
        meaning = code.meaning.replace("|", "\\|")
        out.append(f"| `{code.name}` | {code.severity} | {meaning} |")
    return "\n".join(out) + "\n"
