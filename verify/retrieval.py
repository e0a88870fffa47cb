"""A DPR-style dual encoder on the digits (SOTA-391, SOTA-392): the question is the top half of an 8 x 8 digit, its
passage the bottom half of the same image, and the loss is DPR's in-batch negatives (Karpukhin et al. 2020, §3.2):
the B x B score matrix of a batch's questions against its passages, the diagonal the positives.

Towers are `verify.layers.Encoder`s (R replicas trained in lock-step), with per-device BN, global BN or LayerNorm.
Per-device BN splits the batch into K simulated GPUs; as in DPR's DDP training (train_dense_encoder.py, _calc_loss)
each GPU encodes its own questions and their passages, and the vectors of all GPUs are gathered for the loss, so a
question and its positive passage are normalised on the same device: the leak channel. `resplit` moves every passage
to other devices' sub-batches (`interleave`, MoCo's shuffle), which closes it.
"""

import torch
import torch.nn.functional as F

from verify.data import digits, flat, sample_batch, split
from verify.layers import Encoder

BATCH = 128  # DPR §5: "a batch size of 128"
DEVICES = 8  # simulated GPUs of per-device BN: 16 pairs each
TAU = 0.1  # DPR scores with a raw dot product; we L2-normalise and divide by 0.1 for stable small-model training
STEPS = 300  # Adam steps at batch 128: about 31 epochs of the 1257 training images (DPR: up to 40 epochs)
LR = 1e-3
MODELS = {  # name -> (norm, devices in training, passages re-split to other devices while training)
    "aligned": ("bn", DEVICES, False),  # per-device BN, positive on its question's device: the channel open
    "shuffled": ("bn", DEVICES, True),  # per-device BN with MoCo's shuffle of the passages: the channel closed
    "global": ("bn", 1, False),  # one BN over the whole batch (SyncBN: SimCLR §2.2, MoCo v3 Appendix A)
    "ln": ("ln", 1, False),  # LayerNorm towers, as BERT's (DPR §3.1)
}


def halves():
    """Questions (top 4 rows) and passages (bottom 4 rows) of every digit: 1797 x 32 each, and the labels."""
    x, y = digits()  # x: 1797 x 8 x 8
    return flat(x[:, :4]), flat(x[:, 4:]), y  # 1797 x 32, 1797 x 32


