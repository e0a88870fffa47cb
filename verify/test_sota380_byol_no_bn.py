"""SOTA-380: BYOL without batch norm is no better than its untrained network, and batch norm's cross-sample gradient
acts as a contrastive term (Fetterman & Albrecht 2020, Summary; toy BYOL on MNIST, verify/siamese.py)."""

import numpy as np
import pytest

from verify.siamese import train_siamese


@pytest.mark.claim("SOTA-380", "no-norm-random")
def test_byol_without_norm_is_no_better_than_random(evidence, seeds, device, experiment):
    """BYOL with no normalisation gains nothing in linear-probe accuracy over its untrained network; with BN it does."""
    runs = experiment(train_siamese, seeds, device)  # trained once for SOTA-380..384
    # Fetterman & Albrecht, Summary (1): "BYOL often performs no better than random when batch normalization is removed"
    for name, unit in (
        ("byol_none_lin_gain", "accuracy"),
        ("byol_bn_lin_gain", "accuracy"),
        ("byol_none_zstd", "std x sqrt(d)"),
        ("byol_bn_zstd", "std x sqrt(d)"),
    ):
        evidence.metric(name, float(np.mean(runs[name])), unit=unit, seeds=runs[name])


@pytest.mark.claim("SOTA-380", "bn-gradient-contrast")
def test_bn_cross_sample_gradient_acts_as_contrast(evidence, seeds, device, experiment):
    """The part of BYOL's gradient that flows through BN's batch statistics points where a uniformity loss does."""
    runs = experiment(train_siamese, seeds, device)
    # Summary (2): "the presence of batch normalization implicitly causes a form of contrastive learning"
    for name, unit in (
        ("byol_bn_stats_grad_cos", "cosine"),
        ("byol_bn_within_grad_cos", "cosine"),
        ("byol_bn_stats_grad_cos_init", "cosine"),
        ("byol_bn_within_grad_cos_init", "cosine"),
        ("byol_bn_stats_grad_frac", "fraction of gradient norm"),
        ("byol_bn_lin_gain", "accuracy"),
        ("byol_bnstop_lin_gain", "accuracy"),
    ):
        evidence.metric(name, float(np.mean(runs[name])), unit=unit, seeds=runs[name])


@pytest.mark.claim("SOTA-380", "bn-gradient-needed")
def test_bn_without_cross_sample_gradient_collapses(evidence, seeds, device, experiment):
    """BYOL whose BN batch statistics are cut from the gradient collapses as BYOL without normalisation does."""
    runs = experiment(train_siamese, seeds, device)
    for name, unit in (
        ("byol_bnstop_zstd", "std x sqrt(d)"),
        ("byol_bn_zstd", "std x sqrt(d)"),
        ("byol_none_zstd", "std x sqrt(d)"),
        ("byol_bnstop_lin_gain", "accuracy"),
        ("byol_bn_lin_gain", "accuracy"),
    ):
        evidence.metric(name, float(np.mean(runs[name])), unit=unit, seeds=runs[name])
