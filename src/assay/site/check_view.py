"""A check on a claim page: its runs per device, each expectation as measured beside the paper's number, the
figures its verifier drew, and what the machine had. Views only: the template decides the markup."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import groupby

from assay import units, vocabulary
from assay.experiment import Check
from assay.ledger.messages import clean_message
from assay.ledger.result import Environment, Evaluated, PaperNumber, Result
from assay.model import Reported
from assay.power import open_plans
from assay.precision import beside
from assay.site.markup import OPS, anchor, number, quantity, source_href
from assay.site.views import ClaimView, Version, caption
from assay.status import CheckState
from assay.vocabulary import Status

#: The colour of an expectation's outcome: that of the check verdict it gives.
OUTCOME = {
    "holds": vocabulary.CHECK["passed"],
    "fails": vocabulary.CHECK["failed"],
    "inconclusive": vocabulary.ASSERTION["inconclusive"],
}


@dataclass(frozen=True)
class Figure:
    href: str  # the SVG, shown in an <img>
    caption: str
    check: str
    device: str


@dataclass(frozen=True)
class Paper:
    """A number a paper reports, as the page shows it: ``>99.9 %`` with where it says so."""

    text: str
    source: str
    locator: str
    href: str
    differs: str = ""  # beside one of ours: what differs between the two (unit, quantity, scale and data)


@dataclass(frozen=True)
class Measure:
    """One expectation as evaluated: ours, the threshold, whether it held, and the paper's number when linked."""

    metric: str
    measured: str
    expected: str
    holds: bool | None
    outcome: str  # holds / fails / inconclusive
    outcome_status: Status  # its colour
    control: bool
    seeds: str
    paper: Paper | None
    post_hoc: bool = False  # moved after a failing or inconclusive result: it votes for nothing (``Registered``)
    plan: str = ""  # an open question's planning figure (``assay.power``): the fresh seeds that would decide it
    n: int = 0  # the seeds it rests on (0: one value, no seeds)
    each: tuple[str, ...] = ()  # each seed's value, where it rests on three seeds or fewer
    interval: str = ""  # the mean's interval, where it is read so
    registration: Status | None = None  # when its expectation was fixed (``assay.ledger.registration``)
    check: str = ""  # the check it belongs to

    @property
    def how_sure(self) -> str:
        """``3 seeds: 0.21, 0.22, 0.24``, ``5 seeds, interval [0.01, 0.03]``, or '' for one exact value."""
        if not self.n:
            return ""
        head = f"{self.n} seed{'s' if self.n != 1 else ''}"
        if self.each:
            return f"{head}: {', '.join(self.each)}"
        return f"{head}, interval {self.interval}" if self.interval else f"{head}, {self.seeds.split(', ', 1)[-1].split(';')[0]}"

    @property
    def sentence(self) -> str:
        return f"{self.metric} = {self.measured}, expected {self.expected}"


@dataclass(frozen=True)
class Run:
    """A check on one device: its verdict, what did not hold, the crash, the figures and the machine."""

    device: str
    status: Status
    measures: list[Measure]
    failed: list[Measure]
    error: str
    figures: list[Figure]
    facts: list[tuple[str, str]]
    notes: list[tuple[Status | None, str]]


@dataclass(frozen=True)
class Cell:
    """A stretch of commits that changed a check's ledger file on a device and left it with one verdict: its first
    commit is the one that brought the verdict."""

    first: Version
    last: Version
    commits: int
    status: Status

    @property
    def text(self) -> str:
        """``4c6ac739 2026-11-29 to df29c904 2026-12-01, 9 commits: passed``."""
        span = f"{self.first.commit} {self.first.date}"
        if self.commits > 1:
            span += f" to {self.last.commit} {self.last.date}, {self.commits} commits"
        return f"{span}: {self.first.verdict}"


def cells(versions: list[Version]) -> list[Cell]:
    """The strip of a check's versions on a device: one cell per run of consecutive commits with the same verdict."""
    runs = [list(run) for _, run in groupby(versions, key=lambda v: v.verdict)]
    return [Cell(r[0], r[-1], len(r), check_status(r[0].verdict)) for r in runs]


@dataclass(frozen=True)
class Registered:
    """How the expectations on ``metrics`` were fixed: their registration, and the line that explains it (one line
    for every expectation of the check that shares it)."""

    status: Status
    metrics: list[str]
    why: str


