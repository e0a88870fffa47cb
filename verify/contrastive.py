"""Toy contrastive-learning setup on sklearn digits, with simulated devices for batch norm.

Shared by the SOTA-364 (batch-norm leak) verifiers and the SimCLR claims. Everything is
"replicated": a leading dimension R holds R independent models (one per seed) trained in lock-step,
so several seeds cost about as much as one on a CPU (tiny models are Python-overhead bound).
Because every replica has its own parameters and the loss is a sum over replicas, the replicas'
gradients and Adam updates are exactly independent.

Shapes: R = replicas (seeds), N = batch, K = simulated devices, C = channels, Q = queue length.

Main pieces
- `load_digits_split`: digits (1797 x 8 x 8, 10 classes), stratified train / held-out split.
- `augment`: random shift (pad + crop) and Gaussian noise, one draw per image per replica.
- `DeviceNorm`: batchnorm ("bn"), layernorm ("ln"), groupnorm ("gn") or none; bn in train mode
  splits the batch into `devices` sub-batches, each normalised with its own statistics
  (per-device BN, MoCo §3.3); `devices=1` is global / aggregated BN (SimCLR §2.2).
- `Encoder`: MLP 64 -> H -> H -> D with a `DeviceNorm` after each hidden linear layer.
- `shuffled_forward`: MoCo §3.3 shuffle BN (permute, encode, un-permute) for the key encoder.
- `moco_logits`, `nt_xent`: InfoNCE with a queue (MoCo eq. 1) and NT-Xent (SimCLR eq. 1).
- `knn_accuracy` (MoCo Appendix A / Wu et al. 2018 weighted kNN, cosine) and `linear_probe_accuracy`.
- `train_moco`: momentum-contrast training loop with per-device / shuffle / global BN and a kNN
  monitor over training; `train_simclr`: NT-Xent training with per-device or global BN.
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

NORMS = ("bn", "ln", "gn", "none")
BN_MODES = ("per_device", "shuffle", "global")  # MoCo §3.3 no fix / MoCo fix / SimCLR §2.2 fix


# ----------------------------------------------------------------------------------------- data
def load_digits_split(n_heldout=597, seed=0, device="cpu"):
    """sklearn digits as float images in [0, 1]; a stratified held-out split of `n_heldout` images."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    x = digits.images.astype(np.float32) / 16.0  # x: 1797 x 8 x 8, pixel values 0..16 -> [0, 1]
    y = digits.target.astype(np.int64)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=n_heldout, random_state=seed, stratify=y)
    t = lambda a: torch.as_tensor(a, device=device)
    return {"x_train": t(x_tr), "y_train": t(y_tr), "x_test": t(x_te), "y_test": t(y_te)}


def augment(x, generator, max_shift=1, noise=0.1):
    """Two-view augmentation: random translation by up to `max_shift` pixels (zero-pad + crop) and
    additive Gaussian noise. x: ... x 8 x 8 -> same shape, flattened to ... x 64 by the caller."""
    lead, (h, w) = x.shape[:-2], x.shape[-2:]
    flat = x.reshape(-1, h, w)  # flat: M x 8 x 8
    m = flat.shape[0]
    padded = F.pad(flat, (max_shift, max_shift, max_shift, max_shift))  # padded: M x 10 x 10
    off = torch.randint(0, 2 * max_shift + 1, (m, 2), generator=generator, device="cpu").to(x.device)
    rows = off[:, 0:1] + torch.arange(h, device=x.device)  # rows: M x 8
    cols = off[:, 1:2] + torch.arange(w, device=x.device)  # cols: M x 8
    idx = torch.arange(m, device=x.device)[:, None, None]
    crop = padded[idx, rows[:, :, None], cols[:, None, :]]  # crop: M x 8 x 8
    eps = torch.randn(crop.shape, generator=generator, device="cpu").to(x.device)
    return (crop + noise * eps).reshape(*lead, h, w)


def sample_batch(x, n_replicas, batch, generator):
    """Independent random batch per replica. Returns indices R x N (without replacement)."""
    n = x.shape[0]
    keys = torch.rand(n_replicas, n, generator=generator, device="cpu")
    return keys.argsort(dim=1)[:, :batch].to(x.device)  # idx: R x N


# --------------------------------------------------------------------------------------- layers
class RLinear(nn.Module):
    """R independent linear layers applied to R x N x in (nn.Linear init per replica)."""

    def __init__(self, n_replicas, d_in, d_out):
        super().__init__()
        bound = 1.0 / math.sqrt(d_in)
        self.weight = nn.Parameter(torch.empty(n_replicas, d_in, d_out).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.empty(n_replicas, 1, d_out).uniform_(-bound, bound))

    def forward(self, x):  # x: R x N x in
        return torch.baddbmm(self.bias, x, self.weight)  # R x N x out


