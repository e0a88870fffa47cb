"""The ``assay`` command: thin shells that parse, call the core, and format.

Each command's docstring is its help text. Errors print as ``path:line:col: severity[code]: message``;
no traceback unless ``--debug``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Callable

from assay import audit, corpus, overview, schema, vocabulary
from assay.diagnostics import UsageProblem, printable
from assay.model import BY_KIND, Claim, series_of
from assay.overview import States
from assay.records.document import Loaded
from assay.records.knowledge_base import KnowledgeBase, find_root, is_knowledge_base, load
from assay.records.lookup import record_id, record_ids


def cmd_check(args: argparse.Namespace) -> int:
    """Validate every record and verifier; print every problem as path:line:col, exit 1 if any is an error.
    With --claim ID (repeatable), only the problems that bear on those claims (their records, verifiers and ledger, and
    those that name them), though every record is still checked.

    example: assay check --claim SOTA-364
    """
    audit.ahead(args.root)  # a first run on a large knowledge base: all it reads, read at once on every core
    kb = load(args.root)
    found = audit.run(kb)
    if args.claim:  # each a usage error where it names no claim; a problem that bears on two is printed once
        touched = {id(d) for cid in args.claim for d in audit.touching(kb, found, cid)}
        found = [d for d in found if id(d) in touched]
    for d in found:
        print(d.render())
    n_err = sum(d.severity == "error" for d in found)
    n_warn = len(found) - n_err
    counts = f"{len(kb.claims)} claims, {len(kb.sources)} sources, {len(kb.decisions)} decisions"
    print(f"{n_err} error(s), {n_warn} warning(s) in {len(kb.files)} records ({counts})", file=sys.stderr)
    return 1 if n_err else 0


def cmd_new(args: argparse.Namespace) -> int:
    """Scaffold a record with the next free id of its series; it is valid against the schema. A claim cites --source
    and gets each --check (one, main, by default) with an assertion resting on it, and a verifier stub beside it in
    verify/ (seeded, with a control and a figure). Every text to replace is flagged by assay check until it is.

    example: assay new claim --source LIT-590 --check blog-task --check no-target-control
    """
    from assay.skeleton import new_record

    for rel in new_record(args.root, args.kind, theory=args.theory, source=args.source, checks=args.check or []):
        print(rel)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """Show one record in words: its computed status, each assertion with why it has its verdict, each check per
    device with what it measured against what it expected, and why its closure is open. --json: the record itself.

    example: assay show SOTA-364
    """
    from assay.show import show

    return show(load(args.root), args.id, as_json=args.json)


def cmd_history(args: argparse.Namespace) -> int:
    """A check's evidence over the repository's commits: per device each committed ledger file's verdict and
    measurements beside the expectations as the record then stated them, and whether each expectation was fixed
    before its result (registered, with-result, moved-after-result, post-hoc). A folder without git history, or a
    shallow clone, says so.

    example: assay history SOTA-364/knn-monitor
    """
    from assay.timeline import history

    return history(load(args.root), args.target, as_json=args.json)


def cmd_plan(args: argparse.Namespace) -> int:
    """For each open expectation (read by its mean and inconclusive, or decided by less than a standard error) the
    seeds read, their mean and sd, and how many fresh seeds would decide it if they held, with what that costs; then
    the settling runs `assay verify --settle` would make. A planning figure, not a promise.

    example: assay plan --claim SOTA-364
    """
    from assay.ledger.store import read_ledger
    from assay.power import report

    kb = load(args.root)
    claims = record_ids(kb, args.claim) or None  # each a usage error where it names no valid claim
    print("\n".join(printable(line) for line in report(kb, read_ledger(kb.root), claims)))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """List claims by computed status, and why each stale result is stale; runs nothing.

    example: assay status
    """
    kb = load(args.root)
    states, moved = overview.listing(kb)
    for name, st in vocabulary.CLAIM.items():
        ids = [cid for cid, s in states.items() if s.status == name]
        if not ids:
            continue
        print(f"{name} ({len(ids)}): {st.meaning}")
        for cid in ids:
            print(f"  {cid:<12} {printable(kb.claim_files[cid].outline.title)}")
            if states[cid].counts:
                print(f"    {states[cid].counts}")
            for check, device, reasons in states[cid].stale:
                print(printable(f"    {check}.{device} is stale: {'; '.join(reasons)}"))
    invalid = _invalid_claims(kb)
    if invalid:
        print(
            f"invalid ({len(invalid)}): The file cannot be read, does not validate or repeats an id, "
            "so it has no status; run assay check."
        )
        for f in invalid:
            print(f"  {f.id:<12} {printable(f.path)}")
    for d in moved:  # an expectation moved after its result votes for nothing: say so here too
        print(printable(f"warning[{d.code}]: {d.path}:{d.line}: {d.message}"), file=sys.stderr)
    print("legend: " + "; ".join(f"{n} = {s.meaning}" for n, s in vocabulary.CLAIM.items()), file=sys.stderr)
    return 0


def _invalid_claims(kb: KnowledgeBase) -> list[Loaded]:
    """Claim files (by folder or by id) whose record is not a claim the knowledge base holds: a file that does
    not validate or cannot be read, or the second file of an id."""
    return [
        f
        for f in kb.files
        if (f.folder == BY_KIND["claim"].folder or getattr(series_of(f.id), "model", None) is Claim)
        and (f.model is not Claim or kb.claim_files.get(f.id) is not f)
    ]


def cmd_graph(args: argparse.Namespace) -> int:
    """Print the record graph, or the part within --depth links of --focus, as json, dot or mermaid.

    example: assay graph --focus SOTA-364 --depth 1 --format mermaid
    """
    if args.depth < 0:
        raise UsageProblem(f"--depth {args.depth}: a number of links is 0 or more")
    from assay import graph  # networkx, which no other command but check's depends_on knots loads

    kb = load(args.root)
    g = graph.build(kb, overview.briefs(kb))
    if args.focus:
        if args.focus not in g:
            record_id(kb, args.focus, option="--focus", valid=False)  # a usage error where it names no record
            raise UsageProblem(f"--focus {args.focus}: the graph has no node for it")
        g = graph.focus(g, args.focus, args.depth)
    if args.format == "json":
        print(json.dumps(graph.to_json(g), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(graph.to_dot(g) if args.format == "dot" else graph.to_mermaid(g))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Export every source as BibTeX or CSL-JSON (as Zotero, Mendeley and pandoc read it), or the whole knowledge
    base with computed status as JSON.

    example: assay export bibtex > refs.bib; assay export csl > refs.json
    """
    from assay import export  # with the graph, and so networkx

    kb = load(args.root)
    if args.what == "bibtex":
        sys.stdout.write(export.bibtex_all(kb))
    elif args.what == "csl":
        sys.stdout.write(export.csl_all(kb))
    else:
        states = States.read(kb)
        export.write_json(kb, states, sys.stdout)
        states.save()  # every claim's status, found out on the way, for the next status or export
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    """Merge result folders (another machine's checkout, a shard's output) into results/, by the ledger's rules.

    Per check and device: a result matching this repository's inputs beats one that does not; then the
    later finished wins; an error never replaces a completed measurement. Conflicts are printed. An incoming
    result is believed only as far as it can be recomputed: one whose outcomes or verdict do not follow from its own
    measurements, with a time past this machine's clock, a settling block on seeds read before, or a figure it cannot
    bring is refused with a diagnostic naming its file, and ours is kept. A DIR with no results/ is a usage error.
    Idempotent: merging the same folder twice changes nothing the second time.

    example: assay merge ../gpu-box/results
    """
    from assay.ledger.merge import merge

    report = merge(load(args.root), args.dirs)
    for d in report.problems:
        print(d.render())  # render escapes what a file says; its hint line is its own
    kinds = {"added": report.added, "replaced": report.replaced, "kept": report.kept, "conflict": report.conflicts}
    for title, lines in (kinds | {"skipped": report.skipped, "error": report.failed}).items():
        for line in lines:
            print(printable(f"{title}: {line}"))
    print(
        f"{len(report.added)} added, {len(report.replaced)} replaced, {len(report.kept)} kept, "
        f"{len(report.conflicts)} conflict(s), {len(report.skipped)} skipped",
        file=sys.stderr,
    )
    return 1 if report.problems or report.failed else 0


