"""MoCo (He et al. 2019, arXiv 1911.05722) on digits with R replicas and simulated devices: shuffle BN, the momentum
encoder, the training loop, precise BN and the pretext accuracy of a trained pair under three statistics regimes.

Shapes: R = replicas, N = batch, D = embedding dim, Q = queue length, M = training-set size.
"""

import torch
import torch.nn.functional as F

from verify.augment import shift_noise
from verify.data import flat, sample_batch
from verify.layers import DeviceNorm, Encoder
from verify.losses import moco_logits
from verify.probes import knn_monitor, new_history, stack_history

BN_MODES = ("per_device", "shuffle", "global")  # MoCo §3.3 no fix / MoCo fix / SimCLR §2.2 fix


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


def train_moco(
    data,
    *,
    n_replicas=5,
    norm="bn",
    bn_mode="per_device",
    devices=8,
    batch=64,
    steps=300,
    queue=256,
    tau=0.2,
    m=0.99,
    lr=3e-3,
    hidden=128,
    out_dim=32,
    monitor_every=0,
    seed=0,
    device="cpu",
    max_shift=1,
    noise=0.1,
):
    """MoCo (Algorithm 1) on digits with R replicas.

    bn_mode (only for norm="bn"): "per_device" = both encoders see the same device split, so a query and its positive
    key are normalised on the same simulated device (no fix); "shuffle" = MoCo §3.3 shuffle BN for the key encoder;
    "global" = SimCLR §2.2 global BN (devices=1). Returns (q_enc, k_enc, queue, history); history has per-step `loss`
    and `pretext_acc` (T x R, train-mode top-1 of the positive among 1+Q), and if monitor_every > 0, `knn_step` and
    `knn` from eval-mode features (kNN monitor on held-out data).
    """
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    dev_count = 1 if (norm == "bn" and bn_mode == "global") else devices
    q_enc, k_enc = _query_and_key_encoders(n_replicas, norm, dev_count, hidden, out_dim, device)
    opt = torch.optim.Adam(q_enc.parameters(), lr=lr)
    qu = F.normalize(torch.randn(n_replicas, queue, out_dim, generator=g).to(device), dim=-1)  # qu: R x Q x D
    x_tr = data["x_train"]
    hist = new_history()
    ptr = 0
    zeros = torch.zeros(n_replicas * batch, dtype=torch.long, device=device)  # the positive is logit 0
    for step in range(steps):
        imgs = x_tr[sample_batch(x_tr, n_replicas, batch, g)]  # imgs: R x N x 8 x 8
        xq = flat(shift_noise(imgs, g, max_shift, noise))  # xq: R x N x 64
        xk = flat(shift_noise(imgs, g, max_shift, noise))  # xk: R x N x 64
        q = F.normalize(q_enc(xq), dim=-1)  # q: R x N x D
        with torch.no_grad():
            momentum_update(q_enc, k_enc, m)
            if norm == "bn" and bn_mode == "shuffle":
                k = shuffled_forward(k_enc, xk, g)  # MoCo §3.3: keys on other devices than queries
            else:
                k = k_enc(xk)  # per_device: same device split as the queries (the leak)
            k = F.normalize(k, dim=-1)  # k: R x N x D
        logits = moco_logits(q, k, qu, tau)  # logits: R x N x (1+Q)
        loss = F.cross_entropy(logits.reshape(-1, 1 + queue), zeros, reduction="none")  # loss: R*N
        loss_r = loss.reshape(n_replicas, batch).mean(1)  # loss_r: R
        opt.zero_grad(set_to_none=True)
        loss_r.sum().backward()
        opt.step()
        with torch.no_grad():
            hist["loss"].append(loss_r.detach().cpu())
            hist["pretext_acc"].append((logits.argmax(-1) == 0).float().mean(1).cpu())
            ptr = _enqueue(qu, k, ptr)
        if monitor_every and ((step + 1) % monitor_every == 0 or step == 0):
            knn_monitor(hist, q_enc, data, step)
    return q_enc, k_enc, qu, stack_history(hist)


