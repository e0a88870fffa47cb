"""BYOL and SimSiam at toy scale on real MNIST, with four normalisations of every hidden layer, trained once for the
checks of SOTA-380 to SOTA-384 (the dispute over batch statistics in BYOL).

Models (one per row, every one trained from the same initial seed on the same batches and views):
  byol_bn, byol_none, byol_gnws, byol_ln: BYOL (Grill et al. 2020, Abstract: an online network predicts a
      slow-moving-average target network's projection of the other view) with batch norm, no normalisation, group
      norm over weight-standardised linear layers (Richemond et al. 2020, Abstract), or layer norm after every hidden
      linear layer of encoder, projector and predictor;
  byol_bnstop: BYOL with batch norm whose batch mean and variance are cut from the gradient: the forward pass
      normalises with the batch's statistics as BN does, but no gradient flows from one sample to another (the
      cross-sample term that Fetterman & Albrecht and Tian et al. read as an implicit contrastive term is removed);
  simsiam_bn, simsiam_nostop: SimSiam (Chen & He 2020, Abstract) with batch norm, with and without the stop-gradient.
Each is also measured at its initialisation (the untrained network), so "no better than random" is read against the
same network before training.

Shapes: R = replicas (one per seed, trained in lock-step), N = batch, M = probe images, D = feature dim.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from verify.layers import DeviceNorm, RLinear
from verify.mnist_sample import mnist_5k_split
from verify.probes import frozen_features, linear_probe

MODELS = ("byol_bn", "byol_none", "byol_gnws", "byol_ln", "byol_bnstop", "simsiam_bn", "simsiam_nostop")
STEPS, BATCH, LR, EMA = 300, 128, 1e-3, 0.99  # EMA: BYOL §3.2's tau, 0.996 at ImageNet scale; 0.99 for 300 steps
D_IN, HIDDEN, REP, PROJ = 196, 128, 64, 32  # 14 x 14 inputs; representation 64-d, projections 32-d


class WSLinear(RLinear):
    """RLinear with weight standardisation (Qiao et al. 2019; Richemond et al. 2020 pair it with group norm): each
    output unit's weights have zero mean and unit variance over its inputs."""

    def forward(self, x):  # x: R x N x in
        w = self.weight  # R x in x out
        w = (w - w.mean(1, keepdim=True)) / (w.std(1, keepdim=True) + 1e-5)
        return torch.baddbmm(self.bias, x, w / math.sqrt(w.shape[1]))  # R x N x out, variance kept as at init


class ProbedNorm(DeviceNorm):
    """DeviceNorm whose train-mode batch statistics can be cut from the gradient: `cut = "all"` detaches the batch
    mean and variance (no gradient between samples), `cut = "var"` only the variance (the mean's path stays)."""

    cut = None

    def forward(self, h):  # h: R x N x C
        if self.kind != "bn" or not self.training or self.cut is None:
            return super().forward(h)
        mu, var = h.mean(1, keepdim=True), h.var(1, unbiased=False, keepdim=True)  # R x 1 x C each
        with torch.no_grad():  # running statistics as DeviceNorm keeps them (one device)
            n = h.shape[1]
            self.running_mean.lerp_(mu, self.momentum)
            self.running_var.lerp_(var * n / max(n - 1, 1), self.momentum)
        var = var.detach()
        mu = mu.detach() if self.cut == "all" else mu
        return (h - mu) / torch.sqrt(var + self.eps) * self.weight + self.bias


