"""SOTA-364: analytic and distributed checks of the batch-norm leak in contrastive learning and of its fixes
(MoCo arXiv 1911.05722 §3.3 "Shuffling BN"; SimCLR arXiv 2002.05709 §2.2 "Global BN")."""

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from verify.data import digits, flat
from verify.distributed import (
    CollectiveCounter,
    GlobalBatchNorm,
    batch_shuffle_ddp,
    batch_unshuffle_ddp,
    pick_backend,
    rank_device,
    run_distributed,
)

# sklearn and matplotlib are imported inside the tests that use them: the spawned torch.distributed ranks import this
# module to find their worker functions, and those imports would add ~1.5 s to each rank's start-up.

# The checks that loop over seeds read them from the record (the `seeds` fixture), one trial per seed.


def cross_sample_jacobian_max(fn, x):
    """max |d out_i / d x_j| over i != j (sample index = dim 0), from the exact autograd Jacobian."""
    jac = torch.autograd.functional.jacobian(fn, x)  # out.shape + x.shape
    n = x.shape[0]
    jac = jac.reshape(n, -1, n, x[0].numel())  # N x (out per sample) x N x (in per sample)
    off = ~torch.eye(n, dtype=torch.bool, device=x.device)  # N x N, True where i != j
    return jac.abs().amax(dim=(1, 3))[off].max().item()


# ----------------------------------------------------------------------------------------------------------------------
# 1. bn-cross-sample


def random_affine(m, device):
    """m with non-trivial affine parameters (1 + 0.5 N(0, 1)), so zeros are not an artefact of weight=1, bias=0."""
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(1.0 + 0.5 * torch.randn(p.shape))
    return m.to(device)


def bn1d_jacobian_analytic_err(bn1, x1):
    """Largest gap between autograd's BN1d (train) Jacobian and its closed form; cross-channel entries must be 0."""
    # BN1d Jacobian in closed form: d y_ic / d x_jc = w_c / s_c (delta_ij - 1/N - xhat_ic xhat_jc / N)
    n = x1.shape[0]
    mean, var = x1.mean(0), x1.var(0, unbiased=False)  # C, C
    s = torch.sqrt(var + bn1.eps)  # C
    xhat = (x1 - mean) / s  # N x C
    eye = torch.eye(n, device=x1.device)  # N x N
    j_c = (eye[:, :, None] - 1.0 / n - xhat[:, None, :] * xhat[None, :, :] / n) * (bn1.weight / s)  # N x N x C
    jac = torch.autograd.functional.jacobian(bn1, x1)  # N x C x N x C
    jac_diag_c = torch.diagonal(jac, dim1=1, dim2=3)  # N x N x C (same channel)
    off_c = jac - torch.diag_embed(jac_diag_c, dim1=1, dim2=3)  # N x C x N x C, cross-channel entries: must be 0
    return max((jac_diag_c - j_c).abs().max().item(), off_c.abs().max().item())


@pytest.mark.claim("SOTA-364", "bn-cross-sample")
def test_bn_couples_samples_and_per_sample_norms_do_not(evidence, device, seeds):
    """Batch norm in train mode makes out_i depend on x_j (i != j); LN, RMSNorm, GN, IN and BN-eval do not."""
    worst = {}  # name -> list over seeds of max cross-sample |Jacobian|
    analytic_err = []
    for seed in seeds:
        torch.manual_seed(seed)  # all random numbers drawn on the CPU, then moved: the same values on every device
        x1 = torch.randn(6, 5).to(device)  # x1: N x C
        x2 = torch.randn(4, 4, 3, 3).to(device)  # x2: N x C x H x W
        bn1 = random_affine(nn.BatchNorm1d(5), device).train()
        bn2 = random_affine(nn.BatchNorm2d(4), device).train()
        bn1_eval, bn2_eval = random_affine(nn.BatchNorm1d(5), device), random_affine(nn.BatchNorm2d(4), device)
        with torch.no_grad():  # eval mode with non-trivial running statistics
            for m in (bn1_eval, bn2_eval):
                m.running_mean.copy_(torch.randn(m.running_mean.shape))  # C
                m.running_var.copy_(0.5 + torch.rand(m.running_var.shape))  # C
        bn1_eval.eval(), bn2_eval.eval()
        modules = {
            "bn1d_train": (bn1, x1),
            "bn2d_train": (bn2, x2),
            "layernorm": (random_affine(nn.LayerNorm(5), device), x1),  # normalises over C of each sample
            "layernorm2d": (random_affine(nn.LayerNorm([4, 3, 3]), device), x2),
            "rmsnorm": (random_affine(nn.RMSNorm(5), device), x1),
            "groupnorm": (random_affine(nn.GroupNorm(2, 4), device), x2),  # 2 groups of 2 channels, per sample
            "instancenorm": (random_affine(nn.InstanceNorm2d(4, affine=True), device), x2),  # per sample and channel
            "bn1d_eval": (bn1_eval, x1),
            "bn2d_eval": (bn2_eval, x2),
        }
        for name, (m, x) in modules.items():
            worst.setdefault(name, []).append(cross_sample_jacobian_max(m, x))
        analytic_err.append(bn1d_jacobian_analytic_err(bn1, x1))

    for name, v in worst.items():  # the effect (BN train) and the controls, one value per seed: every seed is read
        evidence.metric(f"{name}_cross_jacobian", float(np.mean(v)), seeds=v)
    evidence.metric("bn1d_jacobian_analytic_max_err", float(np.mean(analytic_err)), seeds=analytic_err)
    evidence.note(
        "max over i!=j of |d out_i/d x_j|, per seed: " + "; ".join(f"{k}: {np.round(v, 4).tolist()}" for k, v in worst.items())
    )


