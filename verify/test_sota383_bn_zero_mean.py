"""SOTA-383: BYOL works through an implicit contrastive term formed by BN's zero-mean operation and the predictor
(Tian et al. 2020, Abstract; toy BYOL on MNIST, verify/siamese.py)."""

import numpy as np
import pytest

from verify.siamese import train_siamese


@pytest.mark.claim("SOTA-383", "zero-mean-gradient")
def test_bn_mean_gradient_acts_as_contrast(evidence, seeds, device, experiment):
    """The part of BYOL's gradient that flows through BN's batch mean points where a uniformity loss does."""
    runs = experiment(train_siamese, seeds, device)  # trained once for SOTA-380..384
    # Tian et al., Abstract: "the inter-play between the zero-mean operation of BatchNorm and the extra predictor"
    for name, unit in (
        ("byol_bn_mean_grad_cos", "cosine"),
        ("byol_bn_within_grad_cos", "cosine"),
        ("byol_bn_mean_grad_cos_init", "cosine"),
        ("byol_bn_within_grad_cos_init", "cosine"),
        ("byol_bn_lin_gain", "accuracy"),
        ("byol_bnstop_lin_gain", "accuracy"),
    ):
        evidence.metric(name, float(np.mean(runs[name])), unit=unit, seeds=runs[name])


@pytest.mark.claim("SOTA-383", "works-without-cross-gradient")
def test_byol_works_without_bn_cross_sample_gradient(evidence, seeds, device, experiment):
    """BYOL whose BN batch statistics are cut from the gradient gains nothing over its untrained network; with BN it does."""
    runs = experiment(train_siamese, seeds, device)
    for name, unit in (
        ("byol_bnstop_lin_gain", "accuracy"),
        ("byol_none_lin_gain", "accuracy"),
        ("byol_bn_lin_gain", "accuracy"),
        ("byol_bnstop_zstd", "std x sqrt(d)"),
    ):
        evidence.metric(name, float(np.mean(runs[name])), unit=unit, seeds=runs[name])
