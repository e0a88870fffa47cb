"""What a verifier records: metrics with their units and per-seed values, figures as SVG, and notes.

The ``evidence`` fixture hands a verifier an ``Evidence``; after the test body returns, the plugin judges the
check's expectation on what it holds (``assay.evidence.judge``).
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass, field
from typing import Any

from assay.evidence.judge import VerifierError
from assay.experiment import Check
from assay.ledger.result import MAX_FIGURE_BYTES, MAX_FIGURES, MAX_METRICS, MAX_NOTES, MAX_SEEDS, MAX_TEXT, NAME, beyond_bounds
from assay.svg import NotSVG, sanitise


@dataclass
class Evidence:
    """What a verifier records: metrics (with units and per-seed values), figures (SVG) and notes."""

    metrics: dict[str, float] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    seeds: dict[str, list[float]] = field(default_factory=dict)
    figures: dict[str, str] = field(default_factory=dict)
    captions: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seed: int = 0
    seeds_used: list[int] = field(default_factory=list)  # what the ``seeds`` fixture handed out

    def metric(self, name: str, value: float | int | bool, unit: str | None = None, seeds: list[float] | None = None) -> None:
        """Record one finite number under ``name`` (snake_case), with its unit and the per-seed values it sums up."""
        _check_name("metric", name)
        number = float(value)
        per_seed = [float(s) for s in seeds or []]
        if not all(math.isfinite(x) for x in [number, *per_seed]):
            raise VerifierError(f"metric {name!r} is not finite ({number}, seeds {per_seed})")
        self.metrics[name] = number
        if unit:
            self.units[name] = unit
        if per_seed:
            self.seeds[name] = per_seed

    def figure(self, name: str, fig: Any, caption: str | None = None) -> None:
        """Record a matplotlib figure under ``name`` (snake_case); it is stored as SVG beside the ledger file."""
        import matplotlib

        _check_name("figure", name)
        matplotlib.rcParams["svg.hashsalt"] = "assay"  # stable element ids: the same figure gives the same file
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")
        self.figures[name] = buf.getvalue()
        if caption:
            self.captions[name] = caption

    @classmethod
    def seeded(cls) -> Evidence:
        """A new record, with torch, numpy and random seeded with its ``seed`` first."""
        ev = cls()
        _seed_all(ev.seed)
        return ev

    def restart(self) -> None:
        """Forget what was recorded, keeping the seeds handed out, and seed torch, numpy and random again: the
        verifier runs afresh (once more, alone, after a limit stopped it on a loaded machine)."""
        handed = self.seeds_used
        self.__init__()  # type: ignore[misc]
        self.seeds_used = handed
        _seed_all(self.seed)

    def validate(self) -> None:
        """Everything a verifier can reach of this record, checked before it is judged or written: names are
        snake_case, values have their types, nothing is larger than the ledger keeps, and each figure is what
        ``assay.svg.sanitise`` keeps of it. Raises ``VerifierError`` (an error of the check alone; its last
        measurement stays)."""
        for what, names in (("metric", self.metrics), ("unit of", self.units), ("seeds of", self.seeds)):
            for name in names:
                _check_name(what.split()[0], name)
        for name, svg in self.figures.items():
            _check_name("figure", name)
            if not isinstance(svg, str):
                raise VerifierError(
                    f"figure {name!r} is a {type(svg).__name__}, not SVG text; record figures with evidence.figure()"
                )
            if len(svg.encode("utf-8", "replace")) > MAX_FIGURE_BYTES:
                raise VerifierError(f"figure {name!r} is over {MAX_FIGURE_BYTES // 2**20} MiB; draw fewer points")
            try:  # what could run or fetch never reaches the ledger; matplotlib's output is kept as it wrote it
                self.figures[name] = sanitise(svg.encode("utf-8", "replace")).decode("utf-8")
            except NotSVG as e:
                raise VerifierError(f"figure {name!r} cannot be shown: {e}; record figures with evidence.figure()") from None
        for name, values in self.seeds.items():
            if not isinstance(values, list) or len(values) > MAX_SEEDS:
                raise VerifierError(f"metric {name!r} has more than {MAX_SEEDS} per-seed values, or they are not a list")
        if not all(isinstance(n, str) for n in [*self.notes, *self.captions.values(), *self.units.values()]):
            raise VerifierError("notes, captions and units must be text")
        self._within_bounds()

    def _within_bounds(self) -> None:
        """The ledger's bounds (``assay.ledger.result``) on what was recorded: counts, and the length of each text."""
        for what, count, most in (
            ("metrics", len(self.metrics), MAX_METRICS),
            ("notes", len(self.notes), MAX_NOTES),
            ("figures", len(self.figures), MAX_FIGURES),
        ):
            if count > most:
                raise VerifierError(f"{count} {what} were recorded, more than the {most} a result keeps")
        for what, texts in (("the unit of metric", self.units), ("the caption of figure", self.captions)):
            for name, text in texts.items():
                if len(text) > MAX_TEXT:
                    raise VerifierError(f"{what} {name!r} has {len(text)} characters, more than the {MAX_TEXT} a result keeps")
        why = beyond_bounds(self.notes, (len(v) for v in self.seeds.values()))
        if why is not None:
            raise VerifierError(why)

    def check_units(self, check: Check) -> None:
        """A metric recorded with a unit other than the one its check declares is the verifier's error."""
        for name, unit in self.units.items():
            spec = check.metric(name)
            if spec is not None and unit != spec.unit:
                raise VerifierError(
                    f"metric {name!r} is recorded in {unit!r}, but check '{check.id}' declares it in "
                    f"{spec.unit!r}; record it in the declared unit or correct the declaration"
                )

    def note(self, text: str) -> None:
        self.notes.append(str(text))


def _seed_all(seed: int) -> None:
    import random

    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def _check_name(what: str, name: object) -> None:
    if not isinstance(name, str) or not re.match(NAME, name):
        raise VerifierError(f"{what} name {name!r} must be snake_case ({NAME})")
