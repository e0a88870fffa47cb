"""SOTA-384: BYOL learns a representation without negative pairs (Grill et al. 2020, Abstract; toy BYOL on MNIST,
verify/siamese.py)."""

import numpy as np
import pytest

from verify.siamese import train_siamese


@pytest.mark.claim("SOTA-384", "learns-without-negatives")
def test_byol_learns_without_negative_pairs(evidence, seeds, device, experiment):
    """BYOL with BN gains linear-probe accuracy over its untrained network, with no negative pair in its loss."""
    runs = experiment(train_siamese, seeds, device)  # trained once for SOTA-380..384
    for name, unit in (
        ("byol_bn_lin_gain", "accuracy"),
        ("byol_none_lin_gain", "accuracy"),
        ("byol_bn_zstd", "std x sqrt(d)"),
        ("byol_none_zstd", "std x sqrt(d)"),
        ("simsiam_nostop_lin_gain", "accuracy"),
    ):
        evidence.metric(name, float(np.mean(runs[name])), unit=unit, seeds=runs[name])
