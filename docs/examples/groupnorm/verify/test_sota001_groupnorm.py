"""SOTA-001: group norm keeps each sample's output to itself; batch norm in training mode (the control) does not
(Wu & He, Group Normalization, arXiv 1803.08494v3, Abstract)."""

import numpy as np
import pytest
import torch
import torch.nn as nn


def cross_sample(norm: nn.Module, x: torch.Tensor) -> float:
    """Largest |d out_i / d x_j| over samples i != j, from the exact autograd Jacobian."""
    jac = torch.autograd.functional.jacobian(norm, x)  # out.shape + x.shape: N x C x H x W x N x C x H x W
    n = x.shape[0]
    jac = jac.reshape(n, -1, n, x[0].numel())  # N x (C H W) x N x (C H W)
    other = ~torch.eye(n, dtype=torch.bool, device=x.device)  # N x N, True where i != j
    return jac.abs().amax(dim=(1, 3))[other].max().item()


@pytest.mark.claim("SOTA-001", "cross-sample")
def test_group_norm_keeps_samples_apart(evidence, device, seeds):
    """Group norm's cross-sample Jacobian is zero; batch norm's, in training mode, is not."""
    gn, bn = [], []
    for seed in seeds:  # the check's seeds: {count: 5, first: 20} in the record, 20-24 (0-19 were the pilot's)
        torch.manual_seed(seed)
        x = torch.randn(4, 4, 2, 2).to(device)  # x: N x C x H x W, drawn on the CPU: the same numbers on every device
        # Wu & He, Abstract: GN computes the mean and variance within each group of channels, one sample at a time
        gn.append(cross_sample(nn.GroupNorm(2, 4).to(device), x))  # 2 groups of 2 channels
        bn.append(cross_sample(nn.BatchNorm2d(4).to(device).train(), x))  # statistics over the batch: has the effect
    evidence.metric("gn_cross_sample", float(np.mean(gn)), unit="absolute Jacobian entry", seeds=gn)
    evidence.metric("bn_cross_sample", float(np.mean(bn)), unit="absolute Jacobian entry", seeds=bn)
