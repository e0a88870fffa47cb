"""The catalogue of diagnostic codes: each code's name, severity and what it means, declared once.

``assay.diagnostics`` renders diagnostics by these codes; the site's diagnostics page and the reference are generated
from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Code:
    """One diagnostic code: its name, severity and what it means."""

    name: str
    severity: Severity
    meaning: str


#: The most diagnostics listed for one file; one too-many-problems diagnostic counts the rest.
PER_FILE = 50

CODES = [
    # reading files
    Code(
        "unreadable-file",
        "error",
        "A file is a link leading outside the knowledge base, not a regular file, or too large; it is not read.",
    ),
    Code(
        "not-utf8",
        "error",
        "The file is not valid UTF-8, or a Python module declares another coding (`# -*- coding: utf-7 -*-`), in which "
        "Python would run other text than Assay reads and shows; save it as UTF-8.",
    ),
    Code("yaml-syntax", "error", "The YAML does not parse."),
    Code("yaml-duplicate-key", "error", "A mapping repeats a key; YAML would silently keep the last one."),
    Code("yaml-tag", "error", "A YAML tag (`!!python/object`, `!custom`) is used; records are plain data."),
    Code("yaml-alias", "error", "An anchor or alias (`&a`, `*a`) is used; records spell every value out."),
    Code("yaml-not-mapping", "error", "The document is not a mapping of fields, or the file holds several documents."),
    Code("yaml-too-deep", "error", "The document nests deeper than any record does."),
    Code(
        "bidi-control",
        "error",
        "Text (a record's, or a Python module's) holds a bidirectional control character, which can make it show in "
        "another order than it reads.",
    ),
    Code("yaml-too-large", "error", "The document holds more items than any record does (it would expand without bound)."),
    Code(
        "too-many-problems",
        "error",
        f"A file has more than {PER_FILE} problems; the rest are counted, not listed (fix these and run again).",
    ),
    Code("too-many-warnings", "warning", f"A file has more than {PER_FILE} warnings; the rest are counted, not listed."),
    Code("schema-line", "warning", "The `# yaml-language-server: $schema=` line is missing, so editors cannot validate."),
    # the record itself
    Code("bad-id", "error", "The id does not have the form of its series (`LIT-NNN`, `SOTA-NNN`, `THEORY-NNN`, `ADR-NNN`)."),
    Code("id-mismatch", "error", "The id differs from the file name."),
    Code("wrong-folder", "error", "The record's series belongs in another folder."),
    Code("duplicate-id", "error", "Two records share an id."),
    Code("missing-field", "error", "A required field is absent."),
    Code("unknown-field", "error", "A field the schema does not define."),
    Code("wrong-type", "error", "A field's value has the wrong type or form."),
    Code("bad-value", "error", "A field's value is not one of those allowed, or breaks a rule of the record."),
    Code("missing-locator", "error", "A citation, reported number or comparison has no locator."),
    Code("empty-quote", "error", "A citation's quote is empty."),
    Code("duplicate-check", "error", "Two checks of a claim share an id."),
    Code("duplicate-reported", "error", "Two reported numbers of a claim share an id."),
    # assertions
    Code("span-not-in-text", "error", "An assertion's filed words are not an exact span of the statement or a condition."),
    Code("uncovered-sentence", "error", "A sentence of the statement or of a condition belongs to no assertion."),
    Code("unknown-check", "error", "An assertion names a check the claim does not have."),
    Code("unused-check", "error", "A check is evidence for no assertion, so nothing it measures reaches a verdict."),
    Code("unknown-citation", "error", "An assertion names a citation number the claim does not have."),
    Code("duplicate-assertion", "error", "Two assertions of a claim share an id."),
    Code(
        "undeclared-metric",
        "error",
        "An expectation names a metric its check does not declare under `metrics:` with its unit and what it measures.",
    ),
    Code(
        "incomparable-reported",
        "error",
        "An expectation links a `reported` number of another quantity or unit than its "
        "metric's, so the paper's number would stand beside ours as if they measured the same thing.",
    ),
    Code(
        "unknown-metric",
        "error",
        "An assertion's evidence reads (`metrics:`) a metric that none of the check's expectations names.",
    ),
    Code(
        "no-control",
        "warning",
        "A check above the analytic tier marks none of its expectations `control: true`, so "
        "nothing shows it would fail for a model without the effect.",
    ),
    Code(
        "placeholder",
        "error",
        "A field still holds the text `assay new` wrote for a person to replace, or a verifier line its `# assay new:` "
        "mark, so the record cannot read as cited or checked.",
    ),
    Code(
        "unbounded-formula",
        "error",
        "A formula in record text uses a command that draws, links, paints outside its place or defines a macro "
        "(`\\rule`, `\\href`, `\\url`, `\\includegraphics`, `\\htmlStyle`, `\\smash`, `\\llap`, `\\def`), or a "
        "size larger than a few lines of text: it could paint over the page, its verdict included.",
    ),
    Code(
        "unreadable-input",
        "error",
        "A file a check `reads` is missing, a folder, or not a regular file inside the knowledge base (for "
        "`package:NAME/PATH`, inside that installed package, or the package is not installed); its result could never "
        "go stale, so `pytest verify` does not run the check.",
    ),
    # evidence that could have failed
    Code(
        "unknown-counterpart",
        "error",
        "An expectation's `against:` names a metric its check does not declare, its own metric, or one in another unit.",
    ),
    Code(
        "post-hoc",
        "warning",
        "An expectation was moved after its result (the move turned a failing or inconclusive result into a pass), or "
        "its seeds were raised after an inconclusive result outside a settling run, as the repository's history shows "
        "(`assay history`); it votes for nothing until a run on fresh seeds holds.",
    ),
    Code(
        "reported-with-evidence",
        "error",
        "An assertion that reports what a source says (`source: {kind: reported}`) names a check as its evidence: a run "
        "cannot contradict a quotation; it rests on its quote.",
    ),
    Code(
        "reads-other-sentence",
        "warning",
        "An assertion reads all of a check whose expectations other assertions name as testing their own sentences: it "
        "is judged only by the rest; name the ones that test its own `says:`.",
    ),
    Code(
        "size-unstated",
        "warning",
        "An expectation read by an assertion whose words or citation state a size carries no `source_value` (nor "
        "`no_size_because:`): a weaker threshold would pass unnoticed as full support.",
    ),
    Code(
        "constant-counterpart",
        "warning",
        "A counterpart's per-seed values are one constant, or an exact function of the effect's own values: it is no "
        "measurement of another condition, and challenges nothing.",
    ),
    Code(
        "likely-identity",
        "warning",
        "A seeded expectation of a toy or reduced check has the same value on every seed (and so have its "
        "counterparts): it holds by construction, it seems; mark it `identity: true`, or measure what varies.",
    ),
    Code(
        "unknown-reference",
        "error",
        "Prose cites `{CHECK.METRIC}` or `{reported.ID}` that the record or the ledger does not hold.",
    ),
    Code(
        "number-not-in-ledger",
        "warning",
        "A literal decimal in prose matches no value the ledger or the record holds for the claim: write it as a "
        "reference (`{CHECK.METRIC}`), or mark a number from elsewhere (`{source: N}`).",
    ),
    Code(
        "unconfirmed",
        "warning",
        "A seeded expectation was fixed only together with or after its first result and no run on fresh seeds has "
        "confirmed it since: a supported verdict that reads it is provisional (assay verify --confirm).",
    ),
    Code(
        "pilot-seeds",
        "warning",
        "`pytest verify --measure`: a check's `seeds:` overlap the seeds the pilot just read, so a ledger run on them "
        "would read the pilot's seeds again, not fresh ones; write the next block after the pilot's (the measure run "
        "says which) before the ledger run.",
    ),
    Code(
        "no-history",
        "warning",
        "The repository's history is missing (a shallow clone, or no git), so when each expectation was fixed cannot be "
        "told: verdicts that read seeded expectations are provisional.",
    ),
    Code(
        "unchallenged",
        "warning",
        "An expectation a supporting assertion reads names no counterpart (`against:`), so nothing shows it could have "
        "failed; it votes for nothing.",
    ),
    Code(
        "uncountered-control",
        "warning",
        "A control expectation (`control: true`) of a check a supporting assertion reads names no counterpart "
        "(`against:`), so nothing shows that the model with the effect would fail it.",
    ),
    Code(
        "scaffold-threshold",
        "warning",
        "An expectation keeps the metric name or the threshold `assay new` wrote (a stand-in nobody measured: the "
        "value on a line that still carries its `# assay new:` mark, whatever the comparison around it); set it from a "
        "measurement on pilot seeds (`pytest verify --measure`) and the source's size, and delete the mark.",
    ),
    Code(
        "tests-not-read",
        "warning",
        "A check's `tests:` quotes words of the claim, or an assertion's `says:`, that no assertion reading the check "
        "quotes or says, so the check tests one part of the claim and votes on another.",
    ),
    Code(
        "weaker-than-source",
        "warning",
        "A threshold asks less than the size the source states (`source_value`): the assertion is at best "
        "direction-only; `weaker_because:` says why.",
    ),
    Code("apparatus-evidence", "error", "An assertion names an apparatus check (our own machinery) as evidence."),
    Code("unknown-apparatus", "error", "A check's `uses:` names no apparatus check of the claim."),
    Code("unargued-subset", "warning", "An assertion reads only some expectations of a check without saying why (`because:`)."),
    # references between records
    Code("unknown-source", "error", "A citation, reported number or comparison names a source that does not exist."),
    Code("unknown-record", "error", "A relation names a record that does not exist."),
    Code("unknown-reported", "error", "An expectation refers to a reported number the claim does not have."),
    Code("unknown-decision", "error", "A comparison is governed by a decision that does not exist."),
    Code("self-relation", "error", "A record relates to itself."),
    Code("depends-on-cycle", "error", "`depends_on` relations form a cycle, so no claim in it can be verified first."),
    Code("compared-against-later", "error", "ADR-011: a source can only have compared itself against earlier sources."),
    Code("compared-against-self", "error", "ADR-011: a source is listed as compared against itself."),
    Code(
        "compared-against-cycle",
        "error",
        "ADR-011: `compared_against` links form a cycle among sources whose dates "
        "do not order them; the comparison graph is acyclic.",
    ),
    Code("uncited-source", "warning", "No claim cites the source."),
    # quotes against the words of their sources (compared as ``assay.records.passages`` says)
    Code("quote-not-in-source", "error", "A citation's quote is not a passage of its source, nor a span of one."),
    Code("locator-mismatch", "error", "A citation's quote is a passage of its source, but at another locator."),
    Code(
        "source-without-passages",
        "warning",
        "A cited source keeps no passages, so the quotes that cite it are not checked against its words.",
    ),
    Code("passage-not-in-copy", "error", "`assay sources verify`: a passage is not in the copy of the source's text."),
    Code(
        "passage-context", "warning", "`assay sources verify`: a passage is in the copy, but not between its prefix and suffix."
    ),
    # verifiers
    Code("unknown-verifier", "error", "A check names a verifier test that does not exist."),
    Code("verifier-mismatch", "error", "A check's verifier test is tied (by its marker) to another claim or check."),
    Code("orphan-verifier", "error", "A verifier test is tied to a claim or check that does not exist."),
    Code("untied-verifier", "error", "A test in `verify/` carries no `claim` marker."),
    Code(
        "parametrized-verifier",
        "error",
        "A verifier test is parametrized (`@pytest.mark.parametrize`), so pytest would run it several times for one "
        "check; `pytest verify` refuses it.",
    ),
    Code(
        "duplicate-verifier",
        "error",
        "Two tests in `verify/` are marked for the same claim and check, so which one the result comes from is unclear.",
    ),
    # the metrics a verifier records, read from its `evidence.metric` calls before it runs (assay.records.metric_rules)
    Code(
        "undeclared-recording",
        "warning",
        "A verifier records a metric its check does not declare, the nearest in name to a declared metric it never "
        "records (`unrecorded-metric`): most likely one of the two was renamed. A verifier may record more than its "
        "check declares (a chance level, a spread); such a recording alone is not reported.",
    ),
    Code(
        "unrecorded-metric",
        "error",
        "A check declares a metric that its verifier never records: no `evidence.metric` call of the verifier, or of "
        "the functions of its module it hands the evidence to, names it, and no name built at run time could be it.",
    ),
    Code(
        "unit-mismatch",
        "error",
        "A verifier records a metric with a `unit=` other than the one its check declares; the run would stop there.",
    ),
    Code(
        "unread-metric-names",
        "warning",
        "Some metric names of a verifier are built at run time (from a dict, a variable), and a metric its check "
        "declares is among none of the names that could be read, so only a run tells whether it is recorded.",
    ),
    # the ledger
    Code(
        "bad-ledger",
        "error",
        "A ledger file cannot be read: not JSON (truncated, say), not a JSON object, or not a "
        "regular file inside the knowledge base. The check counts as an error.",
    ),
    Code(
        "ledger-format",
        "error",
        "A ledger file is of another format version than this Assay reads; the check counts as an error.",
    ),
    Code(
        "ledger-shape",
        "error",
        "A ledger file is JSON of the right format but a field is missing or has the wrong type; the check counts as an error.",
    ),
    Code(
        "ledger-misplaced",
        "error",
        "A ledger file's claim, check or device differs from its path, or its name is not "
        "`<check>.<device>.json`; it is not read as evidence.",
    ),
    Code(
        "ledger-orphan",
        "warning",
        "A ledger file is the result of a claim, check or device this knowledge base does not have (a check renamed "
        "or removed); nothing reads it.",
    ),
    Code(
        "ledger-leftover",
        "warning",
        "A temporary file in `results/` that a run or a merge killed between writing a file and renaming it left; "
        "nothing reads it, and it can be deleted.",
    ),
    Code(
        "ledger-figure",
        "warning",
        "A result names a figure that is missing, is not the one it drew (a run killed between the two "
        "writes), or holds what could run or fetch (a script, a stylesheet, a reference outside itself); "
        "the figure is not shown.",
    ),
    # merging another machine's ledger (assay merge): what an incoming result says of itself is not believed
    Code(
        "merge-misjudged",
        "error",
        "An incoming result's stored outcomes or verdict do not follow from its own per-seed measurements under this "
        "record's expectations; it is not merged, and ours is kept.",
    ),
    Code(
        "merge-future",
        "error",
        "An incoming result holds a time later than this machine's clock (beyond a small skew), which would win the "
        "merge; it is not merged, and ours is kept.",
    ),
    Code(
        "merge-settling",
        "error",
        "An incoming result says it is a settling run, but the seeds it read are not fresh (not its settling seeds, "
        "below the settling range, or read before); it is not merged.",
    ),
    Code(
        "merge-figure",
        "error",
        "An incoming result names a figure that cannot be brought with it (missing, a link, not the figure it names, "
        "or not a safe SVG); it is not merged, and ours is kept with its figures.",
    ),
]