@dataclass(frozen=True)
class CheckView:
    id: str
    tests: str
    tier: str
    verifier: str
    code: str  # docs-relative target of the verifier's source
    line: int
    known_failing: str | None
    note: str | None
    verdicts: list[tuple[str, Status]]
    runs: list[Run]
    strips: dict[str, list[Cell]] = field(default_factory=dict)  # device -> its verdicts over the commits, oldest first
    registration: list[Registered] = field(default_factory=list)  # empty: no history to compute it from

    @property
    def idle(self) -> list[str]:
        """The devices it declares and has no result on."""
        return [d for d, s in self.verdicts if s.name == "not-run"]

    @property
    def chips(self) -> list[tuple[str, Status]]:
        """Its verdicts as its summary shows them: on the devices it has a result on, or, where it has none, not-run
        on each device it declares (a check run only on a GPU no run has reached still shows where it stands)."""
        return [(d, s) for d, s in self.verdicts if s.name != "not-run"] or self.verdicts


def check(view: ClaimView, i: int) -> CheckView:
    check = view.claim.checks[i]
    states = [s for s in view.state.checks if s.check == check.id]
    module, _, func = check.verifier.partition("::")
    line, _ = view.loaded.where(("checks", i))
    return CheckView(
        check.id,
        check.tests,
        check.tier,
        check.verifier,
        f"code/{module}.md#{anchor(func)}",
        line,
        view.rendered(check.known_failing),
        view.rendered(check.note),
        [(s.device, check_status(s.status)) for s in states],
        [run(view, check, s) for s in states if s.result or s.problem],
        {device: cells(versions) for device, versions in view.history.get(check.id, {}).items()},
        registration(states),
    )


def registration(states: list[CheckState]) -> list[Registered]:
    """Each expectation's registration, those that share a kind and a reason on one line, in the record's order."""
    lines: dict[tuple[str, str], list[str]] = {}
    for r in next((s.registration for s in states if s.registration), ()):
        lines.setdefault((r.kind, r.why), []).append(r.metric)
    return [Registered(vocabulary.REGISTRATION[kind], metrics, why) for (kind, why), metrics in lines.items()]


def run(view: ClaimView, check: Check, s: CheckState) -> Run:
    if s.result is None:  # the ledger file is there and cannot be read
        problem = s.problem.message if s.problem else "no result"
        return Run(
            s.device, check_status(s.status), [], [], f"The ledger file cannot be read: {clean_message(problem)}", [], [], []
        )
    r = s.result
    quantities = {x.id: x.quantity for x in view.claim.reported}
    fixed = {g.metric: vocabulary.REGISTRATION[g.shown] for g in s.registration}
    measures = [
        replace(measure(check, e, r, quantities), registration=fixed.get(e.metric), check=check.id) for e in r.expectation
    ]
    measures = [replace(m, post_hoc=True) if m.metric in s.post_hoc else m for m in measures]
    plans = {p.metric: p for p in open_plans(check, r)}
    settled = f"Settled on {len(r.settling.seeds)} fresh seeds and still open. " if r.settling else ""
    measures = [replace(m, plan=f"{settled}Plan: {plans[m.metric].words}.") if m.metric in plans else m for m in measures]
    failed = [m for m in measures if m.outcome != "holds"] if r.verdict in ("failed", "known-failing", "inconclusive") else []
    error = ""
    if r.last_error:
        said = clean_message(r.last_error.message)
        kind = f"{r.last_error.kind}: {said}" if said.strip() else r.last_error.kind  # nothing said: the kind alone
        error = f"Last run ({r.last_error.finished}) ended in {kind}"
    elif r.verdict == "failed" and not failed and r.message:
        error = clean_message(r.message)  # a known failure that passed, or a failure the expectations do not show
    figures = [Figure(f"figures/{s.claim}/{f.file}", f.caption or caption(check, f.name), check.id, s.device) for f in r.figures]
    return Run(s.device, check_status(s.status), measures, failed, error, figures, facts(r), notes(s))


def check_status(name: str) -> Status:
    """A check status by name (``inconclusive`` is the assertion's colour until the check vocabulary has it)."""
    return vocabulary.CHECK.get(name) or vocabulary.ASSERTION.get(name) or vocabulary.CHECK["not-run"]


