"""SOTA-381: BYOL with group norm and weight standardisation in place of batch norm performs comparably to BYOL with
batch norm (Richemond et al. 2020, Abstract; toy BYOL on MNIST, verify/siamese.py)."""

import numpy as np
import pytest

from verify.siamese import train_siamese


@pytest.mark.claim("SOTA-381", "gnws-comparable")
def test_gnws_byol_is_comparable_to_bn_byol(evidence, seeds, device, experiment):
    """GN+WS BYOL's linear-probe accuracy is within the paper's 0.4 points of BN BYOL's."""
    runs = experiment(train_siamese, seeds, device)  # trained once for SOTA-380..384
    # Richemond et al., Abstract: "73.9% vs. 74.3% top-1 accuracy under the linear evaluation protocol"
    for name, unit in (
        ("byol_bn_minus_gnws_lin", "accuracy"),
        ("byol_bn_minus_none_lin", "accuracy"),
        ("byol_bn_lin_gain", "accuracy"),
        ("byol_none_lin_gain", "accuracy"),
    ):
        evidence.metric(name, float(np.mean(runs[name])), unit=unit, seeds=runs[name])


@pytest.mark.claim("SOTA-381", "no-batch-stats-learn")
def test_byol_learns_without_batch_statistics(evidence, seeds, device, experiment):
    """BYOL with GN+WS or LayerNorm, which use no batch statistics, gains over its untrained network."""
    runs = experiment(train_siamese, seeds, device)
    # Abstract: "the use of batch statistics is a crucial ingredient" is what the paper says it disproves
    for name, unit in (
        ("byol_gnws_lin_gain", "accuracy"),
        ("byol_ln_lin_gain", "accuracy"),
        ("byol_none_lin_gain", "accuracy"),
        ("byol_bn_lin_gain", "accuracy"),
        ("byol_gnws_zstd", "std x sqrt(d)"),
        ("byol_ln_zstd", "std x sqrt(d)"),
    ):
        evidence.metric(name, float(np.mean(runs[name])), unit=unit, seeds=runs[name])