class DeviceNorm(nn.Module):
    """Pluggable normalisation over R x N x C activations.

    kind="bn": batch norm. In train mode the N axis is split into `self.devices` contiguous
    sub-batches (simulated GPUs), each normalised with its own mean/variance (per-device BN, the
    default of DistributedDataParallel, MoCo §3.3); devices=1 gives global BN (SimCLR §2.2). Running
    statistics (mean of the per-device statistics) are used in eval mode, which removes every
    cross-sample dependence. kind="ln": layer norm over C; kind="gn": group norm over C/groups
    channels of one sample; kind="none": identity. ln/gn/none never mix samples.
    """

    def __init__(self, n_replicas, channels, kind="bn", devices=1, groups=8, eps=1e-5, momentum=0.1):
        super().__init__()
        assert kind in NORMS, kind
        self.kind, self.devices, self.groups, self.eps, self.momentum = kind, devices, groups, eps, momentum
        self.weight = nn.Parameter(torch.ones(n_replicas, 1, channels))
        self.bias = nn.Parameter(torch.zeros(n_replicas, 1, channels))
        self.register_buffer("running_mean", torch.zeros(n_replicas, 1, channels))
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
            mu = d.mean(2, keepdim=True)  # MoCo §3.3: each device normalises with its own sub-batch stats
            var = d.var(2, unbiased=False, keepdim=True)
            y = ((d - mu) / torch.sqrt(var + self.eps)).reshape(r, n, c)
            with torch.no_grad():  # running stats: mean over devices of the per-device stats
                m = n // k
                unbiased = var * m / max(m - 1, 1)
                self.running_mean.lerp_(mu.mean(1), self.momentum)
                self.running_var.lerp_(unbiased.mean(1), self.momentum)
        return y * self.weight + self.bias


class Encoder(nn.Module):
    """MLP 64 -> hidden -> hidden -> out_dim with a DeviceNorm after each hidden linear layer.
    forward(x: R x N x 64) -> R x N x out_dim (not L2-normalised)."""

    def __init__(self, n_replicas, norm="bn", devices=1, hidden=128, out_dim=32, d_in=64):
        super().__init__()
        self.fc1, self.n1 = RLinear(n_replicas, d_in, hidden), DeviceNorm(n_replicas, hidden, norm, devices)
        self.fc2, self.n2 = RLinear(n_replicas, hidden, hidden), DeviceNorm(n_replicas, hidden, norm, devices)
        self.fc3 = RLinear(n_replicas, hidden, out_dim)

    def set_devices(self, devices):
        for mod in (self.n1, self.n2):
            mod.devices = devices
        return self

    def forward(self, x):  # x: R x N x 64
        h = F.relu(self.n1(self.fc1(x)))  # h: R x N x H
        h = F.relu(self.n2(self.fc2(h)))  # h: R x N x H
        return self.fc3(h)  # R x N x D


def shuffled_forward(encoder, x, generator):
    """MoCo §3.3 shuffle BN: permute the batch across devices, encode, restore the order.
    x: R x N x 64 -> R x N x D; a fresh permutation per replica."""
    r, n = x.shape[:2]
    perm = torch.rand(r, n, generator=generator, device="cpu").argsort(1).to(x.device)  # perm: R x N
    inv = perm.argsort(1)  # inv: R x N
    rows = torch.arange(r, device=x.device)[:, None]
    out = encoder(x[rows, perm])  # encoded in shuffled order: R x N x D
    return out[rows, inv]  # back to the query order


@torch.no_grad()
def momentum_update(q_enc, k_enc, m):
    """MoCo eq. 2: theta_k <- m theta_k + (1 - m) theta_q. Buffers (BN running stats) are copied."""
    for pq, pk in zip(q_enc.parameters(), k_enc.parameters()):
        pk.mul_(m).add_(pq.detach(), alpha=1 - m)
    for bq, bk in zip(q_enc.buffers(), k_enc.buffers()):
        bk.copy_(bq)


# --------------------------------------------------------------------------------------- losses
def moco_logits(q, k, queue, tau):
    """MoCo eq. 1 (InfoNCE): q, k: R x N x D (L2-normalised), queue: R x Q x D.
    Returns logits R x N x (1+Q); the positive is index 0."""
    l_pos = (q * k).sum(-1, keepdim=True)  # l_pos: R x N x 1
    l_neg = torch.bmm(q, queue.transpose(1, 2))  # l_neg: R x N x Q
    return torch.cat([l_pos, l_neg], dim=-1) / tau  # R x N x (1+Q)


