"""The blog's sequence-batch layout on fresh white noise, where the loss a model can reach without reading other
samples is known exactly (the leak-isolating design of SOTA-371).

Every step draws new i.i.d. N(0, 1) series, so nothing can be learned or memorised about the data: a window's target
is independent of the window's own inputs, and any prediction f made from them has expected MSE
E[(y - f)^2] = Var(y) + E[f^2] >= 1. That 1 is the information floor. In the blog's layout (`leak`: E = L windows
shifted by one) the targets of the first E - 1 windows are inputs of the next window, so a model that reads them
through the batch statistics of BatchNorm can go below the floor in train mode; in the `far` layout (the same input
windows, each target L - 1 steps beyond the batch) every target is independent of the whole batch, so even train mode
cannot go below 1. Eval mode (running statistics) has no channel between samples and cannot either.

Shapes as in verify.sequences: M models of a Bucket, G groups, S = Nmax * E samples, T = L - 1 input positions.
"""

import torch

from verify.sequences import Bucket, sequence_batches

FLOOR = 1.0  # Var(y) of unit white noise: the MSE floor of any prediction from a window's own inputs


def noise_batch(bucket, n_groups, generator):
    """n_groups batches per model of N fresh white-noise sequence batches in the bucket's layout: inputs M x G x S x T,
    targets M x G x S. Window e of a sequence batch reads v[e : e + T]; its target is v[e + L - 1] (leak) or
    v[e + 2(L - 1)] (far), with L the model's own sequence length (positions and windows past it are masked)."""
    M, T, E, n_max = len(bucket.specs), bucket.T, bucket.E, bucket.n_max
    v = torch.randn(M, n_groups, n_max, E + 2 * T, generator=generator)  # M x G x Nmax x P, one series each
    window = torch.arange(E)[:, None] + torch.arange(T)[None, :]  # E x T: window e, position t reads v[e + t]
    x = v[..., window]  # M x G x Nmax x E x T
    ahead = torch.tensor([(L - 1) * (2 if mode == "far" else 1) for mode, L, _ in bucket.specs])  # M
    target = (torch.arange(E)[None, :] + ahead[:, None])[:, None, None, :].expand(M, n_groups, n_max, E)
    y = torch.gather(v, 3, target)  # M x G x Nmax x E
    dev = bucket.X.device
    return x.reshape(M, n_groups, n_max * E, T).to(dev), y.reshape(M, n_groups, n_max * E).to(dev)


def noise_bucket(specs, generator, device):
    """A Bucket of blog models for specs [(mode, L, N)]; its stored data set is one white-noise series and is never
    drawn from (noise_batch draws fresh series), it only fixes the padded layout."""
    series = torch.randn(1000, generator=generator)
    datasets = {(mode, L): sequence_batches(series, L, mode, generator) for mode, L, _ in specs}
    return Bucket(specs, datasets, generator, device)


def train_on_noise(specs, steps, seed, device, eval_groups=256):
    """Train the blog models of `specs` for `steps` Adam steps (lr 1e-3, the blog's) on fresh white noise, each step one
    batch of N sequence batches per model (one bucket per N, so that no model is padded along S); then measure on
    eval_groups fresh batches. Returns per-model tensors in the order of `specs`: train_mse (batch statistics),
    eval_mse (running statistics) and train_se (standard error of train_mse over the groups)."""
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    by_n = {}  # N -> indices into specs
    for i, (_, _, N) in enumerate(specs):
        by_n.setdefault(N, []).append(i)
    buckets = {N: noise_bucket([specs[i] for i in idx], g, device) for N, idx in by_n.items()}
    opt = torch.optim.Adam([t for b in buckets.values() for t in b.parameters()], lr=1e-3)
    for _ in range(steps):
        loss = 0.0
        for b in buckets.values():
            x, y = noise_batch(b, 1, g)  # M x 1 x S x T, M x 1 x S
            loss = loss + b.mse(b.forward(x, train=True, update_stats=True), y).sum()  # models independent
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    out = {k: torch.zeros(len(specs)) for k in ("train_mse", "eval_mse", "train_se")}
    with torch.no_grad():
        for N, b in buckets.items():
            x, y = noise_batch(b, eval_groups, g)  # M x G x S x T: every group an independent batch
            tr = b.mse(b.forward(x, train=True), y).cpu()  # M x G
            ev = b.mse(b.forward(x, train=False), y).cpu()  # M x G
            idx = torch.tensor(by_n[N])
            out["train_mse"][idx], out["eval_mse"][idx] = tr.mean(1), ev.mean(1)
            out["train_se"][idx] = tr.std(dim=1) / eval_groups**0.5
    return out