def _query_and_key_encoders(n_replicas, norm, dev_count, hidden, out_dim, device):
    """The query encoder, and the key encoder starting as its copy with no gradients (it moves by momentum only)."""
    q_enc = Encoder(n_replicas, norm, dev_count, hidden, out_dim).to(device)
    k_enc = Encoder(n_replicas, norm, dev_count, hidden, out_dim).to(device)
    k_enc.load_state_dict(q_enc.state_dict())
    for p in k_enc.parameters():
        p.requires_grad_(False)
    return q_enc, k_enc


@torch.no_grad()
def _enqueue(qu, k, ptr):
    """MoCo Algorithm 1: enqueue the current keys k (R x N x D) into qu (R x Q x D), dequeue the oldest; the new ptr."""
    batch, queue = k.shape[1], qu.shape[1]
    pos = (ptr + torch.arange(batch, device=k.device)) % queue
    qu[:, pos] = k
    return (ptr + batch) % queue


@torch.no_grad()
def recalibrate_bn(encoder, data, batch=64, n_batches=16, seed=321, max_shift=1, noise=0.1):
    """Re-estimate BN running statistics of a frozen encoder ("precise BN"): the plain average of the per-device
    statistics over `n_batches` augmented training batches, so that eval-mode outputs are a clean, decoupled version
    of the training-time computation (no lag from the running average of a moving network). No-op for ln/gn/none."""
    bns = [m for m in encoder.modules() if isinstance(m, DeviceNorm) and m.kind == "bn"]
    if not bns:
        return encoder
    g = torch.Generator().manual_seed(seed)
    r = encoder.n_replicas
    sums = [(torch.zeros_like(m.running_mean), torch.zeros_like(m.running_var)) for m in bns]
    was = encoder.training
    encoder.train()
    for _ in range(n_batches):
        imgs = data["x_train"][sample_batch(data["x_train"], r, batch, g)]  # imgs: R x N x 8 x 8
        for m in bns:
            m.running_mean.zero_(), m.running_var.zero_()
            m.momentum = 1.0  # running stats := this batch's (mean over devices) statistics
        encoder(flat(shift_noise(imgs, g, max_shift, noise)))
        for (sm, sv), m in zip(sums, bns):
            sm += m.running_mean / n_batches
            sv += m.running_var / n_batches
    for (sm, sv), m in zip(sums, bns):
        m.running_mean.copy_(sm), m.running_var.copy_(sv)
        m.momentum = 0.1
    encoder.train(was)
    return encoder


@torch.no_grad()
def moco_pretext_accuracy(
    q_enc, k_enc, data, queue=256, batch=64, n_batches=8, stats="train", seed=123, max_shift=1, noise=0.1, tau=0.2
):
    """Pretext top-1 (positive among 1+Q keys) of a trained MoCo pair on fresh batches, with the negatives (a fresh
    queue of keys from the preceding evaluation batches) encoded in the SAME statistics mode as the positive:
    `stats="train"` = the device split of training (q and k share a device), `"shuffle"` = keys shuffled across
    devices (MoCo §3.3), `"eval"` = running statistics (no cross-sample dependence at all). Returns R."""
    g = torch.Generator().manual_seed(seed)
    r = q_enc.n_replicas
    saved = [(b, b.clone()) for enc in (q_enc, k_enc) for b in enc.buffers()]  # keep running stats intact
    q_enc.train(stats != "eval")
    k_enc.train(stats != "eval")
    n_warm = -(-queue // batch)  # batches needed to fill the queue
    keys, accs = [], []
    for i in range(n_warm + n_batches):
        imgs = data["x_train"][sample_batch(data["x_train"], r, batch, g)]  # imgs: R x N x 8 x 8
        xq, xk = flat(shift_noise(imgs, g, max_shift, noise)), flat(shift_noise(imgs, g, max_shift, noise))
        k = shuffled_forward(k_enc, xk, g) if stats == "shuffle" else k_enc(xk)  # k: R x N x D
        k = F.normalize(k, dim=-1)
        if i >= n_warm:
            q = F.normalize(q_enc(xq), dim=-1)  # q: R x N x D
            qu = torch.cat(keys[-n_warm:], dim=1)[:, -queue:]  # qu: R x Q x D, keys of earlier batches
            logits = moco_logits(q, k, qu, tau)  # logits: R x N x (1+Q)
            accs.append((logits.argmax(-1) == 0).float().mean(1))
        keys.append(k)
    for b, v in saved:
        b.copy_(v)
    q_enc.train()
    k_enc.train()
    return torch.stack(accs).mean(0)  # R