def measure(check: Check, e: Evaluated, r: Result, quantities: dict[str, str | None]) -> Measure:
    """An expectation as the page shows it; ``quantities`` are the record's reported numbers' kinds, by id (an older
    result's linked number may not carry its own)."""
    metric = r.metrics.get(e.metric)
    spec = check.metric(e.metric)  # the unit the record declares
    unit = e.unit or (metric.unit if metric else None) or (spec.unit if spec else None)
    seeds = [units.shown(v, unit)[0] for v in (metric.seeds if metric else [])]
    spread = f"{len(seeds)} seeds, {number(min(seeds))} to {number(max(seeds))}" if len(seeds) > 1 else ""
    if e.seeds_holding is not None and e.seeds_total:
        spread += f"; holds on {e.seeds_holding} of {e.seeds_total}"
    around = f"[{', '.join(number(units.shown(end, unit)[0]) for end in e.interval)}]" if e.interval else ""
    if e.interval:
        spread += f"; mean's interval {around}"
    paper, p = None, e.paper
    if p is not None:
        kind = p.quantity or quantities.get(e.reported or "")
        paper = replace(paper_number(p), differs=differs(check.tier, unit, spec.quantity if spec else None, p.unit, kind))
    threshold, word = units.shown(e.value, unit)
    within = f" within {number(units.shown(e.tol, unit)[0])}" if e.tol is not None else ""
    value = units.shown(e.measured, unit)[0] if isinstance(e.measured, float) else e.measured
    shown = beside(value, threshold) if isinstance(value, float) else number(value)
    measured = f"{shown} {word}" if word else shown
    return Measure(
        e.metric,
        measured,
        f"{OPS[e.op]} {number(threshold)}{within}",
        e.holds,
        e.outcome,
        OUTCOME[e.outcome],
        e.control,
        spread.strip("; "),
        paper,
        n=len(seeds),
        each=tuple(number(v) for v in seeds) if len(seeds) <= 3 else (),
        interval=around,
    )


def facts(r: Result) -> list[tuple[str, str]]:
    cpu = f" ({number(r.cpu_s)} s CPU)" if r.cpu_s is not None else ""
    facts = [("Duration", f"{number(r.duration_s)} s{cpu}"), ("Environment", environment_text(r.environment))]
    if r.peak_memory_mb is not None:
        facts.append(("Peak memory", f"{number(r.peak_memory_mb)} MB"))
    return facts + [("Finished", r.finished)]


def notes(s: CheckState) -> list[tuple[Status | None, str]]:
    r = s.result
    notes: list[tuple[Status | None, str]] = []
    if s.off_lock:
        notes.append((vocabulary.FLAGS["off-lock"], "; ".join(s.off_lock)))
    if r is not None and r.unstable:
        notes.append(
            (
                vocabulary.FLAGS["unstable"],
                f"verdicts with the same inputs: {' → '.join(r.unstable.verdicts)} (since {r.unstable.since})",
            )
        )
    if s.stale:
        notes.append((vocabulary.FRESHNESS["stale"], "; ".join(s.stale)))
    return notes


def machines(checks) -> list[str]:
    """The machines a page's results ran on, each once, in the order they are met; each run's environment fact becomes
    the machine's number (the same machine line under every check of a page is the page's weight, not news)."""
    seen: dict[str, int] = {}
    for check in checks:
        for run in check.runs:
            for k, (name, value) in enumerate(run.facts):
                if name == "Environment":
                    run.facts[k] = ("Machine", f"machine {seen.setdefault(value, len(seen) + 1)}, above")
    return list(seen)


def environment_text(env: Environment) -> str:
    """The machine of a result in one line: Python, torch and its build, CPU, BLAS, GPU."""
    bits = [
        f"Python {env.python}",
        f"torch {env.packages.get('torch', '?')} ({env.torch_build})",
        f"{env.cpu_model}" + (f" ({env.cpu_capability})" if env.cpu_capability else ""),
        f"{env.cores} cores, {env.threads} thread(s)",
    ]
    if env.blas:
        bits.append("BLAS " + ", ".join(env.blas))
    if env.gpu:
        bits.append(f"GPU {env.gpu.name}" + (f", driver {env.gpu.driver}" if env.gpu.driver else ""))
    return clean_message("; ".join(bits))


def differs(tier: str, unit: str | None, quantity: str | None, paper_unit: str, paper_quantity: str | None) -> str:
    """What a reader must know before setting our number beside the paper's: where the units or the kinds of number
    differ (an older result may carry a link the record has since dropped), and the scale, which outside a
    ``full`` check is ours and so is the data."""
    bits = []
    if unit != paper_unit:
        bits.append(f"unit (ours {unit or 'none'}, the paper's {paper_unit})")
    if not quantity or quantity != paper_quantity:
        bits.append(f"quantity (ours {quantity or 'not declared'}, the paper's {paper_quantity or 'not declared'})")
    if tier != "full":
        bits.append(f"scale and data (ours a {tier} check, the paper's own setting)")
    return "differs: " + "; ".join(bits) if bits else "same quantity, unit and setting"


def paper_number(p: Reported | PaperNumber) -> Paper:
    """A reported number (the record's, or a result's copy) with its bound and unit (``>99.9 %``) and where the source
    says it."""
    return Paper(quantity(p.value, p.unit, p.bound), p.source, p.locator, source_href(p.source, p.locator))