def nt_xent(z1, z2, tau):
    """SimCLR eq. 1 (NT-Xent) over 2N views: z1, z2: R x N x D (L2-normalised).
    Returns (loss per replica R, mean over the 2N anchors; top-1 accuracy per replica R)."""
    r, n, _ = z1.shape
    z = torch.cat([z1, z2], dim=1)  # z: R x 2N x D
    sim = torch.bmm(z, z.transpose(1, 2)) / tau  # sim: R x 2N x 2N
    eye = torch.eye(2 * n, dtype=torch.bool, device=z.device)
    sim = sim.masked_fill(eye, float("-inf"))  # exclude k == i (SimCLR eq. 1 indicator)
    target = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(z.device)  # positive of i
    loss = F.cross_entropy(sim.reshape(r * 2 * n, 2 * n), target.repeat(r), reduction="none")
    acc = (sim.argmax(-1) == target).float().mean(1)  # acc: R
    return loss.reshape(r, 2 * n).mean(1), acc  # R, R


# ----------------------------------------------------------------------------------- monitors
@torch.no_grad()
def embed(encoder, x):
    """Eval-mode (running BN stats, no cross-sample coupling) L2-normalised features. x: R x M x 64."""
    was = encoder.training
    encoder.eval()
    f = F.normalize(encoder(x), dim=-1)  # f: R x M x D
    encoder.train(was)
    return f


@torch.no_grad()
def knn_accuracy(f_train, y_train, f_test, y_test, k=20, t=0.1, n_classes=10):
    """Weighted kNN on cosine similarity (Wu et al. 2018; MoCo Appendix A.1's monitor).
    f_*: R x M x D L2-normalised; y_*: M. Returns accuracy per replica, R."""
    sim = torch.bmm(f_test, f_train.transpose(1, 2))  # sim: R x Mte x Mtr
    w, idx = sim.topk(k, dim=-1)  # R x Mte x k
    votes = torch.zeros(*idx.shape[:2], n_classes, device=sim.device)  # votes: R x Mte x classes
    votes.scatter_add_(-1, y_train[idx], (w / t).exp())
    return (votes.argmax(-1) == y_test).float().mean(1)  # R


def linear_probe_accuracy(f_train, y_train, f_test, y_test, C=1.0):
    """Logistic-regression probe per replica (scikit-learn). f_*: R x M x D. Returns a numpy array R."""
    from sklearn.linear_model import LogisticRegression

    accs = []
    for r in range(f_train.shape[0]):
        clf = LogisticRegression(C=C, max_iter=500)
        clf.fit(f_train[r].cpu().numpy(), y_train.cpu().numpy())
        accs.append(clf.score(f_test[r].cpu().numpy(), y_test.cpu().numpy()))
    return np.array(accs)


def flat(x):
    """... x 8 x 8 -> ... x 64."""
    return x.reshape(*x.shape[:-2], -1)


