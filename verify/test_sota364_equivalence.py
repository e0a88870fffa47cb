"""SOTA-364 (our machinery): the simulated devices of `verify.layers.DeviceNorm` are exactly nn.BatchNorm1d run
separately on each device's sub-batch (train and eval mode, outputs, gradients, running statistics), and its
per-sample kinds are nn.LayerNorm and nn.GroupNorm."""

import pytest
import torch
import torch.nn as nn

from verify.layers import DeviceNorm

# seeds: the record's `seeds:`, one trial per seed
R, K, N_LOC, C = 3, 4, 8, 6  # replicas (a dimension of DeviceNorm, not seeds), simulated devices, samples per device, channels
STEPS = 3  # training steps before the eval-mode comparison: the running statistics accumulate


def _affine(module, g):
    """Random affine parameters (weight 1 + 0.5 noise, bias noise), so that no zero is an artefact of 1 and 0."""
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(1.0 + 0.5 * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return module


def _per_device_reference(dn, devices):
    """One nn.BatchNorm1d per (replica, device) holding the DeviceNorm's affine parameters: [R][K] modules."""
    refs = []
    for r in range(R):
        row = []
        for _ in range(devices):
            bn = nn.BatchNorm1d(C).double()
            with torch.no_grad():
                bn.weight.copy_(dn.weight[r, 0]), bn.bias.copy_(dn.bias[r, 0])
            row.append(bn)
        refs.append(row)
    return refs


def _compare_train(dn, refs, devices, x, gout):
    """Largest |DeviceNorm - per-device BN| over outputs, input gradients and affine gradients (train mode)."""
    n_loc = x.shape[1] // devices
    xd = x.clone().requires_grad_(True)  # xd: R x N x C
    y = dn(xd)  # y: R x N x C
    (y * gout).sum().backward()
    err = {"fwd": 0.0, "grad_x": 0.0, "grad_w": 0.0}
    for r in range(R):
        for k, bn in enumerate(refs[r]):
            sl = slice(k * n_loc, (k + 1) * n_loc)  # device k's sub-batch
            xr = x[r, sl].clone().requires_grad_(True)  # xr: N/K x C
            yr = bn(xr)
            (yr * gout[r, sl]).sum().backward()
            err["fwd"] = max(err["fwd"], (y[r, sl] - yr).abs().max().item())
            err["grad_x"] = max(err["grad_x"], (xd.grad[r, sl] - xr.grad).abs().max().item())
        gw = torch.stack([bn.weight.grad for bn in refs[r]]).sum(0)  # C: the devices' gradients, summed as DDP would
        gb = torch.stack([bn.bias.grad for bn in refs[r]]).sum(0)
        err["grad_w"] = max(
            err["grad_w"], (dn.weight.grad[r, 0] - gw).abs().max().item(), (dn.bias.grad[r, 0] - gb).abs().max().item()
        )
    return err


def _trial(seed, devices, ref_devices):
    """DeviceNorm(devices) against nn.BatchNorm1d on `ref_devices` sub-batches: worst differences, train and eval."""
    g = torch.Generator().manual_seed(seed)
    n = K * N_LOC
    dn = _affine(DeviceNorm(R, C, "bn", devices=devices).double(), g).train()
    refs = _per_device_reference(dn, ref_devices)
    worst = {"fwd": 0.0, "grad_x": 0.0, "grad_w": 0.0, "run_mean": 0.0, "run_var": 0.0, "eval": 0.0}
    for _ in range(STEPS):
        x = 2 + 3 * torch.randn(R, n, C, generator=g, dtype=torch.float64)  # x: R x N x C
        gout = torch.randn(R, n, C, generator=g, dtype=torch.float64)  # upstream gradient: loss = sum(y * gout)
        dn.zero_grad(), [bn.zero_grad() for row in refs for bn in row]
        for key, e in _compare_train(dn, refs, ref_devices, x, gout).items():
            worst[key] = max(worst[key], e)
    x = 2 + 3 * torch.randn(R, n, C, generator=g, dtype=torch.float64)  # x: R x N x C, a fresh batch
    dn.eval()
    with torch.no_grad():
        y = dn(x)  # eval mode: running statistics, the mean of the per-device ones
        for r in range(R):
            run_mean = torch.stack([bn.running_mean for bn in refs[r]]).mean(0)  # C: the devices' EMAs, averaged
            run_var = torch.stack([bn.running_var for bn in refs[r]]).mean(0)  # C
            worst["run_mean"] = max(worst["run_mean"], (dn.running_mean[r, 0] - run_mean).abs().max().item())
            worst["run_var"] = max(worst["run_var"], (dn.running_var[r, 0] - run_var).abs().max().item())
            bn = refs[r][0].eval()
            bn.running_mean.copy_(run_mean), bn.running_var.copy_(run_var)
            worst["eval"] = max(worst["eval"], (y[r] - bn(x[r])).abs().max().item())
    return worst


def _per_sample_kinds(seed):
    """DeviceNorm "ln" and "gn" against nn.LayerNorm and nn.GroupNorm on every sample (train mode)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(R, K * N_LOC, C * 2, generator=g, dtype=torch.float64)  # x: R x N x 2C
    err = 0.0
    for kind, ref in (("ln", nn.LayerNorm(2 * C)), ("gn", nn.GroupNorm(4, 2 * C))):
        dn = _affine(DeviceNorm(R, 2 * C, kind, groups=4).double(), g).train()
        y = dn(x)  # y: R x N x 2C
        for r in range(R):
            ref = ref.double()
            with torch.no_grad():
                ref.weight.copy_(dn.weight[r, 0]), ref.bias.copy_(dn.bias[r, 0])
            err = max(err, (y[r] - ref(x[r])).abs().max().item())
    return err


@pytest.mark.claim("SOTA-364", "device-norm-equivalence")
def test_device_norm_is_batchnorm_per_simulated_device(evidence, device, seeds):
    """DeviceNorm with K devices equals nn.BatchNorm1d on each device's sub-batch (outputs, gradients, running
    statistics, eval mode) and its ln/gn kinds equal nn.LayerNorm/nn.GroupNorm; one BN over the whole batch does not."""
    runs = {"per_device": [], "global": [], "ctl": []}
    for seed in seeds:
        runs["per_device"].append(_trial(seed, K, K))  # the simulated devices against K separate BNs
        runs["global"].append(_trial(seed, 1, 1))  # devices=1 against one BN over the whole batch (SimCLR §2.2)
        runs["ctl"].append(_trial(seed, K, 1))  # control: per-device statistics against the global ones
    for name in ("per_device", "global"):
        for key in ("fwd", "grad_x", "grad_w", "run_mean", "run_var", "eval"):
            evidence.metric(f"{name}_{key}_max_abs_diff", max(t[key] for t in runs[name]))
    for key in ("fwd", "grad_x", "run_var"):  # the control's smallest difference over seeds
        evidence.metric(f"per_device_vs_global_{key}_min_abs_diff", min(t[key] for t in runs["ctl"]))
    evidence.metric("per_sample_kinds_max_abs_diff", max(_per_sample_kinds(s) for s in seeds))
    evidence.note(
        f"float64, R={R} replicas x K={K} devices x {N_LOC} samples x C={C}, {STEPS} train steps then eval; "
        f"{len(seeds)} seeds; control per seed (fwd): " + ", ".join(f"{t['fwd']:.3f}" for t in runs["ctl"])
    )
