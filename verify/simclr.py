"""SimCLR (Chen et al. 2020, arXiv 2002.05709) with R replicas: the network f + g, how the two views of a batch are
laid out over simulated devices, the NT-Xent training loop, and the pretext accuracy of a trained network.

Shapes: R = replicas, N = batch, K = simulated devices, H = representation dim, D = projection dim.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from verify.data import sample_batch
from verify.layers import Encoder, RLinear
from verify.losses import nt_xent
from verify.probes import knn_monitor, new_history, stack_history

HEADS = ("nonlinear", "linear", "none")  # SimCLR Figure 8: nonlinear projection, linear projection, identity
# How the 2N views of one step meet the batch statistics:
#   separate:    view 1 and view 2 are encoded in two forward passes (no batch statistics shared between them);
#   same_device: SimCLR's data-parallel layout: device k encodes [view 1; view 2] of its N/K images in one forward
#                (google-research/simclr tf2/model.py concatenates the views along the batch), so both views of an
#                image are normalised with the same per-device statistics; devices=1 is global BN (SimCLR §2.2);
#   shuffle:     as same_device, but view 2 is shuffled across devices first (MoCo §3.3 applied to SimCLR).
LAYOUTS = ("separate", "same_device", "shuffle")


class SimCLRNet(nn.Module):
    """SimCLR §2.1: base encoder f (MLP d_in -> hidden -> hidden -> rep_dim, the Encoder of verify.layers) and
    projection head g, z = g(h). h = f(x) (h_relu=False) or relu(f(x)) (h_relu=True: a ResNet's pooled features are
    post-ReLU). g: "nonlinear" W2 relu(W1 h) (SimCLR §2.1), "linear" W1 h (§4.2), "none" z = h.
    forward(x: R x N x d_in) -> (h: R x N x rep_dim, z: R x N x out_dim)."""

    def __init__(
        self, n_replicas, d_in=64, hidden=128, rep_dim=None, out_dim=64, head="nonlinear", h_relu=False, norm="none", devices=1
    ):
        super().__init__()
        assert head in HEADS, head
        rep_dim = rep_dim or hidden
        self.n_replicas, self.head, self.h_relu = n_replicas, head, h_relu
        self.f = Encoder(n_replicas, norm=norm, devices=devices, hidden=hidden, out_dim=rep_dim, d_in=d_in)
        if head == "nonlinear":  # SimCLR §2.1: z = W2 relu(W1 h)
            self.g1, self.g2 = RLinear(n_replicas, rep_dim, rep_dim), RLinear(n_replicas, rep_dim, out_dim)
        elif head == "linear":  # SimCLR §4.2 (2): linear projection, as Wu et al. 2018
            self.g1 = RLinear(n_replicas, rep_dim, out_dim)

    def forward(self, x):  # x: R x N x d_in
        h = self.f(x)  # h: R x N x H, the representation that is probed
        if self.h_relu:
            h = F.relu(h)
        if self.head == "nonlinear":
            return h, self.g2(F.relu(self.g1(h)))  # z: R x N x D
        if self.head == "linear":
            return h, self.g1(h)  # z: R x N x D
        return h, h  # identity head: the loss acts on h itself


def encode_views(net, v1, v2, layout="separate", devices=1, generator=None, l2=True):
    """L2-normalised projections z1, z2 (R x N x D each) of views v1, v2 (R x N x d_in) laid out as `layout` says
    (see LAYOUTS); `devices` is the number of simulated devices K of the net's batch norm in train mode. l2=False
    returns z unnormalised (SimCLR Table 5's "without l2 normalisation")."""
    norm = (lambda z: F.normalize(z, dim=-1)) if l2 else (lambda z: z)
    if layout == "separate":
        return norm(net(v1)[1]), norm(net(v2)[1])  # SimCLR eq. 1: l2-normalised z
    assert layout in LAYOUTS, layout
    r, n = v1.shape[:2]
    rows = torch.arange(r, device=v1.device)[:, None]
    if layout == "shuffle":  # MoCo §3.3: view 2 goes to random devices, its order is restored after encoding
        perm = torch.rand(r, n, generator=generator).argsort(1).to(v1.device)  # perm: R x N
        v2 = v2[rows, perm]
    n_loc = n // devices
    # device k holds [view 1 of its images; view 2 of its images]: R x K x 2N/K x d_in
    both = torch.cat([v1.reshape(r, devices, n_loc, -1), v2.reshape(r, devices, n_loc, -1)], 2)
    z = net(both.reshape(r, 2 * n, -1))[1]  # z: R x 2N x D, the per-device BN sees 2N/K rows at a time
    z = norm(z).reshape(r, devices, 2, n_loc, -1)  # z: R x K x 2 x N/K x D
    z1, z2 = z[:, :, 0].reshape(r, n, -1), z[:, :, 1].reshape(r, n, -1)  # R x N x D each
    if layout == "shuffle":
        z2 = z2[rows, perm.argsort(1)]  # back to the order of view 1
    return z1, z2


def train_simclr(
    x_train,
    aug,
    n_replicas=3,
    steps=300,
    batch=256,
    tau=0.2,
    lr=1e-3,
    seed=0,
    layout="separate",
    asymmetric=False,
    eval_steps=(),
    on_eval=None,
    monitor=None,
    monitor_every=0,
    loss=None,
    l2=True,
    **net,
):
    """NT-Xent training (SimCLR Algorithm 1) of R independent SimCLRNet(**net) on x_train: M x ... images, views made
    by `aug.views` (verify.augment). With `asymmetric`, view 1 is the un-augmented image (SimCLR §3 Figure 5's
    one-branch setting). `on_eval(step, net)` is called after each step in `eval_steps`; with `monitor` (a digits
    split) and monitor_every > 0, a kNN monitor of f is recorded. steps=0 returns the initialised network.
    `loss(z1, z2, generator) -> (loss R, pretext accuracy R)` replaces NT-Xent at `tau` (SimCLR §5.1's other losses);
    it gets z l2-normalised unless l2=False (Table 5). Returns (net, history): per-step `loss` and `pretext_acc`
    (T x R), `knn_step` and `knn`."""
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = SimCLRNet(n_replicas, d_in=x_train[0].numel(), **net).to(x_train.device)
    devices = model.f.n1.devices
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    hist = new_history()
    for step in range(1, steps + 1):
        imgs = x_train[sample_batch(x_train, n_replicas, batch, g)]  # imgs: R x N x ...
        v1 = imgs.reshape(n_replicas, batch, -1) if asymmetric else aug.views(imgs, g)  # v1: R x N x d_in
        v2 = aug.views(imgs, g)  # v2: R x N x d_in
        z1, z2 = encode_views(model, v1, v2, layout, devices, g, l2)  # R x N x D each
        loss_r, acc = loss(z1, z2, g) if loss else nt_xent(z1, z2, tau)  # R, R
        opt.zero_grad(set_to_none=True)
        loss_r.sum().backward()  # replicas are independent: the sum keeps their gradients separate
        opt.step()
        hist["loss"].append(loss_r.detach().cpu())
        hist["pretext_acc"].append(acc.detach().cpu())
        if step in eval_steps:
            on_eval(step, model)
        if monitor_every and (step % monitor_every == 0 or step == 1):
            knn_monitor(hist, model.f, monitor, step - 1)
    return model, stack_history(hist)


@torch.no_grad()
def pretext_accuracy(net, x, aug, seed=123, batch=256, tau=0.2, asymmetric=False, layout="separate", devices=1):
    """Top-1 of the positive among the 2N-1 other views (NT-Xent's task) on consecutive batches of images x, in the
    net's current train/eval mode; R."""
    g = torch.Generator().manual_seed(seed)
    r = net.n_replicas
    accs = []
    for s in range(0, len(x) - batch + 1, batch):
        imgs = x[s : s + batch].unsqueeze(0).expand(r, *([-1] * x.dim()))  # imgs: R x N x ...
        v1 = imgs.reshape(r, batch, -1) if asymmetric else aug.views(imgs, g)  # v1: R x N x d_in
        z1, z2 = encode_views(net, v1, aug.views(imgs, g), layout, devices, g)  # R x N x D each
        accs.append(nt_xent(z1, z2, tau)[1])
    return torch.stack(accs).mean(0)


def sqrt_scaled_lr(batch, base_lr=1e-3, base_batch=256):
    """SimCLR Appendix B.1: square-root learning-rate scaling, lr proportional to sqrt(batch size)."""
    return base_lr * math.sqrt(batch / base_batch)
