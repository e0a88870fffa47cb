"""Sequence batches of the blog "Information leakage in batch normalization" (Perschewski 2021, §Hidden in Plain Batch)
and the blog's Conv1d/BatchNorm1d predictor, vectorised so that a whole grid of independent models trains in one pass.

Layout of a bucket of M models of similar sequence length (input length up to T): inputs are M x G x S x T (model,
group of independent batches, sample, position); inside a pass the activations of a model are rows of C channels,
position-major (Bucket._layout: row (g, t, s)), so that a conv's neighbours are S rows apart and never in another
sample. Models with fewer sequence batches per step (smaller N) or shorter sequences are padded along S and T and masked
out of the loss and of the batch statistics, so each model sees exactly the batch statistics of its own N * E samples,
as a separate nn.BatchNorm1d would.

The training-mode forward and its backward are written out by hand (Bucket._forward, Bucket._backward) rather than
left to autograd: each Conv1d is three batched matrix products over all rows, each one library call (_conv3), nothing
is multiplied by a mask where it is zero already, and a training pass keeps its activations in buffers that serve
every step; the results are those of the plain formulation up to floating-point rounding
(verify/test_sota371_equivalence.py). The grid's training step (grid_step) runs the same passes without autograd, in
one scratch area that every bucket reuses (Bucket._buffers) and, on a CPU, over slices of a bucket's models
(Bucket._parts): the memory a step touches, not its arithmetic, sets much of its time.
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
    return (torch.sin(x) + 2 * torch.cos(0.5 * x)).to(torch.get_default_dtype())  # n_points, float32 unless set


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
# On a CPU a bucket's training step runs over slices of its models of at most this many bytes of activations per level
# (Bucket._parts): fewer cache misses, against more and smaller operations (about 5 % of a grid step where measured)
PART_BYTES = 1_000_000


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
        B = self.X.shape[1]
        self._no_draw = torch.arange(B)[None, None, :] >= self.n_seq[:, None, None]  # M x 1 x B: padding sequence batches
        self._draw_rows = torch.arange(M, device=device)[:, None, None]
        dtype = torch.get_default_dtype()  # float32; float64 for the equivalence check's exact trials
        self.tmask = (torch.arange(self.T)[None] < (Ls - 1)[:, None]).to(dtype).to(device)  # M x T real positions
        emask = torch.arange(self.E)[None] < Ls[:, None]  # M x E real windows (E = L)
        nmask = torch.arange(self.n_max)[None] < Ns[:, None]  # M x Nmax real sequence batches
        self.smask = (nmask[:, :, None] & emask[:, None, :]).reshape(M, 1, -1).to(dtype).to(device)  # M x 1 x S
        self.count = (Ns * Ls * (Ls - 1)).to(dtype).to(device)  # M values per BN statistic: N * E * (L-1)
        self._g_scale = 2 / self.smask.sum(dim=2, keepdim=True)  # M x 1 x 1: d mse / d pred = g_scale (pred - y)
        self._layout_cache = {}  # G -> masks of a batch of G groups (Bucket._layout)
        self._buffer_cache = {}  # G or (G, keep) -> activation buffers of a pass (Bucket._buffers)
        self._param_views = None  # Bucket._views
        self._grads, self._part_cache = None, None  # Bucket.train_step's gradients over slices, Bucket._parts

        def uniform(shape, fan_in):  # PyTorch Conv1d default init: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
            bound = (1.0 / fan_in.to(dtype).sqrt()).view(-1, *([1] * (len(shape) - 1)))
            return ((torch.rand(shape, generator=generator) * 2 - 1) * bound).to(device)

        # Conv1d biases before a BatchNorm are omitted: train-mode outputs are exactly invariant to them and their
        # gradient is zero; in eval mode they only enter via running_mean, as bias * 0.9^steps (negligible).
        self.conv_w, self.bn_w, self.bn_b = [], [], []
        # running statistics of all blocks in one tensor, updated in one operation (Bucket._update_running)
        self._running = torch.stack([torch.zeros(N_BLOCKS, M, C), torch.ones(N_BLOCKS, M, C)]).to(device)  # mean, var
        self.run_mean, self.run_var = list(self._running[0]), list(self._running[1])  # M x C per block: views
        self._unbias = (self.count / (self.count - 1))[:, None]  # M x 1: n / (n - 1)
        for k in range(N_BLOCKS):
            c_in = 1 if k == 0 else C
            self.conv_w.append(uniform((M, 3 * c_in, C), torch.full((M,), 3 * c_in)).requires_grad_(True))  # M x 3Cin x C
            self.bn_w.append(torch.ones(M, C, device=device, requires_grad=True))
            self.bn_b.append(torch.zeros(M, C, device=device, requires_grad=True))
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
        r = r.masked_fill(self._no_draw, 2.0)  # never draw padding
        idx = r.argsort(dim=-1)[..., : self.n_max].to(self.X.device)  # M x G x Nmax
        rows = self._draw_rows
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
                pred, stats, _ = self._forward(x, train, eps, keep=False, shared=True)
        if train and update_stats:
            self._update_running(stats, momentum)
        return pred

    def train_step(self, x, y, momentum=0.1, eps=1e-5):
        """What mse(forward(x, train=True, update_stats=True), y).sum().backward() does, without autograd: the running
        statistics take the batch's, and each parameter's .grad is set to the gradient of the summed per-model MSE."""
        with torch.no_grad():
            parts = self._parts()
            if len(parts) == 1:
                pred, stats, saved = self._forward(x, True, eps, keep=True, shared=True)
                self._update_running(stats, momentum)
                g_pred = (pred - y).mul_(self.smask).mul_(self._g_scale)  # d loss / d pred
                for p, g in zip(self.parameters(), self._backward(saved, g_pred)):
                    p.grad = g
                return
            params = self.parameters()
            if self._grads is None:
                self._grads = [torch.empty_like(p) for p in params]
            for (m0, m1), part in parts:
                pred, stats, saved = part._forward(x[m0:m1], True, eps, keep=True, shared=True)
                part._update_running(stats, momentum)
                g_pred = (pred - y[m0:m1]).mul_(part.smask).mul_(part._g_scale)
                for full, g in zip(self._grads, part._backward(saved, g_pred)):
                    full[m0:m1].copy_(g)
            for p, g in zip(params, self._grads):
                p.grad = g

    def _parts(self):
        """The bucket's models in slices of at most PART_BYTES of activations per level on a CPU (one slice elsewhere):
        [((m0, m1), a Bucket of models m0 to m1 - 1 whose parameters, masks and running statistics are views of this
        one's)]; the models are independent, so each slice's pass is the bucket's, restricted to its models."""
        if self._part_cache is None:
            M = len(self.specs)
            per_model = self.smask.shape[-1] * self.T * CHANNELS * 4
            k = max(1, min(M, PART_BYTES // per_model)) if self.X.device.type == "cpu" else M
            n = -(-M // k)
            k = -(-M // n)
            self._part_cache = [((m0, min(M, m0 + k)), self._part(m0, min(M, m0 + k))) for m0 in range(0, M, k)]
        return self._part_cache

    def _part(self, m0, m1):
        """Models m0 to m1 - 1 as a Bucket of views (Bucket._parts)."""
        if m0 == 0 and m1 == len(self.specs):
            return self
        with torch.no_grad():
            part = object.__new__(Bucket)
            part.specs, part.T, part.E, part.n_max = self.specs[m0:m1], self.T, self.E, self.n_max
            part.X, part.smask, part.tmask, part.count = self.X[m0:m1], self.smask[m0:m1], self.tmask[m0:m1], self.count[m0:m1]
            part._g_scale = self._g_scale[m0:m1]
            part._layout_cache, part._buffer_cache, part._param_views = {}, {}, None
            part.conv_w = [w[m0:m1] for w in self.conv_w]
            part.bn_w = [w[m0:m1] for w in self.bn_w]
            part.bn_b = [w[m0:m1] for w in self.bn_b]
            part.out_w, part.out_b = self.out_w[m0:m1], self.out_b[m0:m1]
            part._running = self._running[:, :, m0:m1]
            part.run_mean, part.run_var = list(part._running[0]), list(part._running[1])
            part._unbias = self._unbias[m0:m1]
            part._grads, part._part_cache = None, None
        return part

    def _update_running(self, stats, momentum):
        """running <- (1 - momentum) running + momentum * batch, unbiased variance (nn.BatchNorm1d), all blocks at once."""
        with torch.no_grad():
            batch = torch.stack(stats)  # 2 N_BLOCKS x M x G x 1 x C: means, then biased variances
            M, G = batch.shape[1:3]
            batch = batch.view(2, N_BLOCKS, M, G, CHANNELS).mean(dim=3)  # 2 x N_BLOCKS x M x C, over the groups
            batch[1].mul_(self._unbias)
            self._running.lerp_(batch, momentum)

    def _layout(self, G):
        """The row layout of a pass over G groups, position-major: row (g, t, s) of a model is position t of sample s
        of group g, so that a conv's neighbours are S rows apart and never in another sample. Tg positions per group (T,
        and for G > 1 a zero one after each group, which keeps groups apart), P = Tg S rows per group, R = G P rows per
        model. Returns Tg; real, M x 1 x P x 1 real rows; w, (M G) x 1 x P averaging weights of one statistic (real /
        count); pos_h, the positions of a buffer M x Q x C (Bucket._buffers; viewed as (M Q / S) x (S C), one row per
        position) where a conv's output gradient is zeroed: the padded positions whose taps reach a real row (a shorter
        model's position L - 1, the groups' zero positions); pos_z, the same positions of a conv output M x R x C; n,
        the values per statistic, M x 1 x 1 x 1, and -n."""
        if G not in self._layout_cache:
            M, S, T, dev = len(self.specs), self.smask.shape[-1], self.T, self.smask.device
            Tg = T + 1 if G > 1 else T
            real = F.pad(self.tmask[:, None, :, None] * self.smask[:, :, None, :], (0, 0, 0, Tg - T))  # M x 1 x Tg x S
            w = (real / self.count[:, None, None, None]).expand(M, G, Tg, S).reshape(M * G, 1, Tg * S)
            Q = (G * (T + 1) + 2) * S  # buffer rows: a zero position before and after, one between groups
            t = self.tmask.sum(dim=1).long()  # M: L - 1, a model's first padded position
            pos = torch.arange(G * (T + 1), device=dev)  # position in the buffer - 1: g (T + 1) + t
            zero = (pos[None] % (T + 1) == t[:, None]) & (t[:, None] < T) | (pos[None] % (T + 1) == T) & (G > 1)  # M x G(T+1)
            m, p = torch.nonzero(zero, as_tuple=True)  # the positions (m, position) to zero, all S samples of each
            pos_h, pos_z = m * (Q // S) + p + 1, m * (G * Tg) + p
            n = self.count.view(M, 1, 1, 1)
            # the positions around the R rows of a buffer (its zero padding), and those of the input's buffer (not
            # written by a pass), with the groups' zero positions
            Qp = Q // S
            border = torch.cat([torch.zeros(1, dtype=torch.long), torch.arange(1 + G * Tg, Qp)]).to(dev)
            border = (torch.arange(M, device=dev)[:, None] * Qp + border).flatten()
            sep = 1 + torch.arange(G, device=dev) * Tg + T  # the groups' zero positions (G > 1)
            border0 = torch.cat([border, (torch.arange(M, device=dev)[:, None] * Qp + sep).flatten()]) if G > 1 else border
            self._layout_cache[G] = Tg, real.view(M, 1, Tg * S, 1), w, pos_h, pos_z, n, -n, border, border0
        return self._layout_cache[G]

    def _buffers(self, G, keep, shared=False):
        """Activation buffers of a pass over G groups, with the views the pass reads them through (_Rows): h, the conv
        inputs, M x Q x c with Q = (G (T + 1) + 2) S rows, the R rows of Bucket._layout from row S on and zero rows
        around them (the convs' zero padding); z, conv outputs, and y, scratch, M x R x C each. keep (training): every
        level, for the backward; otherwise two levels alternate. shared: views of one scratch area that every bucket's
        passes reuse (_scratch), for a pass that ends before the next begins (Bucket.train_step, a pass without
        gradient); a smaller working set than each bucket's own buffers, so fewer cache and TLB misses, and a step
        allocates nothing; its rows around the R rows are zeroed at each pass (another bucket's pass wrote there).
        Otherwise (the autograd route, whose buffers wait for its backward) the bucket's own buffers, which serve
        every training pass while no other holds them (Bucket._backward releases them), zeroed once."""
        M, C, S, T, dev = len(self.specs), CHANNELS, self.smask.shape[-1], self.T, self.X.device
        Tg = self._layout(G)[0]
        Q, P = (G * (T + 1) + 2) * S, Tg * S
        n_levels, n_z = (N_BLOCKS, N_BLOCKS) if keep else (2, 1)
        sizes = [M * Q] + [M * Q * C] * n_levels + [M * G * P * C] * (n_z + 1)  # h0, h, z, y
        if shared:
            area = _scratch(sum(sizes), dev)
            buf = self._buffer_cache.get((G, keep))
            if buf is None or buf["area"] is not area:
                parts = area[: sum(sizes)].split(sizes)
                buf = self._buffer_cache[(G, keep)] = self._buffer_views(G, parts, n_levels, area)
            border, border0 = self._layout(G)[-2:]
            buf["h"][0].pos.index_fill_(0, border0, 0)
            for h in buf["h"][1:]:
                h.pos.index_fill_(0, border, 0)
            return buf
        cached = self._buffer_cache.get(G)
        if cached is not None and not cached["busy"]:
            cached["busy"] = keep
            return cached
        buf = self._buffer_views(G, [torch.zeros(n, device=dev) for n in sizes], n_levels, None)
        buf["busy"] = keep
        if keep and cached is None:
            self._buffer_cache[G] = buf
        return buf

    def _buffer_views(self, G, parts, n_levels, area):
        """Bucket._buffers' views of the flat tensors parts: h0, n_levels h levels, the z levels, y."""
        M, C, S, T = len(self.specs), CHANNELS, self.smask.shape[-1], self.T
        Tg = self._layout(G)[0]
        Q, P = (G * (T + 1) + 2) * S, Tg * S
        h = [_Rows(parts[0].view(M, Q, 1), S, G, P)] + [_Rows(t.view(M, Q, C), S, G, P) for t in parts[1 : 1 + n_levels]]
        z = [t.view(M, G * P, C) for t in parts[1 + n_levels : -1]]
        y = parts[-1].view(M, G * P, C)
        return {
            "h": h,
            "z": z,
            "z4": [t.view(M, G, P, C) for t in z],
            "z_pos": [t.view(-1, S * C) for t in z],  # one row per position (Bucket._layout's pos_z)
            "y4": y.view(M, G, P, C),
            "y3": y.view(M * G, P, C),
            "y5": y.view(M, G, Tg, S, C),
            "x_in": h[0].buf[:, S : S + G * (T + 1) * S].view(M, G, T + 1, S)[:, :, :T],  # M x G x T x S
            "area": area,
            "busy": False,
        }

    def _views(self):
        """Views of the parameters that a pass reads, made once per parameter tensor (Adam updates them in place): per
        conv its three taps' weights (M x c x C) and their transposes, per BatchNorm its weight and bias as M x 1 x 1 x C."""
        params = self.parameters()
        if self._param_views is None or any(a is not b for a, b in zip(self._param_views[0], params)):
            with torch.no_grad():
                M, C = len(self.specs), CHANNELS
                taps, taps_t = [], []
                for W in self.conv_w:
                    c = W.shape[1] // 3
                    taps.append([W[:, j * c : (j + 1) * c] for j in range(3)])
                    taps_t.append([t.transpose(1, 2) for t in taps[-1]])
                bn_w = [t.view(M, 1, 1, C) for t in self.bn_w]
                bn_b = [t.view(M, 1, 1, C) for t in self.bn_b]
                self._param_views = params, taps, taps_t, bn_w, bn_b
        return self._param_views[1:]

    def _forward(self, x, train, eps, keep, shared=False):
        """The blog network without autograd, x M x G x S x T -> predictions M x G x S. train: batch statistics (returned:
        N_BLOCKS means, then N_BLOCKS biased variances, M x G x 1 x C each), else the running ones. keep: also return
        what _backward needs (the buffers, the first conv's taps, the padded output weights, per block mean, 1 / std and
        BN scale)."""
        M, G, S, T = x.shape
        C = CHANNELS
        Tg, real, w, _, pos_z, n = self._layout(G)[:6]
        buf = self._buffers(G, keep, shared)
        taps_w, _, bn_w, bn_b = self._views()
        hs, zs, z4s, y4, y3 = buf["h"], buf["z"], buf["z4"], buf["y4"], buf["y3"]
        torch.mul(x.transpose(2, 3), real.view(M, 1, Tg, S)[:, :, :T], out=buf["x_in"])  # the input, zero at padding
        taps = torch.cat([hs[0].lo, hs[0].mid, hs[0].hi], dim=2)  # M x R x 3: the input at t - 1, t, t + 1
        means, variances, cache = [], [], []
        every_level = len(zs) == N_BLOCKS  # else two levels alternate
        for k in range(N_BLOCKS):
            i = k if every_level else 0
            z, z4 = zs[i], z4s[i]  # M x R x C, M x G x P x C
            h_in, h_out = (hs[k], hs[k + 1]) if every_level else (hs[2 - k % 2], hs[1 + k % 2])
            if k == 0:
                torch.bmm(taps, self.conv_w[0], out=z)  # one product of the three taps
            else:
                _conv3(h_in, taps_w[k], out=z)
            if train:
                # the mean over the real rows as a pairwise sum of z, zero elsewhere (nearly the rounding of
                # nn.BatchNorm1d's, which sums in float64): a channel whose variance is far below eps has outputs near
                # beta, and ReLU decisions that follow the mean's last bits
                buf["z_pos"][i].index_fill_(0, pos_z, 0)
                mean = z4.sum(dim=2, keepdim=True).div_(n)  # M x G x 1 x C
                # (z - mean)^2 in one pass; not E[z^2] - mean^2, which loses the variance in float32 where a batch's
                # mean is far from zero against its spread
                sq4, sq3 = (h_out.mid4, h_out.mid) if G == 1 else (y4, y3)  # scratch: h's buffer, written next
                torch.ops.aten.mse_loss.out(z4, mean.expand_as(z4), 0, out=sq4)
                var = torch.bmm(w, sq3).view(M, G, 1, C)  # biased variance, as BN normalises
            else:
                mean, var = self.run_mean[k].view(M, 1, 1, C), self.run_var[k].view(M, 1, 1, C)
            inv = (var + eps).rsqrt_()  # M x G x 1 x C
            scale = bn_w[k] * inv
            shift = torch.addcmul(bn_b[k], mean, scale, value=-1)  # beta - mean * scale
            torch.addcmul(shift, z4, scale, out=h_out.mid4).relu_().mul_(real)  # BN, ReLU, zero at padded entries
            means.append(mean)
            variances.append(var)
            if keep:
                cache.append((mean, inv, scale))
        # final Conv1d(32, 1, L-1): each row times out_w at its position, summed over positions and channels
        out_w = (self.out_w if Tg == T else F.pad(self.out_w, (0, 0, 0, Tg - T))).view(M, 1, Tg, 1, C)  # zero at the
        # groups' zero positions
        y5 = torch.mul(h_out.mid5, out_w, out=buf["y5"])
        pred = y5.sum(dim=(2, 4)).add_(self.out_b[:, None, None])
        return pred, means + variances, (buf, taps, out_w, cache) if keep else None

    def _backward(self, saved, g_pred):
        """Gradients of _forward's training-mode predictions w.r.t. parameters(), in that order, given g_pred (M x G x S)."""
        buf, taps, out_w, cache = saved
        M, G, S = g_pred.shape
        T = self.T
        _, _, _, pos_h, _, n, neg_n = self._layout(G)[:7]
        _, taps_t, _, _ = self._views()
        hs, zs, z4s, y5 = buf["h"], buf["z"], buf["z4"], buf["y5"]
        gp = g_pred.view(M, G, 1, S, 1)
        g_out_w = torch.mul(hs[-1].mid5, gp, out=y5).sum(dim=(1, 3))[:, :T].contiguous()
        g_out_b = g_pred.sum(dim=(1, 2))
        g = torch.mul(gp, out_w, out=y5).view(zs[0].shape)  # d loss / d h, M x R x C
        g_conv, g_bn_w, g_bn_b = [None] * N_BLOCKS, [None] * N_BLOCKS, [None] * N_BLOCKS
        for k in reversed(range(N_BLOCKS)):
            mean, inv, scale = cache[k]
            z, z4, h_out = zs[k], z4s[k], hs[k + 1]
            gy = torch.ops.aten.threshold_backward.grad_input(g, h_out.mid, 0, grad_input=g)  # h > 0: real and active
            gy4 = gy.view(z4.shape)
            g_sum = gy4.sum(dim=2, keepdim=True)  # M x G x 1 x C: d loss / d beta, per group
            gz4 = torch.mul(gy4, z4, out=h_out.mid4)  # the buffer of gz: h's, read for the last time above
            g_zc = torch.addcmul(gz4.sum(dim=2, keepdim=True), mean, g_sum, value=-1)  # sum gy (z - mean)
            g_zc_inv = g_zc * inv
            g_bn_b[k], g_bn_w[k] = _group_sum(g_sum), _group_sum(g_zc_inv)  # M x C each
            # BatchNorm backward: gz = scale * (gy - mean(gy) - (z - mean) inv^2 mean(gy (z - mean))), means over real
            # entries, = scale gy + a + b z. At padded rows gz is finite and reaches no parameter (the conv input is
            # zero around them, and the gradient of the block before is masked by its ReLU), except at the padded rows
            # next to a real one: zeroed.
            b = (g_zc_inv * inv).mul_(scale).div_(neg_n)  # M x G x 1 x C
            a = (scale * g_sum).div_(neg_n).addcmul_(b, mean, value=-1)
            torch.addcmul(a, z4, b, out=gz4).addcmul_(gy4, scale)
            h_out.pos.index_fill_(0, pos_h, 0)
            if k == 0:
                g_conv[0] = torch.bmm(taps.transpose(1, 2), h_out.mid)
            else:
                g_conv[k], g = _conv3_backward(hs[k], h_out, taps_t[k], out=z)  # z: read for the last time
        buf["busy"] = False
        return g_conv + g_bn_w + g_bn_b + [g_out_w, g_out_b]

    def mse(self, pred, y):
        """Per (model, group) MSE over real samples, M x G (F.mse_loss over one model's batch)."""
        return (((pred - y) ** 2) * self.smask).sum(dim=2) / self.smask.sum(dim=2)


_SCRATCH = {}  # (device, dtype) -> the scratch area of Bucket._buffers(shared=True)


def _scratch(numel, device):
    """A tensor of the default dtype of at least numel elements on device, the same for every pass while large enough."""
    key = (device, torch.get_default_dtype())
    area = _SCRATCH.get(key)
    if area is None or area.numel() < numel:
        area = _SCRATCH[key] = torch.empty(numel, device=device)
    return area


def _group_sum(t):
    """M x G x 1 x C -> M x C, the sum over groups (a view for one group)."""
    return t.view(t.shape[0], -1) if t.shape[1] == 1 else t.sum(dim=(1, 2))


class _Rows:
    """A buffer of rows laid out as in Bucket._layout (M x Q x c: rows S to S + R, zero rows around them) and the views
    a conv reads it through: lo, mid, hi, the rows one position before, at and after each of the R rows (M x R x c),
    their transposes, and mid4 and mid5 = mid as M x G x P x c and M x G x Tg x S x c; pos, the buffer as one row per
    position."""

    def __init__(self, buf, S, G, P):
        M, _, c = buf.shape
        R = G * P
        self.buf, self.lo, self.mid, self.hi = buf, buf[:, :R], buf[:, S : S + R], buf[:, 2 * S : 2 * S + R]
        self.taps_t = [t.transpose(1, 2) for t in (self.lo, self.mid, self.hi)]  # M x c x R each
        self.mid4, self.mid5 = self.mid.view(M, G, P, c), self.mid.view(M, G, P // S, S, c)
        self.pos = buf.view(-1, S * c)  # one row per position (Bucket._layout's pos_h)


def _conv3(h, W, out):
    """Conv1d(c, C, 3, 1, 1) without bias, one per model, over rows laid out position-major (Bucket._layout): h, _Rows
    of the input; W, the three taps' weights (M x c x C each; tap j of a row reads the row j - 1 positions away) ->
    out, M x R x C. Three products of a third of the depth, each accumulated into the whole, contiguous output (one
    batched library call each)."""
    torch.bmm(h.mid, W[1], out=out)
    out.baddbmm_(h.lo, W[0])
    return out.baddbmm_(h.hi, W[2])


def _conv3_backward(h, gz, W_t, out):
    """Gradients of _conv3 w.r.t. its weight (M x 3c x C) and its input rows (M x R x c, written into out), given h, _Rows
    of the input, gz, _Rows of the output gradient (zero around its rows and at the padded rows whose taps reach a real
    row), and W_t, the taps' weights transposed (M x C x c each)."""
    g_w = torch.cat([torch.bmm(h_j, gz.mid) for h_j in h.taps_t], dim=1)  # tap j: the input rows j - 1 positions away
    torch.bmm(gz.mid, W_t[1], out=out)
    out.baddbmm_(gz.hi, W_t[0])  # a row feeds tap 0 of the row a position after it
    return g_w, out.baddbmm_(gz.lo, W_t[2])  # and tap 2 of the row a position before it


class _TrainPass(torch.autograd.Function):
    """A bucket's training-mode forward as one autograd node whose backward is Bucket._backward. Outputs: predictions
    M x G x S and the batch statistics (without gradient)."""

    @staticmethod
    def forward(ctx, bucket, x, eps, *params):
        pred, stats, saved = bucket._forward(x, True, eps, keep=True)
        ctx.bucket, ctx.saved = bucket, saved
        ctx.mark_non_differentiable(*stats)
        return (pred, *stats)

    @staticmethod
    def backward(ctx, g_pred, *_):
        grads = ctx.bucket._backward(ctx.saved, g_pred.contiguous())
        ctx.saved = None
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
    sum of its models' losses at once (Bucket.train_step), while its activations are still in cache; the same gradients
    as one backward of the loss summed over all buckets (the buckets share no parameter). Then one Adam step."""
    for b in buckets:
        x, y = b.draw(1, generator)  # M x 1 x S x T, M x 1 x S
        b.train_step(x, y)
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