def cmd_init(args: argparse.Namespace) -> int:
    """Start a new knowledge base in DIR: folders, mkdocs.yml, schemas, an example claim with its verifier, a lock file.

    In it, `assay check` is clean, `pytest verify` writes a ledger and `mkdocs build --strict` passes.

    example: assay init my-kb
    """
    from assay.scaffold import init

    for path in init(args.dir):
        print(path.as_posix())
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    """Regenerate the JSON Schemas in schema/ from the record model.

    example: assay schema
    """
    for path in schema.write(args.root):
        print(path.relative_to(args.root).as_posix())
    return 0


def cmd_readme(args: argparse.Namespace) -> int:
    """Regenerate the reference pages' tables (fields, statuses, diagnostics, settings) and the guide's example files.

    example: assay readme
    """
    from assay.readme import update_pages

    for page, changed in update_pages(args.root):
        print(f"{page} updated" if changed else f"{page} is current")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="assay", description="A knowledge base of literature claims that can be run.")
    parser.add_argument(
        "--root",
        type=Path,
        default=None,
        help="the knowledge base's folder (default: the nearest one at or above the current folder)",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    # the same options after the command name (`assay check --root kb`); SUPPRESS keeps the earlier value
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--root", type=Path, default=argparse.SUPPRESS, help="the knowledge base's folder")
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name: str, func: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
        doc = (func.__doc__ or "").strip()
        p = sub.add_parser(
            name,
            help=" ".join(doc.split("\n\n")[0].split()).split(". ")[0].rstrip(".") + ".",  # its first sentence
            description=doc,
            parents=[common],
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        p.set_defaults(func=corpus.without_collector(func))
        return p

    add("check", cmd_check).add_argument(
        "--claim", action="append", default=[], metavar="ID", help="only the problems that bear on this claim (repeat for more)"
    )
    p = add("new", cmd_new)
    p.add_argument("kind", choices=("claim", "source", "decision"))
    p.add_argument("--theory", action="store_true", help="a THEORY claim rather than a SOTA one")
    p.add_argument("--source", metavar="LIT-NNN", help="the source a new claim cites (required for a claim)")
    p.add_argument("--check", metavar="ID", action="append", help="a check of the new claim (repeat for more)")
    p = add("show", cmd_show)
    p.add_argument("id")
    p.add_argument("--json", action="store_true", help="print the record as JSON (its fields as the schema has them)")
    add("status", cmd_status)
    add("plan", cmd_plan).add_argument("--claim", action="append", default=[], metavar="ID", help="only this claim")
    p = add("history", cmd_history)
    p.add_argument("target", metavar="ID[/CHECK]")
    p.add_argument("--json", action="store_true", help="print it as JSON")
    p = add("graph", cmd_graph)
    p.add_argument("--focus", metavar="ID")
    p.add_argument("--depth", type=int, default=1, help="links from --focus to follow (0 or more)")
    p.add_argument("--format", choices=("json", "dot", "mermaid"), default="json")
    p = add("export", cmd_export)
    p.add_argument("what", choices=("bibtex", "csl", "json"))
    p = add("merge", cmd_merge)
    p.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="a folder holding results/, or a results folder")
    from assay.dispatch import command as verification  # its options live with it

    verification.add_arguments(add("verify", verification.cmd_verify))
    from assay import rejudging, sources  # their options live with them

    rejudging.add_arguments(add("rejudge", rejudging.cmd_rejudge))

    sources.add_arguments(add("sources", sources.cmd_sources))
    p = add("init", cmd_init)
    p.add_argument("dir", type=Path, help="the folder to create (it must not exist, or be empty)")
    add("schema", cmd_schema)
    add("readme", cmd_readme)
    return parser


#: Commands that work in any folder; every other one needs a knowledge base.
WITHOUT_KNOWLEDGE_BASE = ("init", "schema", "readme")


def _root(args: argparse.Namespace) -> Path:
    """The knowledge base a command works on: --root as given, else the nearest one above the current folder."""
    root = args.root or find_root(Path.cwd())
    if args.command in WITHOUT_KNOWLEDGE_BASE:
        return (root or Path.cwd()).resolve()
    if root is None or not is_knowledge_base(root):
        raise UsageProblem(
            f"{args.root or Path.cwd()} is not a knowledge base (no claims/ or sources/ folder); run assay init to start one, "
            "or pass --root"
        )
    return root.resolve()


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        args.root = _root(args)
        status = args.func(args)
        sys.stdout.flush()  # a reader that went away shows here, where it is handled, not at exit
        return status
    except UsageProblem as e:
        print(f"assay: error: {printable(str(e))}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (`assay status | head`): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as e:  # noqa: BLE001 - the last line of defence: one line, not a traceback
        if args.debug:
            traceback.print_exc()
        else:
            print(f"assay: internal error: {type(e).__name__}: {e} (run with --debug for the traceback)", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
