"""One training run read by several checks: trained once per `pytest verify` run, each check judged on its own.

Checks that read one training name it in the record (``experiment: NAME``); each verifier asks the ``experiment``
fixture for what the run gives, ``runs = experiment(train, seeds, device)``. The first check to ask calls
``train(seeds, device)``; every other check of the run that asks with the same name, function and arguments gets
what it returned, read back from the run's folder, whichever claim it belongs to: the checks of several claims
that rest on one training (two papers' readings of one ablation) train it once. A check's own known failure,
staleness and verdict stay its own: the fixture shares the training, not the judgement.

What ``train`` returns is kept as JSON, data and never a pickle (nothing in the cache can execute when read):
numbers, strings, lists and dicts of them; a tuple comes back as a list, and so it does for the check that trained
too, so every check reads the same thing. One folder serves the whole run: each check's forked child and each
xdist worker. ``--dist loadgroup`` keeps the checks of one experiment on one worker (the plugin marks them
``xdist_group``); without it a second worker that asks while the first trains waits for it and reads, rather than
training again. The CPU time of training counts against the check that trains, whichever runs first: give every
check of an experiment the ``timeout`` training needs.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.evidence.judge import VerifierError
from assay.files import write_atomic


class Experiment:
    """The training run named ``name`` on ``device``, asked for by a check of ``claim``, kept in ``folder`` for the rest
    of the run. Its key leaves the claim out: the same name, function and arguments are the same training."""

    def __init__(self, folder: Path, claim: str, name: str, device: str):
        self.folder, self.claim, self.name, self.device = folder, claim, name, device
        self.trained = 0  # how many times this check's call trained rather than read (0 or 1)

    def __call__(self, train: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``train(*args, **kwargs)``, called once per run for this experiment, function and arguments."""
        key = json.dumps(
            [self.name, self.device, f"{train.__module__}.{train.__qualname__}", args, kwargs],
            sort_keys=True,
            default=str,  # a torch.device or a path is its name
        )
        path = self.folder / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".json")
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # a worker that asks while another trains waits, then reads
            if path.is_file():
                return json.loads(path.read_text(encoding="utf-8"))
            value = train(*args, **kwargs)
            try:
                text = json.dumps(value)
            except (TypeError, ValueError) as e:
                raise VerifierError(
                    f"experiment {self.name!r}: {train.__qualname__} returned what JSON cannot keep ({e}); return "
                    "numbers, strings, and lists or dicts of them (tensor.tolist(), float(x))"
                ) from None
            write_atomic(path, text)
            self.trained += 1
            return json.loads(text)
