"""Sequence batches of the blog "Information leakage in batch normalization" (Perschewski 2021, §Hidden in Plain Batch)
and the blog's Conv1d/BatchNorm1d predictor, vectorised so that a whole grid of independent models trains in one pass.

Layout of a bucket of M models sharing one sequence length L (input length T = L - 1):
activations are M x G x S x T x C (model, group of independent batches, sample, position, channel). Models with fewer
sequence batches per step (smaller N) are padded along S and masked out of the loss and of the batch statistics, so
each model sees exactly the batch statistics of its own N * E samples, as a separate nn.BatchNorm1d would.

The training-mode forward and its backward are written out by hand (Bucket._forward, Bucket._backward) rather than
left to autograd: each Conv1d is three batched matrix products on the positions of all samples in a row (_conv3),
nothing is multiplied by a mask where it is zero already, and buffers are updated in place; the results are those of
the plain formulation up to floating-point rounding (verify/test_sota371_equivalence.py).
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CHANNELS = 32  # blog §The Experiment: Conv1d(.., 32, 3, 1, 1) blocks
N_BLOCKS = 6  # blog §The Experiment: six Conv1d + BatchNorm1d + ReLU blocks
MODES = ("leak", "far", "random")  # target inside the batch (blog); controls without the target in the batch


def blog_function(n_points=1000, span=2 * math.pi, device="cpu"):
    """f(x) = sin(x) + 2 cos(0.5 x) sampled regularly at n_points in [0, span] (blog §The Data: 1000 points in [0, 2 pi])."""
    x = torch.linspace(0, span, n_points, device=device, dtype=torch.float64)
    return (torch.sin(x) + 2 * torch.cos(0.5 * x)).float()  # n_points


def sequence_batches(f, seq_len, mode, generator):
    """All sequence batches of one data set: inputs X (B x E x L-1) and targets Y (B x E), E = L windows per sequence batch.

    leak:   E consecutive windows shifted by one (blog §The Data example): the target of window i is the last input
            value of window i+1, i.e. it is inside the batch.
    far:    the SAME input windows, but the target lies L-1 steps further ahead, beyond the batch's span (no target in
            the batch; batch composition and its locality unchanged).
    random: E windows taken from E distinct, randomly chosen non-overlapping blocks of length L of the whole series,
            each predicting its next value (no target in the batch, no locality).
    The number of sequence batches is the same in all modes: starts i * L with i * L + 3L - 3 <= len(f) - 1
    (the blog's code uses len(f) // L - 1 starts; 'far' needs L - 2 more points at the end).
    """
    n, L, E = f.shape[0], seq_len, seq_len
    n_seq = (n - 3 * L + 2) // L + 1  # B sequence batches
    starts = torch.arange(n_seq)[:, None] * L + torch.arange(E)[None, :]  # B x E, consecutive shifts by one
    if mode == "random":
        n_blocks = n // L
        pick = torch.rand(n_seq, n_blocks, generator=generator).argsort(dim=1)[:, :E]  # B x E distinct blocks
        starts = pick * L  # B x E
    offsets = torch.arange(L - 1)  # T input positions
    X = f[(starts[..., None] + offsets).to(f.device)]  # B x E x T
    ahead = (L - 1) + (L - 1 if mode == "far" else 0)  # next value, or L - 1 further ahead
    Y = f[(starts + ahead).to(f.device)]  # B x E
    return X, Y


def blog_model(seq_len):
    """The blog's predictor, verbatim (blog §The Experiment), used as the reference for the vectorised version."""
    layers = [nn.Conv1d(1, CHANNELS, 3, 1, 1), nn.BatchNorm1d(CHANNELS), nn.ReLU()]
    for _ in range(N_BLOCKS - 1):
        layers += [nn.Conv1d(CHANNELS, CHANNELS, 3, 1, 1), nn.BatchNorm1d(CHANNELS), nn.ReLU()]
    layers += [nn.Conv1d(CHANNELS, 1, seq_len - 1), nn.Flatten()]
    return nn.Sequential(*layers)


# Models are packed into a few buckets of similar size (sequence-length range x batch-size range); inside a bucket,
# samples (S) and positions (T) are padded to the bucket's maximum and masked. 15 buckets keep ~72% of the padded
# work useful while the per-step Python overhead stays small.
L_GROUPS = ((4, 7), (8, 11), (12, 14), (15, 17), (18, 20))  # inclusive sequence-length ranges
N_GROUPS = ((1, 3), (4, 5), (6, 7))  # inclusive batch-size ranges


class Bucket:
    """M independent blog models (one per (mode, L, N) spec), their padded data sets, parameters and masks."""

    def __init__(self, specs, datasets, generator, device):
        self.specs = specs  # list of (mode, L, N)
        M, C = len(specs), CHANNELS
        Ls = torch.tensor([L for _, L, _ in specs])
        Ns = torch.tensor([N for _, _, N in specs])
        self.T, self.E, self.n_max = int(Ls.max()) - 1, int(Ls.max()), int(Ns.max())
        data = [datasets[(mode, L)] for mode, L, _ in specs]
        self.n_seq = torch.tensor([X.shape[0] for X, _ in data])  # M sequence batches per data set
        self.X = torch.zeros(M, int(self.n_seq.max()), self.E, self.T, device=device)  # M x B x E x T, zero padded
        self.Y = torch.zeros(M, int(self.n_seq.max()), self.E, device=device)  # M x B x E
        for m, (X, Y) in enumerate(data):
            self.X[m, : X.shape[0], : X.shape[1], : X.shape[2]] = X
            self.Y[m, : Y.shape[0], : Y.shape[1]] = Y
        self.tmask = (torch.arange(self.T)[None] < (Ls - 1)[:, None]).float().to(device)  # M x T real positions
        emask = torch.arange(self.E)[None] < Ls[:, None]  # M x E real windows (E = L)
        nmask = torch.arange(self.n_max)[None] < Ns[:, None]  # M x Nmax real sequence batches
        self.smask = (nmask[:, :, None] & emask[:, None, :]).reshape(M, 1, -1).float().to(device)  # M x 1 x S
        self.count = (Ns * Ls * (Ls - 1)).float().to(device)  # M values per BN statistic: N * E * (L-1)
        self._mask_cache = {}  # G -> masks of a batch of G groups (Bucket._masks)
        short = torch.nonzero(Ls - 1 < self.T)[:, 0]  # models with padded positions: their first one is t = L - 1
        self.short_m, self.short_t = short.to(device), (Ls[short] - 1).to(device)

        def uniform(shape, fan_in):  # PyTorch Conv1d default init: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
            bound = (1.0 / fan_in.float().sqrt()).view(-1, *([1] * (len(shape) - 1)))
            return ((torch.rand(shape, generator=generator) * 2 - 1) * bound).to(device)

        # Conv1d biases before a BatchNorm are omitted: train-mode outputs are exactly invariant to them and their
        # gradient is zero; in eval mode they only enter via running_mean, as bias * 0.9^steps (negligible).
        self.conv_w, self.bn_w, self.bn_b, self.run_mean, self.run_var = [], [], [], [], []
        for k in range(N_BLOCKS):
            c_in = 1 if k == 0 else C
            self.conv_w.append(uniform((M, 3 * c_in, C), torch.full((M,), 3 * c_in)).requires_grad_(True))  # M x 3Cin x C
            self.bn_w.append(torch.ones(M, C, device=device, requires_grad=True))
            self.bn_b.append(torch.zeros(M, C, device=device, requires_grad=True))
            self.run_mean.append(torch.zeros(M, C, device=device))
            self.run_var.append(torch.ones(M, C, device=device))
        fan_out = C * (Ls - 1)  # final Conv1d(32, 1, L-1) has fan_in 32 (L-1)
        self.out_w = (uniform((M, self.T, C), fan_out) * self.tmask[..., None]).requires_grad_(True)  # M x T x C
        self.out_b = uniform((M,), fan_out).requires_grad_(True)  # M

    def parameters(self):
        return self.conv_w + self.bn_w + self.bn_b + [self.out_w, self.out_b]

    def draw(self, n_groups, generator):
        """n_groups batches per model of N distinct random sequence batches of its own data set (blog code:
        DataLoader(ds, batch_size=N, shuffle=True)); inputs M x G x S x T, targets M x G x S (S = Nmax * E)."""
        M, B = self.X.shape[:2]
        r = torch.rand(M, n_groups, B, generator=generator)  # M x G x B
        r = r.masked_fill(torch.arange(B)[None, None, :] >= self.n_seq[:, None, None], 2.0)  # never draw padding
        idx = r.argsort(dim=-1)[..., : self.n_max].to(self.X.device)  # M x G x Nmax
        rows = torch.arange(M, device=self.X.device)[:, None, None]
        x = self.X[rows, idx].reshape(M, n_groups, -1, self.T)  # M x G x S x T
        y = self.Y[rows, idx].reshape(M, n_groups, -1)  # M x G x S
        return x, y

    def forward(self, x, train, update_stats=False, momentum=0.1, eps=1e-5):
        """Predictions M x G x S. train=True: nn.BatchNorm1d training mode, statistics of each (model, group) over its
        own real samples and positions, differentiable (by Bucket._backward); train=False: running statistics (eval
        mode), without gradient."""
        params = self.parameters()
        if train and torch.is_grad_enabled() and any(p.requires_grad for p in params):
            pred, *stats = _TrainPass.apply(self, x, eps, *params)
        else:
            with torch.no_grad():
                pred, stats, _ = self._forward(x, train, eps, keep=False)
        if train and update_stats:  # running <- (1 - momentum) running + momentum * batch, unbiased variance
            with torch.no_grad():
                n = self.count[:, None]  # M x 1
                for k in range(N_BLOCKS):
                    mean, var = stats[k], stats[N_BLOCKS + k]  # M x G x C each
                    self.run_mean[k].lerp_(mean.mean(dim=1), momentum)
                    self.run_var[k].lerp_(var.mean(dim=1) * n / (n - 1), momentum)
        return pred

    def _masks(self, G):
        """For batches of G groups: mst, M x 1 x S x T x 1 real entries; w, (M G) x 1 x (S T) averaging weights of one
        statistic (mst / count); short_rows, the rows of M x G x S x T at a shorter model's first padded position."""
        if G not in self._mask_cache:
            M, S, T = len(self.specs), self.smask.shape[-1], self.T
            mst = (self.smask[..., None] * self.tmask[:, None, None, :])[..., None]  # M x 1 x S x T x 1
            w = (mst / self.count[:, None, None, None, None]).expand(M, G, S, T, 1).reshape(M * G, 1, S * T)
            rows = torch.arange(M * G * S * T, device=mst.device).view(M, G, S, T)
            self._mask_cache[G] = mst, w, rows[self.short_m, :, :, self.short_t].flatten()
        return self._mask_cache[G]

    def _forward(self, x, train, eps, keep):
        """The blog network without autograd, x M x G x S x T -> predictions M x G x S. train: batch statistics (returned:
        N_BLOCKS means, then N_BLOCKS biased variances, M x G x C each), else the running ones. keep: also return
        what _backward needs, per block (input, conv output z, mean, 1 / std, BN scale, output h)."""
        M, G, S, T = x.shape
        C = CHANNELS
        mst, w, _ = self._masks(G)
        h = x[..., None] * mst  # M x G x S x T x 1, the input zero at padded entries
        means, variances, cache = [], [], []
        for k in range(N_BLOCKS):
            z = _conv3(h.view(M, G * S, T, -1), self.conv_w[k]).view(M, G, S, T, C)  # M x G x S x T x C
            if train:
                mean = torch.bmm(w, z.view(M * G, S * T, C)).view(M, G, 1, 1, C)
                # (z - mean)^2 in one pass; not E[z^2] - mean^2, which loses the variance in float32 where a batch's
                # mean is far from zero against its spread (first block: up to ~55 standard deviations)
                y = F.mse_loss(z, mean.expand_as(z), reduction="none")
                var = torch.bmm(w, y.view(M * G, S * T, C)).view(M, G, 1, 1, C)  # biased variance, as BN normalises
            else:
                mean, var = self.run_mean[k][:, None, None, None, :], self.run_var[k][:, None, None, None, :]
                y = torch.empty_like(z)
            inv = torch.rsqrt(var + eps)  # M x G x 1 x 1 x C
            scale = self.bn_w[k][:, None, None, None, :] * inv
            shift = torch.addcmul(self.bn_b[k][:, None, None, None, :], mean, scale, value=-1)  # beta - mean * scale
            torch.addcmul(shift, z, scale, out=y).relu_()  # BN and ReLU, M x G x S x T x C
            h_in, h = h, y.mul_(mst)  # zero at padded entries: the next conv's zero padding
            means.append(mean.view(M, -1, C))
            variances.append(var.view(M, -1, C))
            if keep:
                cache.append((h_in, z, mean, inv, scale, h))
        pred = torch.bmm(h.view(M, G * S, T * C), self.out_w.view(M, T * C, 1)).view(M, G, S) + self.out_b[:, None, None]
        return pred, means + variances, cache

    def _backward(self, cache, g_pred):
        """Gradients of _forward's training-mode predictions w.r.t. parameters(), in that order, given g_pred (M x G x S)."""
        M, G, S = g_pred.shape
        T, C = self.T, CHANNELS
        n, short_rows = self.count[:, None, None, None, None], self._masks(G)[2]  # n: M x 1 x 1 x 1 x 1
        h = cache[-1][5]
        g_out_w = torch.bmm(h.view(M, G * S, T * C).transpose(1, 2), g_pred.reshape(M, G * S, 1)).view(M, T, C)
        g_out_b = g_pred.sum(dim=(1, 2))
        g = torch.bmm(g_pred.reshape(M, G * S, 1), self.out_w.view(M, 1, T * C)).view(M, G, S, T, C)  # d loss / d h
        g_conv, g_bn_w, g_bn_b = [None] * N_BLOCKS, [None] * N_BLOCKS, [None] * N_BLOCKS
        for k in reversed(range(N_BLOCKS)):
            h_in, z, mean, inv, scale, h = cache[k]
            gy = torch.ops.aten.threshold_backward.grad_input(g, h, 0, grad_input=g)  # in place; h > 0: real, active
            g_sum = gy.view(M * G, S * T, C).sum(dim=1).view(M, G, 1, 1, C)  # d loss / d beta, per group
            gz = torch.mul(gy, z, out=h)  # the buffer of gz below: h's, read for the last time above
            g_zc = gz.view(M * G, S * T, C).sum(dim=1).view(M, G, 1, 1, C) - mean * g_sum  # sum gy (z - mean)
            g_bn_b[k] = g_sum.sum(dim=1)
            g_bn_w[k] = (g_zc * inv).sum(dim=1).view(M, C)
            # BatchNorm backward: gz = scale * (gy - mean(gy) - (z - mean) inv^2 mean(gy (z - mean))), means over real
            # entries, = scale gy + a + b z. At padded rows gz is finite and reaches no parameter (the conv input is
            # zero there, and the gradient of the block before is masked by its ReLU), except at a shorter model's
            # first padded position, whose left neighbour is its last real one: zeroed.
            b = -scale * inv * inv * g_zc / n
            torch.addcmul(-scale * g_sum / n - b * mean, z, b, out=gz).addcmul_(gy, scale)
            gz.view(-1, C).index_fill_(0, short_rows, 0)
            h_in, W = h_in.view(M, G * S, T, -1), self.conv_w[k]
            g_conv[k], g = _conv3_backward(h_in, gz.view(M, G * S, T, C), W, k > 0, out=z)  # z: read for the last time
            g = g.view(M, G, S, T, C) if k > 0 else None
        return g_conv + [t.view(M, C) for t in g_bn_w] + [t.view(M, C) for t in g_bn_b] + [g_out_w, g_out_b]

    def mse(self, pred, y):
        """Per (model, group) MSE over real samples, M x G (F.mse_loss over one model's batch)."""
        return (((pred - y) ** 2) * self.smask).sum(dim=2) / self.smask.sum(dim=2)


def _conv3(h, W):
    """Conv1d(c, C, 3, 1, 1) without bias, one per model: h M x N x T x c (N samples, zero at padded entries), W M x 3c x C
    (row = tap * c + channel; tap j of position t reads position t + j - 1) -> M x (N T) x C. Three products over the
    positions of all samples in a row; the two that crossed a sample boundary are then taken back out."""
    M, N, T, c = h.shape
    hf = h.reshape(M, N * T, c)
    W0, W1, W2 = W[:, :c], W[:, c : 2 * c], W[:, 2 * c :]  # M x c x C each: left, centre, right tap
    z = torch.bmm(hf, W1)
    z[:, 1:].baddbmm_(hf[:, :-1], W0)
    z[:, :-1].baddbmm_(hf[:, 1:], W2)
    zv = z.view(M, N, T, -1)
    zv[:, 1:, 0].baddbmm_(h[:, :-1, T - 1], W0, alpha=-1)  # position 0 has no left neighbour
    zv[:, :-1, T - 1].baddbmm_(h[:, 1:, 0], W2, alpha=-1)  # position T - 1 has no right neighbour
    return z


def _conv3_backward(h, gz, W, input_grad, out):
    """Gradients of _conv3's output w.r.t. W (M x 3c x C) and, if input_grad, h (M x (N T) x c, written into the buffer
    out), given gz (M x N x T x C)."""
    M, N, T, c = h.shape
    hf, gf = h.reshape(M, N * T, c), gz.reshape(M, N * T, -1)
    W0, W1, W2 = W[:, :c], W[:, c : 2 * c], W[:, 2 * c :]
    g_w0 = torch.bmm(hf[:, :-1].transpose(1, 2), gf[:, 1:]).baddbmm_(h[:, :-1, T - 1].transpose(1, 2), gz[:, 1:, 0], alpha=-1)
    g_w1 = torch.bmm(hf.transpose(1, 2), gf)
    g_w2 = torch.bmm(hf[:, 1:].transpose(1, 2), gf[:, :-1]).baddbmm_(h[:, 1:, 0].transpose(1, 2), gz[:, :-1, T - 1], alpha=-1)
    if not input_grad:
        return torch.cat([g_w0, g_w1, g_w2], dim=1), None
    g = torch.bmm(gf, W1.transpose(1, 2), out=out.view(M, N * T, c))
    g[:, :-1].baddbmm_(gf[:, 1:], W0.transpose(1, 2))
    g[:, 1:].baddbmm_(gf[:, :-1], W2.transpose(1, 2))
    gv = g.view(M, N, T, c)
    gv[:, :-1, T - 1].baddbmm_(gz[:, 1:, 0], W0.transpose(1, 2), alpha=-1)
    gv[:, 1:, 0].baddbmm_(gz[:, :-1, T - 1], W2.transpose(1, 2), alpha=-1)
    return torch.cat([g_w0, g_w1, g_w2], dim=1), g


class _TrainPass(torch.autograd.Function):
    """A bucket's training-mode forward as one autograd node whose backward is Bucket._backward. Outputs: predictions
    M x G x S and the batch statistics (without gradient)."""

    @staticmethod
    def forward(ctx, bucket, x, eps, *params):
        pred, stats, cache = bucket._forward(x, True, eps, keep=True)
        ctx.bucket, ctx.cache = bucket, cache
        ctx.mark_non_differentiable(*stats)
        return (pred, *stats)

    @staticmethod
    def backward(ctx, g_pred, *_):
        grads = ctx.bucket._backward(ctx.cache, g_pred.contiguous())
        ctx.cache = None
        return (None, None, None, *grads)


def load_blog_model(bucket, m, model):
    """Copy an nn.Sequential blog_model into slot m of a bucket (equivalence check; its conv biases must be zero)."""
    convs = [l for l in model if isinstance(l, nn.Conv1d)]
    bns = [l for l in model if isinstance(l, nn.BatchNorm1d)]
    T = convs[-1].weight.shape[-1]
    with torch.no_grad():
        for k in range(N_BLOCKS):
            w = convs[k].weight  # Cout x Cin x 3
            bucket.conv_w[k][m] = w.permute(2, 1, 0).reshape(-1, w.shape[0])  # 3Cin x Cout, row = tap * Cin + cin
            bucket.bn_w[k][m] = bns[k].weight
            bucket.bn_b[k][m] = bns[k].bias
        bucket.out_w[m].zero_()
        bucket.out_w[m, :T] = convs[-1].weight[0].T  # T x C
        bucket.out_b[m] = convs[-1].bias[0]


def build_grid(seq_lens, batch_sizes, modes, seed, device, n_points=1000, span=2 * math.pi):
    """One Bucket per (L range, N range) holding a model per (mode, L, N) of the grid."""
    g = torch.Generator().manual_seed(seed)
    f = blog_function(n_points, span, device)
    datasets = {(mode, L): sequence_batches(f, L, mode, g) for mode in modes for L in seq_lens}  # shared over N
    buckets = []
    for l_lo, l_hi in L_GROUPS:
        for n_lo, n_hi in N_GROUPS:
            specs = [
                (mode, L, N) for mode in modes for L in seq_lens for N in batch_sizes if l_lo <= L <= l_hi and n_lo <= N <= n_hi
            ]
            if specs:
                buckets.append(Bucket(specs, datasets, g, device))
    return buckets, g


def evaluate_grid(buckets, modes, seq_lens, batch_sizes, eval_groups, generator, precise_bn=0):
    """Blog §The Result, on the training data: mean over eval_groups random batches of N sequence batches of the MSE
    with batch statistics (train mode) and with running statistics (eval mode); tensors n_modes x n_L x n_N.
    precise_bn > 0 first replaces the running statistics by the plain average of the batch statistics of that many
    random batches at the final weights ("precise BN", as verify.moco.recalibrate_bn): no lag behind the weights."""
    out = {k: torch.zeros(len(modes), len(seq_lens), len(batch_sizes)) for k in ("train_loss", "eval_loss")}
    with torch.no_grad():
        for b in buckets:
            for k in range(1, precise_bn + 1):  # momentum 1/k: running = mean of the k batch statistics so far
                b.forward(b.draw(1, generator)[0], train=True, update_stats=True, momentum=1.0 / k)
            x, y = b.draw(eval_groups, generator)
            tr = b.mse(b.forward(x, train=True), y).mean(dim=1).cpu()  # M
            ev = b.mse(b.forward(x, train=False), y).mean(dim=1).cpu()  # M
            for m, (mode, L, N) in enumerate(b.specs):
                i, j, n = modes.index(mode), list(seq_lens).index(L), list(batch_sizes).index(N)
                out["train_loss"][i, j, n], out["eval_loss"][i, j, n] = tr[m], ev[m]
    return out


def grid_optimizer(buckets):
    """Adam with the blog code's settings (torch.optim.Adam defaults, lr 1e-3) over every bucket's parameters; the fused
    kernel (one pass over all parameters, the same update up to rounding)."""
    return torch.optim.Adam([t for b in buckets for t in b.parameters()], lr=1e-3, fused=True)


def grid_step(buckets, opt, generator):
    """One training step of every model of the grid: each bucket draws its batch (Bucket.draw) and back-propagates the
    sum of its models' losses at once, while its activations are still in cache; the same gradients as one backward
    of the loss summed over all buckets (the buckets share no parameter). Then one Adam step."""
    opt.zero_grad(set_to_none=True)
    for b in buckets:
        x, y = b.draw(1, generator)  # M x 1 x S x T, M x 1 x S
        b.mse(b.forward(x, train=True, update_stats=True), y).sum().backward()
    opt.step()


def train_grid(
    seq_lens, batch_sizes, modes, steps, seed, device, eval_groups=8, n_points=1000, span=2 * math.pi, eval_at=(), precise_bn=0
):
    """Train one blog model per (mode, L, N) simultaneously; return their train-/eval-mode losses on the training data.

    Every step each model draws N distinct sequence batches of its own data set and takes one Adam step
    (blog code: torch.optim.Adam defaults, lr 1e-3). The models are independent: the summed loss gives each exactly
    its own gradient and Adam is elementwise. Returns evaluate_grid's dict after the last step, plus "history":
    {step: dict} for the steps in eval_at; precise_bn is passed to evaluate_grid.
    """
    buckets, g = build_grid(seq_lens, batch_sizes, modes, seed, device, n_points, span)
    opt = grid_optimizer(buckets)
    history = {}
    for step in range(1, steps + 1):
        grid_step(buckets, opt, g)
        if step in eval_at:
            history[step] = evaluate_grid(buckets, modes, seq_lens, batch_sizes, eval_groups, g, precise_bn)
    out = evaluate_grid(buckets, modes, seq_lens, batch_sizes, eval_groups, g, precise_bn)
    out["history"] = history
    return out