# ------------------------------------------------------------------------------------ training
def train_moco(data, n_replicas=5, norm="bn", bn_mode="per_device", devices=8, batch=64, steps=300,
               queue=256, tau=0.2, m=0.99, lr=3e-3, hidden=128, out_dim=32, monitor_every=0, seed=0,
               device="cpu", max_shift=1, noise=0.1):
    """MoCo (He et al. 2019, Algorithm 1) on digits with R replicas.

    bn_mode (only for norm="bn"): "per_device" = both encoders see the same device split, so a
    query and its positive key are normalised on the same simulated device (no fix); "shuffle" =
    MoCo §3.3 shuffle BN for the key encoder; "global" = SimCLR §2.2 global BN (devices=1).
    Returns (q_enc, k_enc, queue_tensor, history); history has per-step `loss` (R) and
    `pretext_acc` (R, train-mode top-1 of the positive among 1+Q), and if monitor_every > 0,
    `knn_step` and `knn` (R) from eval-mode features (kNN monitor on held-out data).
    """
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    dev_count = 1 if (norm == "bn" and bn_mode == "global") else devices
    q_enc = Encoder(n_replicas, norm, dev_count, hidden, out_dim).to(device)
    k_enc = Encoder(n_replicas, norm, dev_count, hidden, out_dim).to(device)
    k_enc.load_state_dict(q_enc.state_dict())
    for p in k_enc.parameters():
        p.requires_grad_(False)
    opt = torch.optim.Adam(q_enc.parameters(), lr=lr)
    qu = F.normalize(torch.randn(n_replicas, queue, out_dim, generator=g).to(device), dim=-1)  # qu: R x Q x D
    x_tr = data["x_train"]
    hist = {"loss": [], "pretext_acc": [], "knn_step": [], "knn": []}
    ptr = 0
    for step in range(steps):
        idx = sample_batch(x_tr, n_replicas, batch, g)  # idx: R x N
        imgs = x_tr[idx]  # imgs: R x N x 8 x 8
        xq = flat(augment(imgs, g, max_shift, noise))  # xq: R x N x 64
        xk = flat(augment(imgs, g, max_shift, noise))  # xk: R x N x 64
        q = F.normalize(q_enc(xq), dim=-1)  # q: R x N x D
        with torch.no_grad():
            momentum_update(q_enc, k_enc, m)
            if norm == "bn" and bn_mode == "shuffle":
                k = shuffled_forward(k_enc, xk, g)  # MoCo §3.3: keys on other devices than queries
            else:
                k = k_enc(xk)  # per_device: same device split as the queries (the leak)
            k = F.normalize(k, dim=-1)  # k: R x N x D
        logits = moco_logits(q, k, qu, tau)  # logits: R x N x (1+Q)
        loss = F.cross_entropy(logits.reshape(-1, 1 + queue), torch.zeros(n_replicas * batch, dtype=torch.long,
                                                                            device=device), reduction="none")
        loss_r = loss.reshape(n_replicas, batch).mean(1)  # loss_r: R
        opt.zero_grad(set_to_none=True)
        loss_r.sum().backward()
        opt.step()
        with torch.no_grad():
            hist["loss"].append(loss_r.detach().cpu())
            hist["pretext_acc"].append((logits.argmax(-1) == 0).float().mean(1).cpu())
            pos = (ptr + torch.arange(batch, device=device)) % queue
            qu[:, pos] = k  # MoCo Algorithm 1: enqueue the current keys, dequeue the oldest
            ptr = (ptr + batch) % queue
        if monitor_every and ((step + 1) % monitor_every == 0 or step == 0):
            _knn_monitor(hist, q_enc, data, step, n_replicas)
    return q_enc, k_enc, qu, _stack(hist)


@torch.no_grad()
def recalibrate_bn(encoder, data, batch=64, n_batches=16, seed=321, max_shift=1, noise=0.1):
    """Re-estimate BN running statistics of a frozen encoder ("precise BN"): the plain average of the
    per-device statistics over `n_batches` augmented training batches, so that eval-mode outputs
    are a clean, decoupled version of the training-time computation (no lag from the running
    average of a moving network). No-op for ln/gn/none."""
    bns = [m for m in encoder.modules() if isinstance(m, DeviceNorm) and m.kind == "bn"]
    if not bns:
        return encoder
    g = torch.Generator().manual_seed(seed)
    r = encoder.fc1.weight.shape[0]
    sums = [(torch.zeros_like(m.running_mean), torch.zeros_like(m.running_var)) for m in bns]
    was = encoder.training
    encoder.train()
    for _ in range(n_batches):
        imgs = data["x_train"][sample_batch(data["x_train"], r, batch, g)]  # imgs: R x N x 8 x 8
        for m in bns:
            m.running_mean.zero_(), m.running_var.zero_()
            m.momentum = 1.0  # running stats := this batch's (mean over devices) statistics
        encoder(flat(augment(imgs, g, max_shift, noise)))
        for (sm, sv), m in zip(sums, bns):
            sm += m.running_mean / n_batches
            sv += m.running_var / n_batches
    for (sm, sv), m in zip(sums, bns):
        m.running_mean.copy_(sm), m.running_var.copy_(sv)
        m.momentum = 0.1
    encoder.train(was)
    return encoder


