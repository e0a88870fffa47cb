"""What a frozen representation holds: eval-mode features, a weighted kNN classifier, a closed-form linear probe
(ridge), a trained probe (logistic or one-hidden-layer MLP), and the kNN monitor of a training run.

Shapes: R = replicas, M = probe samples, D = feature dim, T = regression targets.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from verify.data import flat
from verify.layers import RLinear


@torch.no_grad()
def frozen_features(net, x):
    """net(x) in eval mode (BN running statistics: no cross-sample coupling), without gradient; the net's
    train/eval mode is restored. x: R x M x d_in (see `data.for_replicas` for images shared by the replicas)."""
    was = net.training
    net.eval()
    out = net(x)  # R x M x D, or a tuple of them
    net.train(was)
    return out


@torch.no_grad()
def knn_accuracy(f_train, y_train, f_test, y_test, k=20, t=0.1, n_classes=10):
    """Weighted kNN on cosine similarity (Wu et al. 2018 §3.4; MoCo Appendix A.1's monitor).
    f_*: R x M x D L2-normalised; y_*: M. Returns accuracy per replica, R."""
    sim = torch.bmm(f_test, f_train.transpose(1, 2))  # sim: R x Mte x Mtr
    w, idx = sim.topk(k, dim=-1)  # w, idx: R x Mte x k
    votes = torch.zeros(*idx.shape[:2], n_classes, device=sim.device)  # votes: R x Mte x classes
    votes.scatter_add_(-1, y_train[idx], (w / t).exp())  # Wu et al. §3.4: neighbour i votes exp(s_i / t)
    return (votes.argmax(-1) == y_test).float().mean(1)  # R


@torch.no_grad()
def knn_probe(h_train, y_train, h_test, y_test, k=20):
    """`knn_accuracy` on features that are not yet L2-normalised. Returns R."""
    return knn_accuracy(F.normalize(h_train, dim=-1), y_train, F.normalize(h_test, dim=-1), y_test, k=k)


@torch.no_grad()
def ridge_fit_predict(h_train, t_train, h_test, lam=1.0):
    """Per-replica ridge regression on standardised features (closed form).
    h_*: R x M x H, t_train: M x T. Returns predictions R x M_test x T."""
    mu, sd = h_train.mean(1, keepdim=True), h_train.std(1, keepdim=True) + 1e-6  # R x 1 x H each
    a = F.pad((h_train - mu) / sd, (0, 1), value=1.0)  # a: R x M x (H+1), with a bias column
    b = F.pad((h_test - mu) / sd, (0, 1), value=1.0)
    eye = torch.eye(a.shape[-1], device=a.device)
    w = torch.linalg.solve(a.transpose(1, 2) @ a + lam * eye, a.transpose(1, 2) @ t_train)  # w: R x (H+1) x T
    return b @ w


@torch.no_grad()
def linear_probe(h_train, y_train, h_test, y_test, lam=1.0):
    """Least-squares linear probe on one-hot labels (ridge, argmax): fast, deterministic, no training loop.
    Returns accuracy per replica, R."""
    pred = ridge_fit_predict(h_train, F.one_hot(y_train, 10).float(), h_test, lam)  # pred: R x M x 10
    return (pred.argmax(-1) == y_test).float().mean(1)


@torch.no_grad()
def tint_r2(h_train, tint_train, h_test, tint_test, lam=1.0):
    """How much of the per-image colour (the shortcut) a linear read-out recovers from h: R^2 of ridge
    regression of the 6 tint values, on held-out images. Returns R."""
    pred = ridge_fit_predict(h_train, tint_train, h_test, lam)  # pred: R x M x 6
    resid = ((pred - tint_test) ** 2).sum((1, 2))
    total = ((tint_test - tint_test.mean(0)) ** 2).sum()
    return 1 - resid / total


def trained_probe(
    f_train, y_train, f_test, y_test, n_classes, hidden=0, steps=300, lr=1e-2, weight_decay=1e-4, seed=0, scale="global"
):
    """Probe trained by full-batch Adam on frozen features: multinomial logistic regression (hidden=0, SimCLR §2.3's
    linear evaluation) or an MLP with one hidden ReLU layer (SimCLR Table 3: 'training additional MLPs').
    Features are centred with the training mean and divided by one overall scale (scale="global", keeps the
    geometry: a direction of tiny variance stays tiny) or by each dimension's sd (scale="dim", blows up
    near-constant directions). f_*: R x M x D, y_*: M. Returns test accuracy per replica (R, cpu)."""
    torch.manual_seed(seed)
    r, _, d = f_train.shape
    mu = f_train.mean(1, keepdim=True)  # mu: R x 1 x D
    if scale == "dim":
        sd = f_train.std(1, keepdim=True) + 1e-6  # sd: R x 1 x D
    else:
        sd = (f_train - mu).pow(2).sum(-1).mean(1).sqrt()[:, None, None] / d**0.5 + 1e-6  # sd: R x 1 x 1, rms per dim
    a_tr, a_te = (f_train - mu) / sd, (f_test - mu) / sd  # standardised features: R x M x D
    if hidden:
        layers = nn.ModuleList([RLinear(r, d, hidden), RLinear(r, hidden, n_classes)]).to(f_train.device)
    else:
        layers = nn.ModuleList([RLinear(r, d, n_classes)]).to(f_train.device)

    def logits(a):  # a: R x M x D -> R x M x classes
        for i, layer in enumerate(layers):
            a = layer(a if i == 0 else F.relu(a))
        return a

    opt = torch.optim.Adam(layers.parameters(), lr=lr, weight_decay=weight_decay)
    target = y_train.expand(r, -1).reshape(-1)  # target: R*M
    with torch.enable_grad():
        for _ in range(steps):
            loss = F.cross_entropy(logits(a_tr).reshape(-1, n_classes), target, reduction="sum") / y_train.shape[0]
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    with torch.no_grad():
        return (logits(a_te).argmax(-1) == y_test).float().mean(1).cpu()  # R


def knn_monitor(hist, encoder, data, step):
    """MoCo Appendix A.1: a kNN classifier on held-out features, appended to a training history (`knn_step`, `knn`)."""
    r = encoder.n_replicas
    ftr = F.normalize(frozen_features(encoder, flat(data["x_train"]).expand(r, -1, -1)), dim=-1)  # ftr: R x M x D
    fte = F.normalize(frozen_features(encoder, flat(data["x_test"]).expand(r, -1, -1)), dim=-1)
    hist["knn_step"].append(step + 1)
    hist["knn"].append(knn_accuracy(ftr, data["y_train"], fte, data["y_test"]).cpu())


def new_history():
    """A training history: per-step lists of `loss` and `pretext_acc` (each R), kNN monitor steps and values."""
    return {"loss": [], "pretext_acc": [], "knn_step": [], "knn": []}


def stack_history(hist):
    """The per-step lists of a training history as T x R tensors."""
    for key in ("loss", "pretext_acc", "knn"):
        hist[key] = torch.stack(hist[key]) if hist[key] else torch.empty(0)
    return hist
