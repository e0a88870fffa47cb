"""SOTA-382: SimSiam learns without negatives, large batches or a momentum encoder, and collapses without its
stop-gradient (Chen & He 2020, Abstract; toy SimSiam on MNIST, verify/siamese.py)."""

import numpy as np
import pytest

from verify.siamese import train_siamese


@pytest.mark.claim("SOTA-382", "simsiam-learns")
def test_simsiam_learns_a_representation(evidence, seeds, device, experiment):
    """SimSiam (batch 128, no negatives, no momentum encoder) gains linear-probe accuracy over its untrained network."""
    runs = experiment(train_siamese, seeds, device)  # trained once for SOTA-380..384
    for name, unit in (
        ("simsiam_bn_lin_gain", "accuracy"),
        ("simsiam_nostop_lin_gain", "accuracy"),
        ("simsiam_bn_lin_untrained", "accuracy"),
        ("simsiam_nostop_lin_untrained", "accuracy"),
    ):
        evidence.metric(name, float(np.mean(runs[name])), unit=unit, seeds=runs[name])


@pytest.mark.claim("SOTA-382", "stopgrad-collapse")
def test_simsiam_without_stop_gradient_collapses(evidence, seeds, device, experiment):
    """Without the stop-gradient SimSiam's l2-normalised output collapses to a constant; with it, it does not."""
    runs = experiment(train_siamese, seeds, device)
    # Chen & He, Abstract: "a stop-gradient operation plays an essential role in preventing collapsing"
    for name, unit in (
        ("simsiam_nostop_zstd", "std x sqrt(d)"),
        ("simsiam_bn_zstd", "std x sqrt(d)"),
        ("simsiam_bn_lin_gain", "accuracy"),
        ("simsiam_nostop_lin_gain", "accuracy"),
    ):
        evidence.metric(name, float(np.mean(runs[name])), unit=unit, seeds=runs[name])
