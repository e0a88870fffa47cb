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


def alone_gap(norm: nn.Module, x: torch.Tensor) -> float:
    """Largest |out_i in the batch - out_i alone| over the samples i: what the others changed in each output."""
    together = norm(x)  # N x C x H x W
    alone = torch.cat([norm(x[i : i + 1]) for i in range(x.shape[0])])  # N x C x H x W, each sample a batch of 1
    return (together - alone).abs().max().item()


def probe_both(seeds: list[int], device: torch.device) -> dict[str, list[float]]:
    """Group norm and batch norm on each seed's batch, probed both ways; per seed, as plain numbers."""
    runs = {"gn_cross_sample": [], "bn_cross_sample": [], "gn_alone_gap": [], "bn_alone_gap": []}
    for seed in seeds:  # the checks' seeds: {count: 5, first: 20} in the record, 20-24 (0-19 were the pilot's)
        torch.manual_seed(seed)
        x = torch.randn(4, 4, 2, 2).to(device)  # x: N x C x H x W, drawn on the CPU: the same numbers on every device
        # Wu & He, Abstract: GN computes the mean and variance within each group of channels, one sample at a time
        gn = nn.GroupNorm(2, 4).to(device)  # 2 groups of 2 channels
        bn = nn.BatchNorm2d(4).to(device).train()  # statistics over the batch: has the effect
        for name, norm in (("gn", gn), ("bn", bn)):
            runs[f"{name}_cross_sample"].append(cross_sample(norm, x))
            runs[f"{name}_alone_gap"].append(alone_gap(norm, x))
    return runs


@pytest.mark.claim("SOTA-001", "cross-sample")
def test_group_norm_keeps_samples_apart(evidence, device, seeds, experiment):
    """Group norm's cross-sample Jacobian is zero; batch norm's, in training mode, is not."""
    runs = experiment(probe_both, seeds, device)  # probed here, or read: the same run as alone's
    for name in ("gn_cross_sample", "bn_cross_sample"):
        evidence.metric(name, float(np.mean(runs[name])), unit="absolute Jacobian entry", seeds=runs[name])


@pytest.mark.claim("SOTA-001", "alone")
def test_a_sample_alone_gets_its_output_in_the_batch(evidence, device, seeds, experiment):
    """Group norm gives a sample alone the output it gets in its batch; batch norm, in training mode, does not."""
    runs = experiment(probe_both, seeds, device)
    for name in ("gn_alone_gap", "bn_alone_gap"):
        evidence.metric(name, float(np.mean(runs[name])), unit="absolute output difference", seeds=runs[name])
