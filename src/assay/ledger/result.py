"""The ledger's record: one typed ``Result`` per check and device, declared once (its JSON Schema is generated).

Everything in it is data that cannot execute when read: numbers are finite, names are snake_case, times are
UTC timestamps. And everything in it is bounded (``MAX_TEXT`` and the rest, below): every string, every count, and
the file as written.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, model_validator

from assay import reading
from assay.experiment import SLUG, Device, MetricName, Tier
from assay.files import MAX_BYTES
from assay.ids import CLAIM_ID

FORMAT = 2


# The bounds of a ledger file, declared once. The record refuses a result past any of them, so every reader refuses
# such a file and the one writer (``assay.ledger.store.write_result``) writes none; a verifier's ``evidence`` is held
# to them as it is recorded (``assay.evidence.recorder``), so that a run past them is an error of its check, beside
# its last measurement.

#: Characters of any one string of a result: a unit, a caption, a message, a name, an input's path.
MAX_TEXT = 4096
#: Characters of all its notes together (so of any one), and of a settling run's plan.
MAX_NOTES_CHARS = 64 * 1024
#: Metrics of one result.
MAX_METRICS = 1_000
#: Per-seed values of one metric; seeds read by one run.
MAX_SEEDS = 10_000
#: Per-seed values of all its metrics together.
MAX_VALUES = 100_000
#: Notes of one result.
MAX_NOTES = 1_000
#: Figures of one result.
MAX_FIGURES = 100
#: Entries of any other list or mapping (expectations, counterparts, input parts, packages, verdicts seen).
MAX_ITEMS = 10_000
#: Bytes of one figure's SVG.
MAX_FIGURE_BYTES = 2 * 2**20
#: Bytes of a ledger file as written: what every reader reads (``assay.files.MAX_BYTES``).
MAX_FILE_BYTES = MAX_BYTES


Verdict = Literal["passed", "failed", "known-failing", "inconclusive", "out-of-regime", "error"]


#: How an expectation came out: held, did not hold, or seeds disagree about it.
Outcome = Literal["holds", "fails", "inconclusive"]


ErrorKind = Literal["error", "timeout", "crash"]


Key = tuple[str, str, str]  # (claim, check, device)


#: A metric or figure name, the pattern of experiment.MetricName: what `evidence.metric()` and `evidence.figure()` accept.
NAME = MetricName.__metadata__[0].pattern


#: When a run finished, in UTC.
TIMESTAMP = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"


def timestamp(at: dt.datetime | None = None) -> str:
    """``at`` (by default this machine's time now) as ``TIMESTAMP`` writes it; in this shape text order is time order."""
    return (at or dt.datetime.now(dt.timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")


#: A number that is neither NaN nor infinite, refused by pydantic-core itself: a Python validator called for each
#: number of a result (every seed's value) cost 8-17 % of validating one of the repository's ledger files.
Finite = Annotated[float, Field(allow_inf_nan=False)]


def _real_time(text: str) -> str:
    try:  # the pattern has fixed the shape: what is left is whether each field is in range, which this checks in C
        dt.datetime.fromisoformat(text[:-1])
    except ValueError:
        raise ValueError("is not a real UTC time") from None
    return text


#: A real UTC time (its shape alone would let ``9999-99-99T99:99:99Z`` beat every real result in a merge).
Timestamp = Annotated[str, StringConstraints(pattern=TIMESTAMP), AfterValidator(_real_time)]


def beyond_bounds(notes: Iterable[str], per_seed: Iterable[int]) -> str | None:
    """Which bound over several fields the notes, or the numbers of per-seed values of the metrics, pass, in words;
    None within them."""
    chars = sum(len(n) for n in notes)
    if chars > MAX_NOTES_CHARS:
        return f"the notes hold {chars} characters, more than the {MAX_NOTES_CHARS} a result keeps"
    values = sum(per_seed)
    if values > MAX_VALUES:
        return f"the metrics hold {values} per-seed values together, more than the {MAX_VALUES} a result keeps"
    return None


class _Part(BaseModel):
    # no NaN or infinity anywhere in a result: what is written is JSON that every reader (and the export) takes; and
    # strict, as the records are (``experiment.PART``): a hand-edited `true` or `"0.5"` is never read as a number
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, str_max_length=MAX_TEXT, strict=True)


class Metric(_Part):
    """One number a verifier recorded."""

    value: Finite = Field(description="The number the expectation reads (a mean or an extreme over seeds).")
    unit: str | None = Field(None, description="Its unit (`nats`, `fraction`, `MSE`), where the verifier gave one.")
    seeds: list[Finite] = Field(
        default_factory=list, max_length=MAX_SEEDS, description="The per-seed values it summarises, where there are several."
    )


class PaperNumber(_Part):
    """The reported number an expectation is linked to (the same quantity in the same unit as the metric)."""

    value: float = Field(description="The number as the source reports it.")
    bound: Literal[">", ">=", "<", "<=", "~"] | None = Field(None, description="Where the source reports a bound (`>99.9`).")
    unit: str = Field(description="Its unit.")
    quantity: str | None = Field(None, description="What kind of number it is.")
    source: str = Field(description="The source that reports it.")
    locator: str = Field(description="Where the source reports it.")


class Counterpart(_Part):
    """An expectation's comparison evaluated on one counterpart: the same statistic, measured in the same run, on a
    condition where the comparison must not hold."""

    metric: MetricName = Field(description="The counterpart's metric.")
    measured: Finite = Field(description="Its measured value (the mean, where per-seed values were recorded).")
    outcome: Outcome = Field(description="How the expectation's comparison came out on it, read as the expectation is.")
    seeds: Literal["value", "all", "mean"] = Field("value", description="How it was read.")
    seeds_holding: int | None = Field(None, ge=0, description="With `all`: how many seeds satisfied the comparison.")
    seeds_total: int | None = Field(None, ge=0, description="How many seeds were read.")
    interval: tuple[float, float] | None = Field(None, description="With `mean`: the confidence interval of the mean.")
    flag: Literal["constant", "derived"] | None = Field(
        None,
        description="`constant`: the same value on every seed; `derived`: an exact affine function of the effect's own "
        "per-seed values (its negation, say). Either is no measurement of another condition, and challenges nothing.",
    )


#: Why a counterpart challenges nothing, in words.
FLAGGED = {
    "constant": "is the same constant on every seed",
    "derived": "is an exact function of the effect's own values",
}


class Evaluated(_Part):
    """One expectation of the check, as evaluated against what was measured."""

    metric: MetricName = Field(description="Metric name.")
    op: Literal[">", ">=", "<", "<=", "=="] = Field(description="Comparison.")
    value: float = Field(description="Threshold.")
    tol: float | None = Field(None, description="Absolute tolerance of `==`.")
    reported: str | None = Field(None, description="The `reported` number it is linked to.")
    control: bool = Field(False, description="Whether the record marks it a control.")
    regime: bool = Field(False, description="Whether the record marks it a regime expectation.")
    measured: Finite = Field(description="The measured value (the mean, where the verifier recorded per-seed values).")
    holds: bool = Field(description="Whether the comparison held (`outcome` is `holds`).")
    outcome: Outcome = Field(
        description="`holds`, `fails`, or `inconclusive` (seeds disagree, or the mean's interval straddles the threshold).",
    )
    seeds: Literal["value", "all", "mean"] = Field(
        "value", description="How it was read: the one value, every seed, or the mean's interval."
    )
    seeds_holding: int | None = Field(None, ge=0, description="With `all`: how many seeds satisfied it.")
    seeds_total: int | None = Field(None, ge=0, description="How many seeds were read.")
    interval: tuple[float, float] | None = Field(None, description="With `mean`: the confidence interval of the mean.")
    level: float | None = Field(None, gt=0.5, lt=1, description="With `mean`: the interval's confidence level (0.95 if unset).")
    unit: str | None = Field(None, description="The metric's declared unit.")
    paper: PaperNumber | None = Field(None, description="The linked reported number, as the record had it.")
    against: list[Counterpart] = Field(
        default_factory=list, max_length=MAX_ITEMS, description="The comparison evaluated on each counterpart the record names."
    )
    discriminates: bool | None = Field(
        None,
        description="Whether every counterpart fails the comparison (every seed, or its interval on the other side) "
        "and none is flagged (a constant, or a function of the effect's values); None when the record names none.",
    )

    def outcome_on(self, measured: Metric) -> str:
        """How this comparison, read as it says it was read (its seed reading and interval level), comes out on
        ``measured``: the one re-reading that a file's validation and the merge's instability rule share."""
        how = self.seeds if self.seeds != "value" else None
        level = (self.level or 0.95) if self.seeds == "mean" else None
        return reading.read(self.op, self.value, self.tol, how, level, measured.value, list(measured.seeds))["outcome"]


class Figure(_Part):
    """A figure the verifier drew, stored as SVG beside the ledger file."""

    name: MetricName = Field(description="The name the verifier gave it.")
    file: str = Field(
        pattern=r"^[a-z0-9-]+\.(cpu|cuda)\.[a-z][a-z0-9_]*(\.[0-9a-f]{12})?\.svg$",
        description="The SVG file beside the result, named by its content (older ledgers: without the hash).",
    )
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="Hash of the SVG, so a result and its figure are known to match.")
    caption: str | None = Field(None, description="What the figure shows, where the verifier said.")


class Gpu(_Part):
    """The accelerator a result was computed on."""

    name: str = Field(description="Device name, e.g. `NVIDIA H200`.")
    memory_mb: float | None = Field(None, description="Total device memory.")
    capability: str | None = Field(None, description="CUDA compute capability.")
    driver: str | None = Field(None, description="Driver version, where it could be read.")


class Environment(_Part):
    """What the machine had when the result was computed. Recorded and shown; never a reason for staleness."""

    python: str = Field(description="Python version.")
    platform: str = Field(description="Operating system and architecture.")
    hostname: str = Field(description="A hash of the host name: tells machines apart without naming them.")
    packages: dict[str, str] = Field(
        max_length=MAX_ITEMS, description="Installed versions of the packages whose pins are inputs."
    )
    torch_build: str = Field(description="`cpu`, or the CUDA version torch was built for.")
    cudnn: str | None = Field(None, description="cuDNN version, on CUDA builds.")
    cpu_model: str = Field(description="CPU model name.")
    cpu_capability: str | None = Field(None, description="The instruction set torch dispatches to (`AVX2`, `AVX512`).")
    blas: list[str] = Field(
        default_factory=list, max_length=MAX_ITEMS, description="BLAS/OpenMP libraries loaded, with version and architecture."
    )
    cores: int = Field(description="CPUs this process may run on.")
    threads: int = Field(description="torch intra-op threads.")
    gpu: Gpu | None = Field(None, description="The GPU, on `cuda` results.")
    seed: int | None = Field(None, description="The seed the `evidence` fixture set.")
    git_commit: str = Field("", description="The repository's commit when the run started, where git could tell.")


class Inputs(_Part):
    """What the result was computed from: each part hashed or versioned, and the hash of them all."""

    hash: str = Field(description="Hash of `parts`.")
    parts: dict[str, str] = Field(max_length=MAX_ITEMS, description="Input name -> hash or version (see `assay.ledger.inputs`).")


class RunError(_Part):
    """A run that measured nothing: it crashed, timed out or raised."""

    kind: ErrorKind = Field(
        description="`error` (an exception), `timeout` (over its CPU or wall limit), `crash` (the process died)."
    )
    message: str = Field(description="What happened, without the engine's frames.")
    finished: Timestamp = Field(description="When it ended.")
    inputs_hash: str | None = Field(None, description="The inputs it ran with.")


class Unstable(_Part):
    """Reruns with the same inputs gave different verdicts."""

    verdicts: list[Verdict] = Field(min_length=2, max_length=MAX_ITEMS, description="The verdicts seen, oldest first.")
    since: Timestamp = Field(description="When the verdict first changed without its inputs changing.")


class Settling(_Part):
    """What a settling run settled: the plan it followed, and the result it was run to decide, kept beside it."""

    plan: str = Field(
        max_length=MAX_NOTES_CHARS, description="The plan in words (seeds read, mean and sd, the seeds planned and why)."
    )
    seeds: list[int] = Field(
        max_length=MAX_SEEDS, description="The fresh seeds it read: disjoint from every seed read before it."
    )
    before_verdict: Verdict = Field(description="The verdict of the result it settled.")
    before_finished: Timestamp = Field(description="When that result was measured.")
    before_seeds: list[int] = Field(
        default_factory=list, max_length=MAX_SEEDS, description="The seeds that result read, where it said."
    )
    before_expectation: list[Evaluated] = Field(
        default_factory=list, max_length=MAX_ITEMS, description="Its expectation, as evaluated."
    )


class Result(_Part):
    """One ledger file: the last completed measurement of a check on a device, and the last run's error."""

    format: Literal[2] = Field(description="The ledger format version.")
    claim: Annotated[str, StringConstraints(pattern=CLAIM_ID)] = Field(description="The claim.")
    check: Annotated[str, StringConstraints(pattern=SLUG)] = Field(description="The check.")
    device: Device = Field(description="The device kind it ran on.")
    verdict: Verdict = Field(description="The verdict of the measurement (`error` only when nothing was ever measured).")
    message: str = Field("", description="Why it failed or is known-failing; empty when it passed.")
    tier: Tier = Field(description="The check's evidence tier.")
    metrics: dict[MetricName, Metric] = Field(
        default_factory=dict, max_length=MAX_METRICS, description="Every metric the verifier recorded."
    )
    expectation: list[Evaluated] = Field(
        default_factory=list, max_length=MAX_ITEMS, description="The check's expectation, as evaluated."
    )
    notes: list[Annotated[str, StringConstraints(max_length=MAX_NOTES_CHARS)]] = Field(
        default_factory=list, max_length=MAX_NOTES, description="Notes the verifier recorded."
    )
    figures: list[Figure] = Field(
        default_factory=list, max_length=MAX_FIGURES, description="Figures, as SVG files beside this one."
    )
    duration_s: float = Field(ge=0, description="Wall time of setup, call and teardown.")
    cpu_s: float | None = Field(None, ge=0, description="CPU time of the verifier's process (and the children it waited for).")
    peak_memory_mb: float | None = Field(None, ge=0, description="Peak resident memory (CPU) or peak allocated memory (CUDA).")
    environment: Environment = Field(description="What the machine had.")
    inputs: Inputs = Field(description="What the result was computed from.")
    finished: Timestamp = Field(description="When the measurement finished, in UTC.")
    last_error: RunError | None = Field(
        None, description="The latest run errored: shown beside this measurement, which it never replaces."
    )
    unstable: Unstable | None = Field(None, description="Set when a rerun with the same inputs changed the verdict.")
    seeds_used: list[int] | None = Field(
        None,
        max_length=MAX_SEEDS,
        description="The random seeds the verifier read through the `seeds` fixture (None: it did not use it).",
    )
    settling: Settling | None = Field(
        None, description="Set on a settling run: fresh seeds, read alone, and the inconclusive result it decided."
    )
    rejudged: Timestamp | None = Field(
        None,
        description="When its judgement was last recomputed from this measurement (`finished`) against a changed "
        "record, without a rerun (`assay rejudge`, `pytest verify --stale`).",
    )

    @model_validator(mode="after")
    def _sound(self) -> Result:
        """Its judgement follows from its own measurements (``tampered``): the plugin and the merge write nothing
        else, so a file that says otherwise was edited by hand or forged, and is not read. Then the bounds over
        several fields (each field's own are in its declaration)."""
        why = tampered(self)
        if why:
            raise ValueError(f"its stored judgement does not follow from its measurements: {why}")
        why = beyond_bounds(self.notes, (len(m.seeds) for m in self.metrics.values()))
        if why is not None:
            raise ValueError(why)
        return self

    @property
    def key(self) -> Key:
        return (self.claim, self.check, self.device)

    @property
    def status(self) -> str:
        """The check status this file gives (a key of ``assay.status.CHECK``)."""
        return "error" if self.last_error is not None else self.verdict

    @property
    def measured(self) -> bool:
        """Whether the file holds a completed measurement (not only an error)."""
        return self.verdict != "error"


def tampered(result: Result) -> str:
    """Why a result's stored judgement does not follow from its own per-seed measurements, each expectation read as it
    says it was read (its comparison, threshold and seed reading) and the verdict from the outcomes; empty when it
    does. Only a hand edit or a forgery makes them differ."""
    if not result.measured:
        return ""
    for e in result.expectation:
        for name, stored in ((e.metric, e.outcome), *((c.metric, c.outcome) for c in e.against)):
            m = result.metrics.get(name)
            if m is None:
                return f"'{name}' is judged but was not measured"
            got = e.outcome_on(m)
            if got != stored:
                return f"'{name}' is stored as {stored}, but its measurements make it {got}"
        if e.holds != (e.outcome == "holds"):
            return f"'{e.metric}' is stored as holds={e.holds} beside the outcome {e.outcome}"
    implied = _verdicts(result.expectation)
    if result.expectation and result.verdict not in implied:
        return f"its verdict is {result.verdict}, but its expectations make it {' or '.join(implied)}"
    return ""


def _verdicts(expectation: list[Evaluated]) -> tuple[str, ...]:
    """The verdicts evaluated expectations allow (``assay.ledger.judgement.verdict_from``, without the record)."""
    outcomes = {e.outcome for e in expectation}
    if any(e.regime and e.outcome != "holds" for e in expectation):
        return ("out-of-regime",)
    if "fails" in outcomes:
        return ("failed", "known-failing")
    if "inconclusive" in outcomes:
        return ("inconclusive",)
    return ("passed", "failed")  # failed: a declared known failure that held


def to_json(result: Result) -> str:
    return json.dumps(result.model_dump(mode="json"), indent=2, sort_keys=True, allow_nan=False) + "\n"
