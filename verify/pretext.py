"""The pretext task as a choice of augmentation: SimCLR and supervised training on tinted digits with a
pluggable `verify.augment.Augment`, and the probes that read what the representation learned.

Builds on `verify.contrastive` (replicated MLP `Encoder`, `RLinear`, `nt_xent`, `knn_accuracy`,
`sample_batch`): R replicas (seeds) train in lock-step, each with its own parameters, batches and
augmentation draws. Shapes: R = replicas, N = batch, M = data set size, H = hidden width.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from verify.contrastive import Encoder, RLinear, knn_accuracy, nt_xent, sample_batch

D_IN = 3 * 8 * 8  # tinted 8 x 8 digits, flattened


class SimCLRNet(nn.Module):
    """SimCLR §2.1: base encoder f (MLP 192 -> H -> H -> H, h = f(x)) and projection head
    g (H -> H -> out, z = W2 ReLU(W1 h)); R replicas."""

    def __init__(self, n_replicas, hidden=128, out_dim=64, norm="none"):
        super().__init__()
        self.f = Encoder(n_replicas, norm=norm, devices=1, hidden=hidden, out_dim=hidden, d_in=D_IN)
        self.g1, self.g2 = RLinear(n_replicas, hidden, hidden), RLinear(n_replicas, hidden, out_dim)

    def forward(self, x):  # x: R x N x 192
        h = self.f(x)  # h: R x N x H, the representation that is probed
        return self.g2(F.relu(self.g1(h)))  # z: R x N x out


def views(x, aug, generator):
    """Augment R x N x 3 x 8 x 8 images independently per image; returns R x N x 192."""
    r, n = x.shape[:2]
    v = aug(x.reshape(r * n, *x.shape[2:]), generator)  # v: RN x 3 x 8 x 8
    return v.reshape(r, n, -1)


def train_simclr(x_train, aug, n_replicas=3, steps=300, batch=256, tau=0.2, lr=1e-3, hidden=128, seed=0,
                 asymmetric=False, eval_steps=(), on_eval=None):
    """NT-Xent training (SimCLR Algorithm 1) on x_train: M x 3 x 8 x 8. With `asymmetric`, view 1 is the
    un-augmented image (SimCLR §3 Figure 5's one-branch setting). `on_eval(step, net)` is called after
    each step listed in `eval_steps`. Returns the net and the per-step pretext accuracy, steps x R."""
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    net = SimCLRNet(n_replicas, hidden).to(x_train.device)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    accs = []
    for step in range(1, steps + 1):
        imgs = x_train[sample_batch(x_train, n_replicas, batch, g)]  # imgs: R x N x 3 x 8 x 8
        v1 = imgs.reshape(n_replicas, batch, -1) if asymmetric else views(imgs, aug, g)  # v1: R x N x 192
        v2 = views(imgs, aug, g)  # v2: R x N x 192
        z1, z2 = F.normalize(net(v1), dim=-1), F.normalize(net(v2), dim=-1)  # R x N x out
        loss, acc = nt_xent(z1, z2, tau)  # R, R
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()  # replicas are independent: the sum keeps their gradients separate
        opt.step()
        accs.append(acc.detach().cpu())
        if step in eval_steps:
            on_eval(step, net)
    return net, torch.stack(accs)


def train_supervised(x_train, y_train, aug, n_replicas=3, steps=300, batch=256, lr=1e-3, hidden=128, seed=0):
    """Cross-entropy training of the same base encoder f plus a linear classifier, on augmented views.
    Returns (encoder f, classifier)."""
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    f = Encoder(n_replicas, norm="none", devices=1, hidden=hidden, out_dim=hidden, d_in=D_IN).to(x_train.device)
    clf = RLinear(n_replicas, hidden, 10).to(x_train.device)
    opt = torch.optim.Adam(list(f.parameters()) + list(clf.parameters()), lr=lr)
    for _ in range(steps):
        idx = sample_batch(x_train, n_replicas, batch, g)  # idx: R x N
        logits = clf(F.relu(f(views(x_train[idx], aug, g))))  # logits: R x N x 10
        loss = F.cross_entropy(logits.reshape(-1, 10), y_train[idx].reshape(-1), reduction="none")
        opt.zero_grad(set_to_none=True)
        loss.view(n_replicas, -1).mean(1).sum().backward()
        opt.step()
    return f, clf


@torch.no_grad()
def supervised_accuracy(f, clf, x, y):
    """Test accuracy of the supervised model on un-augmented images x: M x 3 x 8 x 8. Returns R."""
    r = clf.weight.shape[0]
    logits = clf(F.relu(f(x.reshape(1, len(x), -1).expand(r, -1, -1))))  # logits: R x M x 10
    return (logits.argmax(-1) == y).float().mean(1)


@torch.no_grad()
def represent(f, x):
    """h = f(x) for un-augmented images: x: M x 3 x 8 x 8 -> R x M x H."""
    r = f.fc1.weight.shape[0]
    return f(x.reshape(1, len(x), -1).expand(r, -1, -1))


@torch.no_grad()
def ridge_fit_predict(h_train, t_train, h_test, lam=1.0):
    """Per-replica ridge regression on standardised features (closed form, a fast linear probe).
    h_*: R x M x H, t_train: M x T. Returns predictions R x M_test x T."""
    mu, sd = h_train.mean(1, keepdim=True), h_train.std(1, keepdim=True) + 1e-6
    a = F.pad((h_train - mu) / sd, (0, 1), value=1.0)  # a: R x M x (H+1), with a bias column
    b = F.pad((h_test - mu) / sd, (0, 1), value=1.0)
    eye = torch.eye(a.shape[-1], device=a.device)
    w = torch.linalg.solve(a.transpose(1, 2) @ a + lam * eye, a.transpose(1, 2) @ t_train)  # w: R x (H+1) x T
    return b @ w


@torch.no_grad()
def linear_probe(h_train, y_train, h_test, y_test, lam=1.0):
    """Least-squares linear probe on one-hot labels (ridge, argmax). Returns accuracy per replica, R."""
    pred = ridge_fit_predict(h_train, F.one_hot(y_train, 10).float(), h_test, lam)  # R x M x 10
    return (pred.argmax(-1) == y_test).float().mean(1)


@torch.no_grad()
def knn_probe(h_train, y_train, h_test, y_test, k=20):
    """Weighted cosine kNN (the shared monitor of verify.contrastive). Returns R."""
    return knn_accuracy(F.normalize(h_train, dim=-1), y_train, F.normalize(h_test, dim=-1), y_test, k=k)


@torch.no_grad()
def tint_r2(h_train, tint_train, h_test, tint_test, lam=1.0):
    """How much of the per-image colour (the shortcut) a linear read-out recovers from h: R^2 of ridge
    regression of the 6 tint values, on held-out images. Returns R."""
    pred = ridge_fit_predict(h_train, tint_train, h_test, lam)  # R x M x 6
    resid = ((pred - tint_test) ** 2).sum((1, 2))
    total = ((tint_test - tint_test.mean(0)) ** 2).sum()
    return 1 - resid / total


@torch.no_grad()
def pretext_accuracy(net, x, aug, seed=123, batch=256, tau=0.2, asymmetric=False):
    """Top-1 of the positive among the 2N-1 other views (NT-Xent's task) on held-out images; R."""
    g = torch.Generator().manual_seed(seed)
    r = net.g2.weight.shape[0]
    accs = []
    for s in range(0, len(x) - batch + 1, batch):
        imgs = x[s:s + batch].unsqueeze(0).expand(r, -1, -1, -1, -1)  # imgs: R x N x 3 x 8 x 8
        v1 = imgs.reshape(r, batch, -1) if asymmetric else views(imgs, aug, g)
        z1, z2 = F.normalize(net(v1), dim=-1), F.normalize(net(views(imgs, aug, g)), dim=-1)
        accs.append(nt_xent(z1, z2, tau)[1])
    return torch.stack(accs).mean(0)


def sqrt_scaled_lr(batch, base_lr=1e-3, base_batch=256):
    """SimCLR Appendix B.1: square-root learning-rate scaling, lr proportional to sqrt(batch size)."""
    return base_lr * math.sqrt(batch / base_batch)