def interleave(n, devices):
    """A permutation of n positions whose k-th device block takes positions k, k + K, k + 2K, ...: every new
    sub-batch draws n / K**2 passages from each old one, so no passage is normalised with the sub-batch of its own
    question (MoCo §3.3 shuffles with a random permutation; a fixed interleave does the same to the composition)."""
    return torch.arange(n).reshape(n // devices, devices).T.flatten()  # n


def resplit(p, devices):
    """Passages R x N x D regrouped by `interleave` before encoding."""
    return p[:, interleave(p.shape[1], devices).to(p.device)]


def unsplit(z, devices):
    """Inverse of `resplit` on the encoded passages: row i holds passage i's vector again."""
    return z[:, interleave(z.shape[1], devices).argsort().to(z.device)]


def towers(r, norm, devices, seed, device):
    torch.manual_seed(seed)  # drawn on the CPU, then moved: the same initial weights on every device
    q_enc = Encoder(r, norm, devices, hidden=128, out_dim=32, d_in=32)  # DPR §3.1: two independent encoders
    p_enc = Encoder(r, norm, devices, hidden=128, out_dim=32, d_in=32)
    return q_enc.to(device), p_enc.to(device)


def encode(q_enc, p_enc, q, p, shuffle):
    """L2-normalised question and passage vectors, R x N x 32 each, passages re-split first when `shuffle`."""
    devices = p_enc.n1.devices
    zq = F.normalize(q_enc(q), dim=-1)
    zp = F.normalize(unsplit(p_enc(resplit(p, devices)), devices) if shuffle else p_enc(p), dim=-1)
    return zq, zp


def in_batch_loss(zq, zp):
    """DPR §3.2: S = Q P^T is B x B, row i's positive is passage i, the other B - 1 are its negatives."""
    s = zq @ zp.transpose(1, 2) / TAU  # R x B x B
    labels = torch.arange(s.shape[1], device=s.device).expand(s.shape[0], -1)  # R x B
    return F.cross_entropy(s.flatten(0, 1), labels.flatten(), reduction="sum") / s.shape[1]  # summed over replicas


def train(name, q, p, seeds, *, stream=1, batch=BATCH, steps=STEPS):
    """One model of MODELS trained on the questions q and passages p (M x 32); R = len(seeds) replicas. `stream`
    seeds the order of the batches (a second stream: the same model but for chance)."""
    norm, devices, shuffle = MODELS[name]
    q_enc, p_enc = towers(len(seeds), norm, devices, seeds[0], q.device)
    opt = torch.optim.Adam([*q_enc.parameters(), *p_enc.parameters()], lr=LR)
    g = torch.Generator().manual_seed(seeds[0] + stream)
    for _ in range(steps):
        idx = sample_batch(q, len(seeds), batch, g)  # R x B, each replica its own batch
        zq, zp = encode(q_enc, p_enc, q[idx], p[idx], shuffle)  # R x B x 32 each
        loss = in_batch_loss(zq, zp)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return q_enc, p_enc


@torch.no_grad()
def in_batch_accuracy(q_enc, p_enc, q, p, seed, *, shuffle, n_batches=8):
    """Train-mode (batch statistics) top-1 of the positive among a held-out batch's 128 passages, per replica: the
    pretext monitor. `shuffle`: the passages are re-split to other devices for this reading."""
    q_enc.train(), p_enc.train()
    g = torch.Generator().manual_seed(seed)
    r = q_enc.n_replicas
    hits = torch.zeros(r, device=q.device)
    kept = [{k: v.clone() for k, v in enc.state_dict().items()} for enc in (q_enc, p_enc)]
    for _ in range(n_batches):
        idx = sample_batch(q, r, BATCH, g)
        zq, zp = encode(q_enc, p_enc, q[idx], p[idx], shuffle)
        s = zq @ zp.transpose(1, 2)  # R x B x B
        hits += (s.argmax(-1) == torch.arange(BATCH, device=q.device)).float().mean(-1)
    for enc, state in zip((q_enc, p_enc), kept):
        enc.load_state_dict(state)  # a reading leaves the running statistics as training left them
    return (hits / n_batches).tolist()


@torch.no_grad()
def corpus_recall(q_enc, p_enc, q, p):
    """Eval-mode (running statistics, no batch channel) recall@1 of each held-out question's own passage among every
    held-out passage, per replica: the retrieval DPR evaluates (§3.1 Inference: passages indexed offline)."""
    q_enc.eval(), p_enc.eval()
    r = q_enc.n_replicas
    zq = F.normalize(q_enc(q.expand(r, -1, -1)), dim=-1)  # R x M x 32
    zp = F.normalize(p_enc(p.expand(r, -1, -1)), dim=-1)
    s = zq @ zp.transpose(1, 2)  # R x M x M
    q_enc.train(), p_enc.train()
    return (s.argmax(-1) == torch.arange(len(q), device=q.device)).float().mean(-1).tolist()


def readings(q_enc, p_enc, q_te, p_te, seed):
    """A trained model's in-batch accuracy with its positives on their questions' devices and re-split, and its
    corpus recall@1, each a list over replicas."""
    return {
        "acc_aligned": in_batch_accuracy(q_enc, p_enc, q_te, p_te, seed, shuffle=False),
        "acc_resplit": in_batch_accuracy(q_enc, p_enc, q_te, p_te, seed, shuffle=True),
        "recall1": corpus_recall(q_enc, p_enc, q_te, p_te),
    }


def run(seeds, device):
    """Every model of MODELS, the shuffled model again on another stream of batches (chance's counterpart), and an
    untrained pair of towers (the regime's floor); their readings as plain lists over replicas."""
    qs, ps, _ = halves()
    tr, te = split(len(qs), seed=0)  # 1258 training, 539 held-out images
    q_tr, p_tr, q_te, p_te = (t.to(device) for t in (qs[tr], ps[tr], qs[te], ps[te]))
    out = {"chance": 1.0 / len(te)}
    for name in MODELS:
        for k, v in readings(*train(name, q_tr, p_tr, seeds), q_te, p_te, seeds[0] + 2).items():
            out[f"{name}_{k}"] = v
    for k, v in readings(*train("shuffled", q_tr, p_tr, seeds, stream=4), q_te, p_te, seeds[0] + 2).items():
        out[f"shuffled2_{k}"] = v
    q_enc, p_enc = towers(len(seeds), "ln", 1, seeds[0] + 3, device)
    out["untrained_recall1"] = corpus_recall(q_enc, p_enc, q_te, p_te)
    out["untrained_acc_aligned"] = in_batch_accuracy(q_enc, p_enc, q_te, p_te, seeds[0] + 2, shuffle=False)
    return out