# ----------------------------------------------------------------------------------------------------------------------
# 4. shuffle-bn


def shuffle_indices(scheme, k, n, g):
    """idx_shuffle (N = K*n) for one scheme; device d encodes keys idx_shuffle.view(K, n)[d] (MoCo builder.py)."""
    n_all = k * n
    if scheme == "none":
        return torch.arange(n_all)
    if scheme == "random":  # MoCo §3.3 / builder.py _batch_shuffle_ddp: torch.randperm over the gathered batch
        return torch.randperm(n_all, generator=g)
    if scheme == "block_derangement":  # every key moves to the next device, together with its sub-batch
        return torch.roll(torch.arange(n_all), n)
    if scheme == "mixing_derangement":  # no key stays on its device; each device's keys split evenly over the others
        assert n % (k - 1) == 0
        slots = [[] for _ in range(k)]
        for d in range(k):
            own = d * n + torch.randperm(n, generator=g)  # n: device d's samples in random order
            for j, i in enumerate(own.tolist()):
                slots[(d + 1 + j % (k - 1)) % k].append(i)
        return torch.cat([torch.tensor(s)[torch.randperm(n, generator=g)] for s in slots])
    raise ValueError(scheme)


def shuffle_bn_trial(enc, bn, xq, xk, idx_shuffle, k):
    """Per-device BN on queries (original order) and on keys (shuffled, then unshuffled) -- K simulated devices.

    Returns for every sample i: the query-side and key-side BN statistics used to normalise it (the "signature")
    and the device that normalised its key.
    """
    n_all = xq.shape[0]
    n = n_all // k
    idx_unshuffle = torch.argsort(idx_shuffle)  # N: inverse permutation (builder.py)
    hq = enc(xq).view(k, n, -1)  # K x n x D: query sub-batches in original order (query encoder untouched)
    hk = enc(xk[idx_shuffle]).view(k, n, -1)  # K x n x D: device d holds keys idx_shuffle.view(K, n)[d]
    sig_q = torch.cat([hq.mean(1), hq.var(1, unbiased=False).add(bn.eps).log()], 1)  # K x 2D per-device BN stats
    sig_k = torch.cat([hk.mean(1), hk.var(1, unbiased=False).add(bn.eps).log()], 1)  # K x 2D
    dev_q = torch.arange(n_all) // n  # N (CPU): query i's device
    dev_k = (torch.arange(n_all) // n)[idx_unshuffle.cpu()]  # N (CPU): the device that encoded key i
    return sig_q, sig_k, dev_q, dev_k


def two_views(x, g, device):
    """Query and key views of x (N x 64): pixel noise + random pixel dropout (a stand-in for MoCo's augmentations)."""
    noise = torch.randn(2, *x.shape, generator=g).to(device)  # 2 x N x 64 (CPU draws: same on any device)
    keep = (torch.rand(2, *x.shape, generator=g) > 0.1).to(device)  # 2 x N x 64
    xq = (x + 0.1 * noise[0]) * keep[0]  # N x 64: query view
    xk = (x + 0.1 * noise[1]) * keep[1]  # N x 64: key view
    return xq, xk


def signature_scores(sig_q, sig_k, dev_q, dev_k):
    """Same-device fraction, sub-batch co-membership overlap and signature-matching accuracy of one shuffled batch."""
    n_all = len(dev_q)
    # the statement as filed: does the positive key land on another device?
    same_device = (dev_q == dev_k).float().mean().item()
    # co-membership: fraction of key i's sub-batch mates that were also query i's sub-batch mates
    same_q = dev_q[:, None] == dev_q[None, :]  # N x N
    same_k = dev_k[:, None] == dev_k[None, :]  # N x N
    mates = same_k & ~torch.eye(n_all, dtype=torch.bool)  # N x N
    overlap = ((mates & same_q).sum(1) / mates.sum(1)).float().mean().item()
    # signature matching: nearest key sub-batch statistics to query i's sub-batch statistics
    d = torch.cdist(sig_q, sig_k)  # K x K: query device x key device
    pred = d.argmin(1).cpu()[dev_q]  # N: key device predicted for query i's positive
    sig_acc = (pred == dev_k).float().mean().item()
    return {"same_device": same_device, "overlap": overlap, "sig_acc": sig_acc}


@pytest.mark.claim("SOTA-364", "shuffle-bn")
def test_shuffle_bn_destroys_subbatch_signature(evidence, device, seeds):
    """Shuffle BN breaks the query/positive-key sub-batch signature because key sub-batches get a random membership,
    not because the positive key lands on another device (a block move to other devices keeps the signature)."""
    k, n, n_batches = 4, 12, 40  # K devices x n per device; N = 48
    x_all = flat(digits(device)[0])  # x_all: 1797 x 64
    schemes = ("none", "random", "block_derangement", "mixing_derangement")
    per_seed = {s: {"same_device": [], "overlap": [], "sig_acc": []} for s in schemes}
    for seed in seeds:
        torch.manual_seed(seed)
        g = torch.Generator().manual_seed(seed)
        bn = nn.BatchNorm1d(128).to(device).train()
        enc = nn.Linear(64, 128).to(device)  # pre-BN features; BN stats of these are the signature
        acc = {s: {"same_device": [], "overlap": [], "sig_acc": []} for s in schemes}
        with torch.no_grad():
            for _ in range(n_batches):
                idx = torch.randperm(len(x_all), generator=g)[: k * n].to(device)  # N images
                xq, xk = two_views(x_all[idx], g, device)  # N x 64 each
                for s in schemes:
                    idx_shuffle = shuffle_indices(s, k, n, g).to(device)  # N
                    sig_q, sig_k, dev_q, dev_k = shuffle_bn_trial(enc, bn, xq, xk, idx_shuffle, k)  # K x 2D, K x 2D, N, N
                    for m, v in signature_scores(sig_q, sig_k, dev_q, dev_k).items():
                        acc[s][m].append(v)
        for s in schemes:
            for m in per_seed[s]:
                per_seed[s][m].append(float(np.mean(acc[s][m])))

    for s in schemes:  # each seed's mean over its batches; the expectations read every seed
        for m, name in (
            ("same_device", "same_device_fraction"),
            ("overlap", "comembership_overlap"),
            ("sig_acc", "signature_acc"),
        ):
            evidence.metric(f"{s}_{name}", float(np.mean(per_seed[s][m])), seeds=per_seed[s][m])
        evidence.metric(f"{s}_signature_acc_min", float(np.min(per_seed[s]["sig_acc"])))
        evidence.metric(f"{s}_signature_acc_max", float(np.max(per_seed[s]["sig_acc"])))
    evidence.metric("chance_signature_acc", 1.0 / k)
    evidence.metric("num_devices", k)
    evidence.note(
        f"K={k} devices x n={n}, {n_batches} batches x {len(seeds)} seeds; per-seed means: "
        + "; ".join(f"{s}: " + ", ".join(f"{m}={np.round(v, 3).tolist()}" for m, v in per_seed[s].items()) for s in schemes)
    )


@pytest.mark.claim("SOTA-364", "shuffle-bn-different-devices")
def test_shuffle_bn_positive_key_lands_on_other_device(evidence, device):
    """As filed: after MoCo's random batch shuffle, a query and its positive key are on different devices."""
    g = torch.Generator().manual_seed(0)
    n_perm = 2000
    for k in (2, 4, 8):
        n = 16  # per-device batch
        frac = []
        for _ in range(n_perm):
            idx_shuffle = torch.randperm(k * n, generator=g)  # MoCo builder.py: randperm over the gathered batch
            dev_k = (torch.arange(k * n) // n)[torch.argsort(idx_shuffle)]  # N: device that encoded key i
            dev_q = torch.arange(k * n) // n  # N: query i's device (order untouched)
            frac.append((dev_k == dev_q).float().mean().item())
        evidence.metric(f"same_device_fraction_k{k}", float(np.mean(frac)))
        evidence.metric(f"same_device_fraction_k{k}_sd", float(np.std(frac)))
        evidence.metric(f"inverse_k{k}", 1.0 / k)


# ----------------------------------------------------------------------------------------------------------------------
# 6. layernorm-removes


def mlp_encoder(norm, seed, device):
    """64 -> 128 -> 128 -> 32 MLP with a normalisation layer after each hidden Linear; same Linear init for all norms."""
    torch.manual_seed(seed)
    lin = [nn.Linear(64, 128), nn.Linear(128, 128), nn.Linear(128, 32)]
    layers = []
    for i in range(2):
        layers += [lin[i], norm(128), nn.ReLU()]
    return nn.Sequential(*layers, lin[2]).to(device).train()


@torch.no_grad()
def outputs_in_two_batches(enc, x_all, pool_a, pool_b, n, n_trials, g, device):
    """2 * n_trials probe samples, each encoded once in a batch of n with context from pool A and once from pool B.

    Returns the outputs (A, B alternating: 4*n_trials x 32), their labels (0 = A, 1 = B) and the largest output change
    per sample."""
    feats, labels, out_diff = [], [], []
    for t in range(2 * n_trials):
        x = x_all[torch.randint(len(x_all), (1,), generator=g).item()][None]  # 1 x 64: the probe sample
        ctx_a = pool_a[torch.randperm(len(pool_a), generator=g)[: n - 1].to(device)]  # 15 x 64
        ctx_b = pool_b[torch.randperm(len(pool_b), generator=g)[: n - 1].to(device)]  # 15 x 64
        out_a = enc(torch.cat([x, ctx_a]))[0]  # 32: x's output when normalised with batch A
        out_b = enc(torch.cat([x, ctx_b]))[0]  # 32: ... with batch B
        feats += [out_a, out_b]
        labels += [0, 1]
        out_diff.append((out_a - out_b).abs().max().item())
    return torch.stack(feats).cpu().numpy(), np.array(labels), out_diff


@pytest.mark.claim("SOTA-364", "layernorm-removes")
def test_layernorm_encoder_has_no_batch_signature(evidence, device, seeds):
    """In a whole encoder, BN lets a linear probe tell from one sample's output which batch it was normalised in;
    the same encoder with LayerNorm gives bit-identical outputs in either batch (probe at chance, zero cross-Jacobian)."""
    from sklearn.linear_model import LogisticRegression

    x, y_all = digits(device)
    x_all = flat(x)  # x_all: 1797 x 64
    pool_a = x_all[y_all < 5]  # context batches drawn from digits 0-4
    pool_b = x_all[y_all >= 5]  # context batches drawn from digits 5-9
    n, n_trials = 16, 300  # batch = 1 probe sample + 15 context samples
    res = {"bn": {"probe": [], "jac": [], "out_diff": []}, "ln": {"probe": [], "jac": [], "out_diff": []}}
    null_probe = []  # counterpart of the BN probe: the same probe with the A/B labels permuted (no signal to read)
    for seed in seeds:
        g = torch.Generator().manual_seed(seed)
        for name, norm in (("bn", nn.BatchNorm1d), ("ln", nn.LayerNorm)):
            enc = mlp_encoder(norm, seed, device)
            # f: 4*n_trials x 32, pairs (A, B) of the same sample; lab: 4*n_trials
            f, lab, out_diff = outputs_in_two_batches(enc, x_all, pool_a, pool_b, n, n_trials, g, device)
            res[name]["out_diff"] += out_diff
            half = 2 * n_trials  # first half of the pairs to train, second half to test
            probe = LogisticRegression(max_iter=2000).fit(f[:half], lab[:half])
            res[name]["probe"].append(float(probe.score(f[half:], lab[half:])))
            if name == "bn":  # own generator, so the other draws of this seed are unchanged
                perm = torch.randperm(len(lab), generator=torch.Generator().manual_seed(seed)).numpy()
                shuffled = LogisticRegression(max_iter=2000).fit(f[:half], lab[perm][:half])
                null_probe.append(float(shuffled.score(f[half:], lab[perm][half:])))
            xb = x_all[torch.randperm(len(x_all), generator=g)[:8].to(device)]  # 8 x 64
            res[name]["jac"].append(cross_sample_jacobian_max(enc, xb))
    for name in ("bn", "ln"):  # one value per seed; the expectations read every seed
        evidence.metric(f"{name}_encoder_batch_probe_acc", float(np.mean(res[name]["probe"])), seeds=res[name]["probe"])
        evidence.metric(f"{name}_encoder_cross_jacobian", float(np.mean(res[name]["jac"])), seeds=res[name]["jac"])
    evidence.metric("bn_encoder_shuffled_label_probe_acc", float(np.mean(null_probe)), seeds=null_probe)
    evidence.metric("bn_encoder_output_change_median", float(np.median(res["bn"]["out_diff"])))
    ln_change = np.reshape(res["ln"]["out_diff"], (len(seeds), -1)).max(1)  # seeds: largest change over its pairs
    evidence.metric("ln_encoder_output_change_max", float(ln_change.mean()), seeds=ln_change.tolist())
    bn_change = np.reshape(res["bn"]["out_diff"], (len(seeds), -1)).max(1)  # counterpart: the same for the BN encoder
    evidence.metric("bn_encoder_output_change_max", float(bn_change.mean()), seeds=bn_change.tolist())
    evidence.note(
        f"{len(seeds)} seeds, {n_trials} train + {n_trials} test pairs; probe acc per seed: "
        f"BN {np.round(res['bn']['probe'], 3).tolist()}, LN {np.round(res['ln']['probe'], 3).tolist()}; "
        f"cross-Jacobian per seed: BN {np.round(res['bn']['jac'], 4).tolist()}, LN {res['ln']['jac']}"
    )


# ----------------------------------------------------------------------------------------------------------------------
# 5. global-bn-equivalence (torch.distributed, gloo)


def _global_bn_rank(rank, world, device, seeds):
    """One rank: Global BN vs single-process BN over the whole batch, and per-device BN as the control."""
    import torch.distributed as dist

    backend = dist.get_backend()
    dev = rank_device(device, rank, backend)
    out = {
        k: []
        for k in (
            "fwd",
            "grad_x",
            "grad_w_rel",
            "run_mean",
            "run_var",
            "ctl_fwd",
            "ctl_grad_x",
            "ctl_grad_w_rel",
            "ctl_run_var",
            "split_global",
            "split_ctl",
            "jacobian",
            "jac_cross",
            "ctl_jac_cross",
        )
    }
    for seed in seeds:
        for shape in ((16, 6), (8, 3, 4, 4)):  # BatchNorm1d input N x C, BatchNorm2d input N x C x H x W
            _compare_steps(out, shape, seed, rank, world, dev)
        _cross_jacobians(out, seed, rank, world, dev)
    out["backend"] = backend
    return out


def _compare_steps(out, shape, seed, rank, world, dev):
    """Three training steps of Global BN on this rank's slice, one BN on the whole batch, and per-device BN (the
    control) on the slice, from the same affine parameters; then the output change under another split."""
    import torch.distributed as dist

    g = torch.Generator().manual_seed(seed)
    c = shape[1]
    ref_cls = nn.BatchNorm1d if len(shape) == 2 else nn.BatchNorm2d
    w0, b0 = 1 + 0.5 * torch.randn(c, generator=g), torch.randn(c, generator=g)  # C, C: shared affine params
    gbn, ref, ctl = GlobalBatchNorm(c).to(dev), ref_cls(c).to(dev), ref_cls(c).to(dev)
    with torch.no_grad():
        for m in (gbn, ref, ctl):
            m.weight.copy_(w0), m.bias.copy_(b0)
    n_this = shape[0] // world
    sl = slice(rank * n_this, (rank + 1) * n_this)  # this rank's share of the global batch
    for step in range(3):  # 3 steps: running statistics accumulate
        x = (2 + 3 * torch.randn(*shape, generator=g)).to(dev)  # global batch, same on every rank
        gout = torch.randn(*shape, generator=g).to(dev)  # fixed upstream gradient: loss = sum(out * gout)
        xr = x.clone().requires_grad_(True)  # single process, whole batch
        yr = ref(xr)
        (yr * gout).sum().backward()
        xl = x[sl].clone().requires_grad_(True)  # this rank's slice, Global BN
        yl = gbn(xl)
        (yl * gout[sl]).sum().backward()  # the global loss is the sum of the ranks' losses
        xc = x[sl].clone().requires_grad_(True)  # control: per-device BN on the slice
        yc = ctl(xc)
        (yc * gout[sl]).sum().backward()
    gw = torch.cat([gbn.weight.grad, gbn.bias.grad])  # 2C: this rank's parameter gradient (3 steps)
    dist.all_reduce(gw)  # summed over ranks, as DDP would (up to its 1/world averaging)
    gc = torch.cat([ctl.weight.grad, ctl.bias.grad])  # 2C: control
    dist.all_reduce(gc)
    gref = torch.cat([ref.weight.grad, ref.bias.grad])  # 2C: single process
    scale = gref.abs().max()  # weight gradients sum N*H*W terms: compare relative to their size
    out["fwd"].append((yl - yr[sl]).abs().max().item())
    out["grad_x"].append((xl.grad - xr.grad[sl]).abs().max().item())
    out["grad_w_rel"].append(((gw - gref).abs().max() / scale).item())
    out["ctl_grad_w_rel"].append(((gc - gref).abs().max() / scale).item())
    out["run_mean"].append((gbn.running_mean - ref.running_mean).abs().max().item())
    out["run_var"].append((gbn.running_var - ref.running_var).abs().max().item())
    out["ctl_fwd"].append((yc - yr[sl]).abs().max().item())
    out["ctl_grad_x"].append((xc.grad - xr.grad[sl]).abs().max().item())
    out["ctl_run_var"].append((ctl.running_var - ref.running_var).abs().max().item())
    # the signature is gone: with Global BN a sample's output does not depend on which samples share its device
    perm = torch.randperm(shape[0], generator=g).to(dev)  # another split of the same global batch
    for m, key in ((gbn, "split_global"), (ctl, "split_ctl")):
        out[key].append(_split_change(m, x, perm, sl, world))  # x: the last step's batch


def _split_change(m, x, perm, sl, world):
    """The largest change of this rank's outputs when the global batch ``x`` is split across ranks as ``perm`` says."""
    import torch.distributed as dist

    with torch.no_grad():
        y1 = m(x[sl])  # n_this x ...: outputs under split 1
        y2_local = m(x[perm][sl])  # outputs under split 2
        parts = [torch.empty_like(y2_local) for _ in range(world)]
        dist.all_gather(parts, y2_local)
        y2 = torch.cat(parts)[torch.argsort(perm)][sl]  # back to split-1 order: n_this x ...
        return (y1 - y2).abs().max().item()


def _cross_jacobians(out, seed, rank, world, dev):
    """Exact cross-device Jacobian of Global BN vs single-process BN (BN1d, N=8, C=3), and per-device BN's."""
    g = torch.Generator().manual_seed(seed)
    n_all, c = 8, 3
    x = torch.randn(n_all, c, generator=g).to(dev)  # N x C
    n_this = n_all // world
    sl = slice(rank * n_this, (rank + 1) * n_this)
    ref_jac = torch.autograd.functional.jacobian(nn.BatchNorm1d(c).to(dev), x)  # N x C x N x C
    for m, key in ((GlobalBatchNorm(c).to(dev), "jac"), (nn.BatchNorm1d(c).to(dev), "ctl_jac")):
        jac = _full_jacobian(m, x, sl, world)  # N x C x N x C
        dev_of = torch.arange(n_all, device=dev) // n_this  # N: device of each sample
        cross = dev_of[:, None] != dev_of[None, :]  # N x N: pairs on different devices
        out[f"{key}_cross"].append(jac.abs().amax(dim=(1, 3))[cross].max().item())
        if key == "jac":
            out["jacobian"].append((jac - ref_jac).abs().max().item())


def _full_jacobian(m, x, sl, world):
    """d m(x)[i, ch] / d x, assembled from every rank's slice: one backward per output entry (collectives inside)."""
    import torch.distributed as dist

    n_all, c = x.shape
    n_this = sl.stop - sl.start
    xl = x[sl].clone().requires_grad_(True)
    yl = m(xl)  # n_this x C
    rows = []
    for i in range(n_all):
        for ch in range(c):
            go = torch.zeros(n_all, c, device=x.device)  # gradient seed for global output entry (i, ch)
            go[i, ch] = 1.0
            xl.grad = None
            yl.backward(go[sl], retain_graph=True)  # every rank runs the backward
            rows.append(xl.grad.clone())  # n_this x C: d out[i, ch] / d x[this slice]
    jac_local = torch.stack(rows).view(n_all, c, n_this, c)  # N x C x n_this x C
    parts = [torch.empty_like(jac_local) for _ in range(world)]
    dist.all_gather(parts, jac_local.contiguous())
    return torch.cat(parts, dim=2)  # N x C x N x C


@pytest.mark.distributed
@pytest.mark.claim("SOTA-364", "global-bn-equivalence")
def test_global_bn_equals_full_batch_bn_across_processes(evidence, device, seeds):
    """Global BN over 2 torch.distributed processes reproduces single-process BN on the whole batch (outputs, running
    stats, input and weight gradients, full Jacobian); per-device BN does not and depends on the device split."""
    world = 2
    backend = pick_backend(device, world)
    results = run_distributed(_global_bn_rank, world, str(device), seeds, backend=backend)
    agg = {k: max(max(r[k]) for r in results) for k in results[0] if k != "backend"}  # worst over ranks and seeds
    mins = {k: min(min(r[k]) for r in results) for k in results[0] if k != "backend"}  # best over ranks and seeds
    per_seed = {
        k: np.reshape([r[k] for r in results], (len(results), len(seeds), -1))  # ranks x seeds x (BN1d, BN2d)
        for k in results[0]
        if k != "backend"
    }
    worst = {k: v.max((0, 2)) for k, v in per_seed.items()}  # seeds: worst over ranks and shapes
    best = {k: v.min((0, 2)) for k, v in per_seed.items()}  # seeds: best over ranks and shapes

    def record(name, v):  # one value per seed; the expectations read every seed
        evidence.metric(name, float(v.mean()), seeds=v.tolist())

    for k in ("fwd", "grad_x", "run_mean", "run_var", "jacobian"):  # Global BN vs one BN: worst case
        record(f"global_bn_{k}_max_abs_diff", worst[k])
    record("global_bn_grad_w_max_rel_diff", worst["grad_w_rel"])
    record("global_bn_split_change_max", worst["split_global"])  # output change when the split changes
    record("global_bn_cross_device_jacobian", best["jac_cross"])  # nonzero: it does couple devices
    for k in ("fwd", "grad_x", "run_var"):  # control, per-device BN vs one BN: best case
        record(f"per_device_bn_{k}_min_abs_diff", best[f"ctl_{k}"])
    record("per_device_bn_grad_w_min_rel_diff", best["ctl_grad_w_rel"])
    record("per_device_bn_split_change_min", best["split_ctl"])
    record("per_device_bn_cross_device_jacobian", worst["ctl_jac_cross"])  # exactly 0: sub-batch only
    evidence.metric("world_size", world)
    evidence.note(
        f"backend={results[0]['backend']}, {len(seeds)} seeds x (BN1d 16x6, BN2d 8x3x4x4), 3 steps; "
        f"worst diffs {dict((k, float(f'{v:.3g}')) for k, v in agg.items())}; "
        f"best diffs {dict((k, float(f'{v:.3g}')) for k, v in mins.items())}"
    )


# ----------------------------------------------------------------------------------------------------------------------
# 9. fix-cost (torch.distributed, gloo)


def _encoder(n_layers, bn_cls, d_in=64, d=32, d_out=16):
    """L blocks of Linear -> BN -> ReLU, then a Linear head (an encoder whose only cross-rank coupling is BN)."""
    layers, d_prev = [], d_in
    for _ in range(n_layers):
        layers += [nn.Linear(d_prev, d), bn_cls(d), nn.ReLU()]
        d_prev = d
    return nn.Sequential(*layers, nn.Linear(d_prev, d_out))


def _fix_cost_rank(rank, world, device, layer_counts, n_local):
    """One rank: collectives and bytes of one training step with Global BN (SimCLR) and Shuffle BN (MoCo)."""
    import torch.distributed as dist

    dev = rank_device(device, rank, dist.get_backend())
    torch.manual_seed(rank)
    v1 = torch.randn(n_local, 64, device=dev)  # n_local x 64: view 1 of this rank's images
    v2 = torch.randn(n_local, 64, device=dev)  # n_local x 64: view 2
    gshuf = torch.Generator().manual_seed(0)
    xs, iu = batch_shuffle_ddp(v2, generator=gshuf)  # sanity: unshuffle inverts shuffle across ranks
    assert torch.equal(batch_unshuffle_ddp(xs, iu), v2)
    rows = []
    for n_layers in layer_counts:
        row = {"L": n_layers}
        # Global BN step (SimCLR §2.2): both views through one encoder, global statistics in every BN layer
        enc = _encoder(n_layers, GlobalBatchNorm).to(dev).train()
        with CollectiveCounter() as cnt:
            z = F.normalize(enc(torch.cat([v1, v2])), dim=1)  # 2n_local x 16
            row["gbn_fwd_calls"], row["gbn_fwd_bytes"] = cnt.n_calls, cnt.n_bytes
            cnt.reset()
            logits = z[:n_local] @ z[n_local:].T / 0.1  # n_local x n_local (local negatives: only BN is counted)
            F.cross_entropy(logits, torch.arange(n_local, device=dev)).backward()
            row["gbn_bwd_calls"], row["gbn_bwd_bytes"] = cnt.n_calls, cnt.n_bytes
        # Shuffle BN step (MoCo §3.3): per-device BN; keys shuffled across ranks before the key encoder, then unshuffled
        enc_q = _encoder(n_layers, nn.BatchNorm1d).to(dev).train()
        enc_k = _encoder(n_layers, nn.BatchNorm1d).to(dev).train()
        with CollectiveCounter() as cnt:
            q = F.normalize(enc_q(v1), dim=1)  # n_local x 16: query encoder, order untouched
            row["q_fwd_calls"] = cnt.n_calls
            with torch.no_grad():  # MoCo: no gradient to keys
                xk, idx_unshuffle = batch_shuffle_ddp(v2, generator=gshuf)  # all_gather + broadcast
                k = F.normalize(enc_k(xk), dim=1)  # n_local x 16
                k = batch_unshuffle_ddp(k, idx_unshuffle)  # all_gather
            row["shuffle_fwd_calls"], row["shuffle_fwd_bytes"] = cnt.n_calls, cnt.n_bytes
            row["shuffle_kinds"] = [name for name, _ in cnt.calls]
            cnt.reset()
            logits = q @ k.T / 0.1  # n_local x n_local
            F.cross_entropy(logits, torch.arange(n_local, device=dev)).backward()
            row["shuffle_bwd_calls"], row["shuffle_bwd_bytes"] = cnt.n_calls, cnt.n_bytes
        rows.append(row)
    return rows


def line_fit(x, y):
    """Least-squares line y = slope * x + intercept; returns slope, intercept and the worst residual."""
    slope, icpt = np.polyfit(x, y, 1)
    return float(slope), float(icpt), float(np.abs(y - (slope * x + icpt)).max())


def resnet50_payloads():
    """Analytic extrapolation (arithmetic, not measured) to MoCo's setting: ResNet-50, 8 GPUs x 32 images of 3x224x224
    float32, 128-d keys; Global BN does one all_reduce of 2C+1 floats per BN layer, forward and backward (as measured)."""
    bn_channels = [64]  # stem
    for width, blocks in ((64, 3), (128, 4), (256, 6), (512, 3)):  # bottleneck stages: BN(w), BN(w), BN(4w)
        bn_channels += [width, width, 4 * width] * blocks + [4 * width]  # + downsample BN in the first block
    r50_gbn_calls = 2 * len(bn_channels)
    r50_gbn_bytes = 2 * sum(2 * c + 1 for c in bn_channels) * 4
    r50_shuffle_bytes = 32 * 3 * 224 * 224 * 4 + 8 * 32 * 8 + 32 * 128 * 4  # gather images + int64 perm + gather keys
    return {
        "resnet50_bn_layers": len(bn_channels),
        "resnet50_global_bn_collectives_per_step": r50_gbn_calls,
        "resnet50_global_bn_payload_bytes_per_step": r50_gbn_bytes,
        "resnet50_shuffle_payload_bytes_per_step": r50_shuffle_bytes,
    }


def record_fix_cost_figure(evidence, L, gbn_calls, sh_calls, gbn_bytes, sh_bytes, world, n_local):
    """Figure: collectives and payload per step and rank against the number of BN layers, Global BN vs Shuffle BN."""

    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2))
    axes[0].plot(L, gbn_calls, "o-", label="Global BN (SimCLR §2.2)")
    axes[0].plot(L, sh_calls, "s-", label="Shuffle BN (MoCo §3.3)")
    axes[0].set_xlabel("BN layers L"), axes[0].set_ylabel("collectives / step / rank"), axes[0].legend()
    axes[1].plot(L, gbn_bytes / 1024, "o-", label="Global BN")
    axes[1].plot(L, sh_bytes / 1024, "s-", label="Shuffle BN")
    axes[1].set_xlabel("BN layers L"), axes[1].set_ylabel("payload KiB / step / rank"), axes[1].legend()
    fig.suptitle(f"SOTA-364 fix cost, gloo, {world} processes, {n_local} samples/rank")
    fig.tight_layout()
    evidence.figure(
        "fix_cost_vs_layers",
        fig,
        caption="Collectives (left) and payload (right) per step and rank against "
        "the number of BN layers, global BN against shuffle BN, counted in a gloo run.",
    )
    plt.close(fig)


