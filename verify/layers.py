"""Replicated layers: R independent copies of a layer applied to R x N x C activations in one call, and the
normalisations whose batch statistics are the subject of SOTA-364 (per-device, global, per-sample).

R = replicas (one per seed, trained in lock-step: tiny models are Python-overhead bound on a CPU, so R seeds cost
about as much as one), N = batch, C = channels, K = simulated devices. Every replica has its own parameters and the
training loss is a sum over replicas, so the replicas' gradients and Adam updates are exactly independent.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

NORMS = ("bn", "ln", "gn", "none")


class RLinear(nn.Module):
    """R independent linear layers applied to R x N x in (nn.Linear's init, per replica)."""

    def __init__(self, n_replicas, d_in, d_out):
        super().__init__()
        bound = 1.0 / math.sqrt(d_in)
        self.weight = nn.Parameter(torch.empty(n_replicas, d_in, d_out).uniform_(-bound, bound))  # R x in x out
        self.bias = nn.Parameter(torch.empty(n_replicas, 1, d_out).uniform_(-bound, bound))  # R x 1 x out

    def forward(self, x):  # x: R x N x in
        return torch.baddbmm(self.bias, x, self.weight)  # R x N x out


class DeviceNorm(nn.Module):
    """Pluggable normalisation over R x N x C activations.

    kind="bn": batch norm. In train mode the N axis is split into `self.devices` contiguous sub-batches (simulated
    GPUs), each normalised with its own mean/variance (per-device BN, the default of DistributedDataParallel,
    MoCo §3.3); devices=1 gives global BN (SimCLR §2.2). Eval mode uses the running statistics (the mean of the
    per-device statistics), which removes every cross-sample dependence. kind="ln": layer norm over C; kind="gn":
    group norm over C/groups channels of one sample; kind="none": identity. ln/gn/none never mix samples.
    """

    def __init__(self, n_replicas, channels, kind="bn", devices=1, groups=8, eps=1e-5, momentum=0.1):
        super().__init__()
        assert kind in NORMS, kind
        self.kind, self.devices, self.groups, self.eps, self.momentum = kind, devices, groups, eps, momentum
        self.weight = nn.Parameter(torch.ones(n_replicas, 1, channels))  # R x 1 x C
        self.bias = nn.Parameter(torch.zeros(n_replicas, 1, channels))
        self.register_buffer("running_mean", torch.zeros(n_replicas, 1, channels))  # R x 1 x C
        self.register_buffer("running_var", torch.ones(n_replicas, 1, channels))

    def forward(self, h):  # h: R x N x C
        if self.kind == "none":
            return h
        r, n, c = h.shape
        if self.kind == "ln":
            y = F.layer_norm(h, (c,), eps=self.eps)  # per sample over C
        elif self.kind == "gn":
            g = h.reshape(r, n, self.groups, c // self.groups)  # g: R x N x G x C/G
            mu, var = g.mean(-1, keepdim=True), g.var(-1, unbiased=False, keepdim=True)
            y = ((g - mu) / torch.sqrt(var + self.eps)).reshape(r, n, c)
        elif not self.training:
            y = (h - self.running_mean) / torch.sqrt(self.running_var + self.eps)  # no batch coupling
        else:
            k = self.devices
            assert n % k == 0, f"batch {n} not divisible into {k} devices"
            d = h.reshape(r, k, n // k, c)  # d: R x K x N/K x C, one slice per simulated device
            mu = d.mean(2, keepdim=True)  # MoCo §3.3: each device normalises with its own sub-batch statistics
            var = d.var(2, unbiased=False, keepdim=True)  # var: R x K x 1 x C, biased (as nn.BatchNorm normalises)
            y = ((d - mu) / torch.sqrt(var + self.eps)).reshape(r, n, c)
            with torch.no_grad():  # running stats: mean over devices of the per-device stats
                m = n // k
                unbiased = var * m / max(m - 1, 1)
                self.running_mean.lerp_(mu.mean(1), self.momentum)
                self.running_var.lerp_(unbiased.mean(1), self.momentum)
        return y * self.weight + self.bias


class Encoder(nn.Module):
    """MLP d_in -> hidden -> hidden -> out_dim with a DeviceNorm after each hidden linear layer.
    forward(x: R x N x d_in) -> R x N x out_dim (not L2-normalised)."""

    def __init__(self, n_replicas, norm="bn", devices=1, hidden=128, out_dim=32, d_in=64):
        super().__init__()
        self.n_replicas = n_replicas
        self.fc1, self.n1 = RLinear(n_replicas, d_in, hidden), DeviceNorm(n_replicas, hidden, norm, devices)
        self.fc2, self.n2 = RLinear(n_replicas, hidden, hidden), DeviceNorm(n_replicas, hidden, norm, devices)
        self.fc3 = RLinear(n_replicas, hidden, out_dim)

    def set_devices(self, devices):
        for mod in (self.n1, self.n2):
            mod.devices = devices
        return self

    def forward(self, x):  # x: R x N x d_in
        h = F.relu(self.n1(self.fc1(x)))  # h: R x N x H
        h = F.relu(self.n2(self.fc2(h)))  # h: R x N x H
        return self.fc3(h)  # R x N x D