@torch.no_grad()
def moco_pretext_accuracy(q_enc, k_enc, data, queue=256, batch=64, n_batches=8, stats="train", seed=123,
                          max_shift=1, noise=0.1, tau=0.2):
    """Pretext top-1 (positive among 1+Q keys) of a trained MoCo pair on fresh batches, with the
    negatives (a fresh queue of keys from the preceding evaluation batches) encoded in the SAME
    statistics mode as the positive: `stats="train"` = the device split of training (q and k share
    a device), `"shuffle"` = keys shuffled across devices (MoCo §3.3), `"eval"` = running statistics
    (no cross-sample dependence at all). Returns accuracy per replica (R)."""
    g = torch.Generator().manual_seed(seed)
    r = q_enc.fc1.weight.shape[0]
    saved = [(b, b.clone()) for enc in (q_enc, k_enc) for b in enc.buffers()]  # keep running stats intact
    q_enc.train(stats != "eval")
    k_enc.train(stats != "eval")
    n_warm = -(-queue // batch)  # batches needed to fill the queue
    keys, accs = [], []
    for i in range(n_warm + n_batches):
        imgs = data["x_train"][sample_batch(data["x_train"], r, batch, g)]  # imgs: R x N x 8 x 8
        xq, xk = flat(augment(imgs, g, max_shift, noise)), flat(augment(imgs, g, max_shift, noise))
        k = F.normalize(shuffled_forward(k_enc, xk, g) if stats == "shuffle" else k_enc(xk), dim=-1)  # R x N x D
        if i >= n_warm:
            q = F.normalize(q_enc(xq), dim=-1)  # q: R x N x D
            qu = torch.cat(keys[-n_warm:], dim=1)[:, -queue:]  # qu: R x Q x D, keys of earlier batches
            logits = moco_logits(q, k, qu, tau)  # R x N x (1+Q)
            accs.append((logits.argmax(-1) == 0).float().mean(1))
        keys.append(k)
    for b, v in saved:
        b.copy_(v)
    q_enc.train()
    k_enc.train()
    return torch.stack(accs).mean(0)  # R


def train_simclr(data, n_replicas=5, norm="bn", devices=8, batch=64, steps=300, tau=0.2, lr=3e-3, hidden=128,
                 out_dim=32, monitor_every=0, seed=0, device="cpu", max_shift=1, noise=0.1):
    """SimCLR (Chen et al. 2020, Algorithm 1, NT-Xent eq. 1) on digits with R replicas. Each simulated
    device holds both views of its N/K images (view 1 then view 2 of the same images), as in
    data-parallel SimCLR; devices=1 with norm="bn" is global BN (SimCLR §2.2).
    Returns (encoder, history) with per-step `loss` (R) and `pretext_acc` (R), optional `knn`."""
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    enc = Encoder(n_replicas, norm, devices, hidden, out_dim).to(device)
    opt = torch.optim.Adam(enc.parameters(), lr=lr)
    x_tr = data["x_train"]
    hist = {"loss": [], "pretext_acc": [], "knn_step": [], "knn": []}
    n_loc = batch // devices
    for step in range(steps):
        imgs = x_tr[sample_batch(x_tr, n_replicas, batch, g)]  # imgs: R x N x 8 x 8
        v1, v2 = flat(augment(imgs, g, max_shift, noise)), flat(augment(imgs, g, max_shift, noise))  # R x N x 64
        # device d holds [view1 of its images, view2 of its images]: R x K x 2N/K x 64
        both = torch.cat([v1.reshape(n_replicas, devices, n_loc, -1), v2.reshape(n_replicas, devices, n_loc, -1)], 2)
        z = F.normalize(enc(both.reshape(n_replicas, 2 * batch, -1)), dim=-1).reshape(n_replicas, devices, 2, n_loc, -1)
        z1, z2 = z[:, :, 0].reshape(n_replicas, batch, -1), z[:, :, 1].reshape(n_replicas, batch, -1)  # R x N x D
        loss, acc = nt_xent(z1, z2, tau)  # R, R
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()  # replicas are independent: the sum keeps their gradients separate
        opt.step()
        hist["loss"].append(loss.detach().cpu())
        hist["pretext_acc"].append(acc.cpu())
        if monitor_every and ((step + 1) % monitor_every == 0 or step == 0):
            _knn_monitor(hist, enc, data, step, n_replicas)
    return enc, _stack(hist)


def _knn_monitor(hist, enc, data, step, n_replicas):
    """MoCo Appendix: a kNN classifier on held-out features, appended to the training history."""
    ftr = embed(enc, flat(data["x_train"]).expand(n_replicas, -1, -1))  # R x M x D
    fte = embed(enc, flat(data["x_test"]).expand(n_replicas, -1, -1))
    hist["knn_step"].append(step + 1)
    hist["knn"].append(knn_accuracy(ftr, data["y_train"], fte, data["y_test"]).cpu())


def _stack(hist):
    """The per-step lists of a training history as T x R tensors."""
    for key in ("loss", "pretext_acc", "knn"):
        hist[key] = torch.stack(hist[key]) if hist[key] else torch.empty(0)
    return hist
