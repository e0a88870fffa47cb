"""``assay readme``: the generated sections of the repository's pages, rendered from the code.

A page marks a section with ``<!-- BEGIN name -->`` and ``<!-- END name -->``; ``update_pages`` rewrites what
lies between with the section's current text: the tables of ``assay.reference``, the ``[tool.assay.slurm]``
settings, or a file of the repository as a fenced block (``file PATH``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from assay import files
from assay.diagnostics import UsageProblem
from assay.reference import diagnostics_catalogue, ledger_reference, markdown_type, record_reference, status_legend
from assay.settings import SlurmSettings


def slurm_settings() -> str:
    """The ``[tool.assay.slurm]`` settings with their defaults, from ``assay.settings.SlurmSettings``."""
    out = ["| setting | type | default | meaning |", "|---|---|---|---|"]
    for name, info in SlurmSettings.model_fields.items():
        default = info.get_default(call_default_factory=True)
        shown = "unset" if default is None else f"`{default}`"
        meaning = (info.description or "").replace("|", "\\|")
        out.append(f"| `{name}` | {markdown_type(info.annotation)} | {shown} | {meaning} |")
    return "\n".join(out) + "\n"


SECTIONS: dict[str, Callable[[], str]] = {
    "status-legend": status_legend,
    "record-reference": record_reference,
    "ledger-reference": ledger_reference,
    "diagnostics": diagnostics_catalogue,
    "slurm-settings": slurm_settings,
}

#: The pages that hold generated sections, relative to the repository's root.
PAGES = ("docs/reference.md", "site/reference/cluster.md", "site/guide/adding-a-claim.md")

#: How a fenced block of an included file is marked, by its suffix.
LANGUAGES = {".yaml": "yaml", ".yml": "yaml", ".py": "python", ".toml": "toml", ".md": "markdown"}

_SECTION = re.compile(
    r"(?P<begin><!-- BEGIN (?P<name>[a-z-]+)(?: (?P<path>[^ ]+))? -->\n).*?(?P<end><!-- END (?P=name) -->)", re.S
)


def included(root: Path, rel: str) -> str:
    """The file at ``rel`` (inside ``root``) as a fenced block."""
    try:
        text = files.read_regular(root, root / rel).decode("utf-8")
    except (files.Unreadable, UnicodeDecodeError) as e:
        raise UsageProblem(f"{rel}: {e}; a page includes it") from None
    fence = "````" if "```" in text else "```"
    return f"{fence}{LANGUAGES.get(Path(rel).suffix, 'text')}\n{text.rstrip()}\n{fence}\n"


def render(text: str, root: Path) -> str:
    """``text`` with every generated section replaced by its current rendering; included files are read under ``root``."""

    def current(m: re.Match[str]) -> str:
        name, path = m.group("name"), m.group("path")
        if name == "file" and path:
            body = included(Path(root), path)
        elif name in SECTIONS and not path:
            body = SECTIONS[name]()
        else:
            raise UsageProblem(
                f"unknown generated section {m.group('begin').strip()!r}; the sections are {', '.join(SECTIONS)}, file PATH"
            )
        # between blank lines: Markdown reads the section as its own block, not as part of the comment before it
        return m.group("begin") + "\n" + body.strip("\n") + "\n\n" + m.group("end")

    return _SECTION.sub(current, text)


def update_pages(root: Path) -> list[tuple[str, bool]]:
    """Rewrite the generated sections of every page of ``PAGES`` under ``root``: each page's path and whether it changed."""
    root = Path(root)
    found = [rel for rel in PAGES if (root / rel).is_file()]
    if not found:
        raise UsageProblem(
            f"no page with generated sections in {root} ({', '.join(PAGES)}); assay readme updates those that exist"
        )
    out = []
    for rel in found:
        path = root / rel
        before = path.read_text(encoding="utf-8")
        after = render(before, root)
        if after != before:
            files.write_atomic(path, after)
        out.append((rel, after != before))
    return out