@pytest.mark.distributed
@pytest.mark.claim("SOTA-364", "fix-cost")
def test_global_bn_communicates_per_layer_shuffle_per_forward(evidence, device):
    """Collectives per training step grow linearly in the number of BN layers L for Global BN and stay constant for
    Shuffle BN (measured by wrapping torch.distributed collectives in 2 gloo processes)."""
    world, layer_counts, n_local = 2, (1, 2, 4, 8), 16
    backend = pick_backend(device, world)
    rows = run_distributed(_fix_cost_rank, world, str(device), layer_counts, n_local, backend=backend)[0]  # rank 0
    L = np.array([r["L"] for r in rows], dtype=float)  # 4 layer counts; each array below has one entry per L
    gbn_calls = np.array([r["gbn_fwd_calls"] + r["gbn_bwd_calls"] for r in rows], dtype=float)
    gbn_fwd = np.array([r["gbn_fwd_calls"] for r in rows], dtype=float)
    gbn_bwd = np.array([r["gbn_bwd_calls"] for r in rows], dtype=float)
    gbn_bytes = np.array([r["gbn_fwd_bytes"] + r["gbn_bwd_bytes"] for r in rows], dtype=float)
    sh_calls = np.array([r["shuffle_fwd_calls"] + r["shuffle_bwd_calls"] for r in rows], dtype=float)
    sh_bytes = np.array([r["shuffle_fwd_bytes"] + r["shuffle_bwd_bytes"] for r in rows], dtype=float)
    q_calls = np.array([r["q_fwd_calls"] for r in rows], dtype=float)
    s, i, r = line_fit(L, gbn_calls)
    evidence.metric("global_bn_collectives_per_layer_slope", s)
    evidence.metric("global_bn_collectives_intercept", i)
    evidence.metric("global_bn_collectives_fit_max_residual", r)
    evidence.metric("global_bn_fwd_collectives_per_layer_slope", line_fit(L, gbn_fwd)[0])
    evidence.metric("global_bn_bwd_collectives_per_layer_slope", line_fit(L, gbn_bwd)[0])
    evidence.metric("global_bn_bytes_per_layer_slope", line_fit(L, gbn_bytes)[0])
    s, i, r = line_fit(L, sh_calls)
    evidence.metric("shuffle_collectives_slope", s)
    evidence.metric("shuffle_collectives_per_step", float(sh_calls.mean()))
    evidence.metric("shuffle_collectives_range", float(sh_calls.max() - sh_calls.min()))
    evidence.metric("shuffle_bytes_slope", line_fit(L, sh_bytes)[0])
    evidence.metric("shuffle_bytes_per_step", float(sh_bytes.mean()))
    evidence.metric("per_device_bn_query_collectives", float(q_calls.max()))  # control: plain BN never communicates
    evidence.metric("bytes_crossover_layers", float(sh_bytes.mean() / line_fit(L, gbn_bytes)[0]))  # L where payloads tie

    for name, v in resnet50_payloads().items():  # arithmetic extrapolation to MoCo's ResNet-50 on 8 GPUs
        evidence.metric(name, v)
    evidence.note(
        f"rank 0, world={world}, n_local={n_local}, input 64-d, width 32: "
        f"L={L.astype(int).tolist()} global-BN collectives {gbn_calls.astype(int).tolist()} "
        f"(fwd {gbn_fwd.astype(int).tolist()}, bwd {gbn_bwd.astype(int).tolist()}), bytes "
        f"{gbn_bytes.astype(int).tolist()}; shuffle collectives {sh_calls.astype(int).tolist()} "
        f"({rows[0]['shuffle_kinds']}), bytes {sh_bytes.astype(int).tolist()}"
    )
    record_fix_cost_figure(evidence, L, gbn_calls, sh_calls, gbn_bytes, sh_bytes, world, n_local)
