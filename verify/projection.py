"""SimCLR with a projection head on sklearn digits, and the probes of SimCLR §4.2 (Table 3, Figure 8).

Builds on the shared toy setup in `verify.contrastive` (digits split, shift+noise augmentation, replicated
MLP encoder, NT-Xent). Adds what the projection-head claims need: an encoder output h (post-ReLU, as a
ResNet's pooled features), a head g(.) that is nonlinear (SimCLR §2.1: W2 relu(W1 h)), linear, or
absent, an optional random-rotation augmentation (Table 3 caption: rotation added to pretraining), and
replicated torch probes (linear or one-hidden-layer MLP) on frozen features.

Shapes: R = replicas (independent seeds trained in lock-step), N = batch, M = probe samples, D = feature dim.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from verify.contrastive import Encoder, RLinear, augment, flat, nt_xent, sample_batch

HEADS = ("nonlinear", "linear", "none")  # SimCLR Figure 8: nonlinear projection, linear projection, identity


def rotate_quarters(x, quarters):
    """Rotate each 8 x 8 image by quarters*90 degrees. x: ... x 8 x 8, quarters: ... (ints 0..3)."""
    out = x.clone()
    for q in (1, 2, 3):
        idx = quarters == q
        out[idx] = torch.rot90(x[idx], q, dims=(-2, -1))  # rot90 of the selected images: n_q x 8 x 8
    return out


class SimCLRNet(nn.Module):
    """h = relu(f(x)) with f the shared MLP encoder; z = g(h) with g nonlinear / linear / identity.
    forward(x: R x N x 64) -> (h: R x N x D, z: R x N x D); Table 3 keeps dim(z) = dim(h)."""

    def __init__(self, n_replicas, head="nonlinear", hidden=256, dim=128, norm="none"):
        super().__init__()
        assert head in HEADS, head
        self.head = head
        self.encoder = Encoder(n_replicas, norm=norm, devices=1, hidden=hidden, out_dim=dim)
        if head == "nonlinear":  # SimCLR §2.1: z = W2 relu(W1 h)
            self.g1, self.g2 = RLinear(n_replicas, dim, dim), RLinear(n_replicas, dim, dim)
        elif head == "linear":  # SimCLR §4.2 (2): linear projection, as Wu et al. 2018
            self.g1 = RLinear(n_replicas, dim, dim)

    def forward(self, x):  # x: R x N x 64
        h = F.relu(self.encoder(x))  # h: R x N x D, the representation used downstream
        if self.head == "nonlinear":
            z = self.g2(F.relu(self.g1(h)))  # z: R x N x D
        elif self.head == "linear":
            z = self.g1(h)  # z: R x N x D
        else:
            z = h  # identity head: the loss acts on h itself
        return h, z


def train_simclr_head(data, head="nonlinear", n_replicas=3, steps=400, batch=256, tau=0.5, lr=1e-3, hidden=256,
                      dim=128, rotate_aug=False, seed=0, device="cpu", max_shift=1, noise=0.1):
    """NT-Xent training (SimCLR Algorithm 1) of R independent SimCLRNets. Views: shift + noise (verify.contrastive),
    plus, when rotate_aug, an independent rotation in {0, 90, 180, 270} per view (SimCLR Table 3 caption).
    steps=0 returns the randomly initialised network (the control). Returns (model, final loss per replica)."""
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = SimCLRNet(n_replicas, head, hidden, dim).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    x_tr = data["x_train"]
    loss = torch.full((n_replicas,), float("nan"))
    for _ in range(steps):
        imgs = x_tr[sample_batch(x_tr, n_replicas, batch, g)]  # imgs: R x N x 8 x 8
        views = []
        for _v in range(2):
            v = augment(imgs, g, max_shift, noise)  # R x N x 8 x 8
            if rotate_aug:
                quarters = torch.randint(0, 4, v.shape[:2], generator=g).to(device)  # R x N, independent per view
                v = rotate_quarters(v, quarters)
            views.append(F.normalize(model(flat(v))[1], dim=-1))  # z: R x N x D, l2-normalised (SimCLR eq. 1)
        loss, _ = nt_xent(views[0], views[1], tau)  # R
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()  # replicas are independent: the sum keeps their gradients separate
        opt.step()
    return model, loss.detach().cpu()


@torch.no_grad()
def features(model, x):
    """Frozen (h, g(h)) for images x: M x 8 x 8 -> two R x M x D tensors (shared input across replicas)."""
    r = model.encoder.fc1.weight.shape[0]
    model.eval()
    h, z = model(flat(x).expand(r, -1, -1))  # R x M x D each
    model.train()
    return h, z


def probe_accuracy(f_train, y_train, f_test, y_test, n_classes, hidden=0, steps=300, lr=1e-2, weight_decay=1e-4,
                   seed=0, scale="global"):
    """Replicated probe on frozen features: linear (hidden=0, multinomial logistic regression) or an MLP with one
    hidden ReLU layer (SimCLR Table 3: 'training additional MLPs'). Features are centred with the training mean and
    divided by one overall scale (scale="global", keeps the geometry: a direction of tiny variance stays tiny) or by
    each dimension's sd (scale="dim", blows up near-constant directions); full-batch Adam. f_*: R x M x D, y_*: M. Returns test accuracy per replica (R, cpu)."""
    torch.manual_seed(seed)
    r, _, d = f_train.shape
    mu = f_train.mean(1, keepdim=True)  # R x 1 x D
    if scale == "dim":
        sd = f_train.std(1, keepdim=True) + 1e-6  # R x 1 x D
    else:
        sd = (f_train - mu).pow(2).sum(-1).mean(1).sqrt()[:, None, None] / d**0.5 + 1e-6  # R x 1 x 1, rms per dim
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
    target = y_train.expand(r, -1).reshape(-1)  # R*M
    with torch.enable_grad():
        for _ in range(steps):
            loss = F.cross_entropy(logits(a_tr).reshape(-1, n_classes), target, reduction="sum") / y_train.shape[0]
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    with torch.no_grad():
        return (logits(a_te).argmax(-1) == y_test).float().mean(1).cpu()  # R


@torch.no_grad()
def rotation_probe_data(model, data, n_train=400):
    """Every image in all four rotations -> features and rotation labels for a transformation probe
    (probe-train from the first n_train images of the training split, probe-test from the held-out split).
    Returns dict with h_train, z_train, r_train, h_test, z_test, r_test (features R x 4M x D, labels 4M)."""
    out = {}
    for split in ("train", "test"):
        x = data[f"x_{split}"][:n_train] if split == "train" else data["x_test"]  # M x 8 x 8
        quarters = torch.arange(4, device=x.device).repeat_interleave(x.shape[0])  # 4M: 0..0,1..1,2..2,3..3
        xr = rotate_quarters(x.repeat(4, 1, 1), quarters)  # 4M x 8 x 8
        out[f"h_{split}"], out[f"z_{split}"] = features(model, xr)
        out[f"r_{split}"] = quarters
    return out