def mlp(r, sizes, norm, last_norm=False):
    """Linear -> norm -> ReLU for every layer but the last (and for it too with last_norm)."""
    layers = []
    for k, (d_in, d_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        normed = k < len(sizes) - 2 or last_norm
        layers.append(WSLinear(r, d_in, d_out) if norm == "gnws" and normed else RLinear(r, d_in, d_out))
        if normed:
            layers += [ProbedNorm(r, d_out, "gn" if norm == "gnws" else norm, groups=8), nn.ReLU()]
    return nn.Sequential(*layers)


class Siamese(nn.Module):
    """Encoder (the representation), projector and predictor, as in BYOL and SimSiam, all MLPs."""

    def __init__(self, r, norm):
        super().__init__()
        self.encoder = mlp(r, (D_IN, HIDDEN, REP), norm, last_norm=True)  # like a ResNet's last BN + ReLU
        self.projector = mlp(r, (REP, HIDDEN, PROJ), norm)
        self.predictor = mlp(r, (PROJ, HIDDEN, PROJ), norm)


def augment(x, generator):
    """A random affine view (rotation +-15 deg, scale 0.8-1.1, shift +-15 %) of 14 x 14 images, flattened.
    x: B x 14 x 14 -> B x 196."""
    b = x.shape[0]
    u = torch.rand(b, 4, generator=generator).to(x.device)  # u: B x 4, uniform draws
    angle, scale = (u[:, 0] - 0.5) * math.radians(30), 0.8 + 0.3 * u[:, 1]
    cos, sin = torch.cos(angle) / scale, torch.sin(angle) / scale
    tx, ty = (u[:, 2] - 0.5) * 0.3, (u[:, 3] - 0.5) * 0.3
    theta = torch.stack([torch.stack([cos, -sin, tx], 1), torch.stack([sin, cos, ty], 1)], 1)  # theta: B x 2 x 3
    grid = F.affine_grid(theta, (b, 1, 14, 14), align_corners=False)  # grid: B x 14 x 14 x 2
    return F.grid_sample(x.unsqueeze(1), grid, align_corners=False).flatten(1)  # B x 196


def pooled(x):
    """Images pooled to 14 x 14: M x 28 x 28 -> M x 14 x 14."""
    return F.avg_pool2d(x.unsqueeze(1), 2).squeeze(1)


def cosine(a, b):
    """Cosine similarity per sample: R x N x D, R x N x D -> R x N."""
    return F.cosine_similarity(a, b, dim=-1)


def views(data, r, generator):
    """Two augmented views of an independent batch per replica: each R x N x 196."""
    x = data["x_train"]
    idx = torch.rand(r, x.shape[0], generator=generator).argsort(1)[:, :BATCH].to(x.device)  # idx: R x N
    imgs = x[idx].flatten(0, 1)  # imgs: R*N x 14 x 14
    return augment(imgs, generator).view(r, BATCH, -1), augment(imgs, generator).view(r, BATCH, -1)


def byol_loss(online, target, v1, v2):
    """BYOL's symmetrised loss 2 - 2 cos(q(z), z'_target), summed over replicas (their gradients stay apart)."""
    p1, p2 = (online.predictor(online.projector(online.encoder(v))) for v in (v1, v2))  # R x N x PROJ each
    with torch.no_grad():
        t1, t2 = (target.projector(target.encoder(v)) for v in (v1, v2))  # target: no gradient (BYOL §3.1)
    return ((2 - 2 * cosine(p1, t2)) + (2 - 2 * cosine(p2, t1))).mean(1).sum()


def simsiam_loss(net, v1, v2, stop=True):
    """SimSiam's D(p1, z2)/2 + D(p2, z1)/2 with D the negative cosine; `stop`: z detached (Algorithm 1)."""
    z1, z2 = net.projector(net.encoder(v1)), net.projector(net.encoder(v2))  # R x N x PROJ
    p1, p2 = net.predictor(z1), net.predictor(z2)
    if stop:
        z1, z2 = z1.detach(), z2.detach()
    return (-cosine(p1, z2) / 2 - cosine(p2, z1) / 2).mean(1).sum()


def measure(net, data):
    """Linear-probe accuracy of the frozen representation (ridge on one-hot labels, 4000 train / 1000 test images: the
    linear evaluation protocol in closed form), the std of the l2-normalised projection times sqrt(d) (SimSiam
    §4.1's collapse measure, scaled so that 1 is a spread-out output and 0 a constant), and the effective rank
    (Roy & Vetterli 2007) of the centred representation. Each a list over replicas."""
    r = net.encoder[0].weight.shape[0]
    tr, te = data["x_train"].flatten(1), data["x_test"].flatten(1)  # M x 196
    tr, te = tr.unsqueeze(0).expand(r, -1, -1), te.unsqueeze(0).expand(r, -1, -1)  # R x M x 196, shared images
    h_tr = frozen_features(net.encoder, tr)  # R x Mtr x REP
    h_te = frozen_features(net.encoder, te)  # R x Mte x REP
    lin = linear_probe(h_tr, data["y_train"], h_te, data["y_test"])  # R
    z = F.normalize(frozen_features(nn.Sequential(net.encoder, net.projector), te), dim=-1)
    zstd = z.std(1).mean(-1) * math.sqrt(PROJ)  # R
    s = torch.linalg.svdvals(h_te - h_te.mean(1, keepdim=True))  # s: R x min(M, REP)
    p = s / s.sum(-1, keepdim=True)
    erank = torch.exp(-(p * torch.log(p.clamp_min(1e-12))).sum(-1))  # R
    return {"lin": lin.tolist(), "zstd": zstd.tolist(), "erank": erank.tolist()}


def train_one(model, data, seeds, device, steps=STEPS):
    """Train one of MODELS on every seed (one replica each) for `steps` steps and return its measurements before and
    after, and the trained online and target networks."""
    method, norm = model.split("_")[0], {"nostop": "bn", "bnstop": "bn"}.get(model.split("_")[1], model.split("_")[1])
    torch.manual_seed(seeds[0])  # the same initial weights for every model of a normalisation
    net = Siamese(len(seeds), norm).to(device)
    target = Siamese(len(seeds), norm).to(device)
    target.load_state_dict(net.state_dict())
    target.requires_grad_(False)
    before = measure(net, data)
    for m in net.modules():
        if isinstance(m, ProbedNorm) and model == "byol_bnstop":
            m.cut = "all"  # batch statistics in the forward pass, none in the gradient
    opt = torch.optim.Adam(net.parameters(), lr=LR)
    gen = torch.Generator().manual_seed(seeds[0])  # the same batches and views for every model
    for _ in range(steps):
        v1, v2 = (v.to(device) for v in views(data, len(seeds), gen))
        if method == "byol":
            loss = byol_loss(net, target, v1, v2)
        else:
            loss = simsiam_loss(net, v1, v2, stop=model != "simsiam_nostop")
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():  # BYOL §3.1: xi <- tau xi + (1 - tau) theta
            for pt, po in zip(target.parameters(), net.parameters()):
                pt.lerp_(po, 1 - EMA)
    after = measure(net, data)
    for m in net.modules():
        if isinstance(m, ProbedNorm):
            m.cut = None
    out = {f"{model}_{k}": v for k, v in after.items()}
    out[f"{model}_lin_untrained"] = before["lin"]
    out[f"{model}_lin_gain"] = [a - b for a, b in zip(after["lin"], before["lin"])]
    return out, net, target


def bn_gradient_parts(net, target, data, device):
    """Where the BYOL loss's gradient on the representation comes from, in the trained BN model: the part that flows
    through the heads' batch statistics (the cross-sample part), the part through the batch mean alone (Tian et al.:
    BN's zero-mean operation), and the within-sample rest, each as its cosine with the gradient of a uniformity loss
    (Wang & Isola 2020: log mean exp(-2 |y_i - y_j|^2) over pairs; descending it spreads the batch apart, what a
    contrastive term's negatives do). A positive cosine: that part of the gradient pushes samples apart."""
    r = len(net.encoder[0].weight)
    gen = torch.Generator().manual_seed(12345)
    imgs = data["x_test"][:BATCH].repeat(r, 1, 1)  # R*N x 14 x 14, the same test images for every replica
    v1, v2 = augment(imgs, gen).view(r, BATCH, -1).to(device), augment(imgs, gen).view(r, BATCH, -1).to(device)
    net.train()
    with torch.no_grad():
        y = net.encoder(v1)  # y: R x N x REP, the representation the heads read
        t2 = target.projector(target.encoder(v2))  # R x N x PROJ
    norms = [m for m in (*net.projector, *net.predictor) if isinstance(m, ProbedNorm)]

    def grad(cut):
        for m in norms:
            m.cut = cut
        y_ = y.clone().requires_grad_()
        loss = (2 - 2 * cosine(net.predictor(net.projector(y_)), t2)).mean(1).sum()
        (g,) = torch.autograd.grad(loss, y_)  # g: R x N x REP
        for m in norms:
            m.cut = None
        return g

    full, within, mean_live = grad(None), grad("all"), grad("var")
    y_ = y.clone().requires_grad_()
    yn = F.normalize(y_, dim=-1)
    d2 = torch.cdist(yn, yn).pow(2)  # R x N x N
    off = ~torch.eye(BATCH, dtype=torch.bool, device=y.device)
    uniformity = torch.log(torch.exp(-2 * d2[:, off]).mean(-1)).sum()
    (u,) = torch.autograd.grad(uniformity, y_)  # u: R x N x REP

    def cos(a):  # per replica, over the whole batch's gradient: R
        return F.cosine_similarity(a.flatten(1), u.flatten(1), dim=-1).tolist()

    stats, mean = full - within, mean_live - within  # cross-sample parts: R x N x REP
    frac = (stats.flatten(1).norm(dim=-1) / full.flatten(1).norm(dim=-1)).tolist()
    return {
        "byol_bn_stats_grad_cos": cos(stats),
        "byol_bn_mean_grad_cos": cos(mean),
        "byol_bn_within_grad_cos": cos(within),
        "byol_bn_stats_grad_frac": frac,
    }


def train_siamese(seeds, device):
    """Every model of MODELS on every seed, its measurements, and the BN model's gradient parts."""
    data = {k: (pooled(v) if k.startswith("x") else v).to(device) for k, v in mnist_5k_split().items()}
    out = {}
    for model in MODELS:
        measured, net, target = train_one(model, data, seeds, device)
        out.update(measured)
        if model == "byol_bn":
            out.update(bn_gradient_parts(net, target, data, device))
            _, net0, target0 = train_one(model, data, seeds, device, steps=0)  # the same network, untrained
            out.update({f"{k}_init": v for k, v in bn_gradient_parts(net0, target0, data, device).items()})
    for model in MODELS[1:5]:  # how far each BYOL variant is below the BN one, per seed
        out[f"byol_bn_minus_{model.split('_')[1]}_lin"] = [a - b for a, b in zip(out["byol_bn_lin"], out[f"{model}_lin"])]
    return out
