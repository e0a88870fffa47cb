"""SOTA-364 (training checks): per-device batch norm and the contrastive "cheat" on a digits toy.

Setting (all checks): sklearn digits, MLP encoder 64-128-128-32 (verify/layers.py), batch 64
split over 8 simulated devices of 8 (MoCo §3.3 uses 8 GPUs x 32), the check's seeds (the record's `seeds:`, 5)
trained as independent replicas in one vectorised model, 300 Adam steps unless stated. Metrics are means over the seeds and
carry the per-seed values; `_min` / `_max` record the extremes over seeds.
"""

import matplotlib.pyplot as plt
import pytest
import torch
import torch.nn.functional as F

from verify.augment import shift_noise
from verify.data import flat, load_digits_split, sample_batch
from verify.layers import Encoder
from verify.losses import moco_logits
from verify.moco import moco_pretext_accuracy, recalibrate_bn, shuffled_forward, train_moco
from verify.probes import frozen_features

# seeds (the record's `seeds:`): replicas drawn from a generator seeded with seeds[0]; len(seeds) replicas
STEPS = 300
DEVICES = 8  # simulated GPUs; 64 / 8 = 8 samples per device
BATCH = 64
QUEUE = 256


def moco_setup(seeds):
    """What every MoCo run of this module shares: replicas (one per seed), simulated devices, batch and queue sizes,
    and the seed of the replicas' generator."""
    return dict(n_replicas=len(seeds), devices=DEVICES, batch=BATCH, queue=QUEUE, seed=seeds[0])


def _summary(evidence, name, per_seed):
    """Record a per-seed tensor (R): its mean with the per-seed values, and its min and max over seeds."""
    per_seed = per_seed.float()
    evidence.metric(name, float(per_seed.mean()), seeds=per_seed.tolist())
    evidence.metric(name + "_min", float(per_seed.min()))
    evidence.metric(name + "_max", float(per_seed.max()))


def _decoupled_accuracies(q_enc, k_enc, data):
    """Pretext top-1 of one trained MoCo pair under three statistics regimes (each R)."""
    coupled = moco_pretext_accuracy(q_enc, k_enc, data, QUEUE, BATCH, stats="train")  # q, k share a device
    shuffled = moco_pretext_accuracy(q_enc, k_enc, data, QUEUE, BATCH, stats="shuffle")  # MoCo §3.3 split
    recalibrate_bn(q_enc, data), recalibrate_bn(k_enc, data)  # precise running stats, no lag
    evalmode = moco_pretext_accuracy(q_enc, k_enc, data, QUEUE, BATCH, stats="eval")  # no batch channel
    return coupled, shuffled, evalmode


@pytest.mark.claim("SOTA-364", "cheating")
def test_per_device_bn_lowers_loss_and_the_gain_rests_on_the_batch_channel(evidence, device, seeds):
    """Per-device BN without shuffle (query and positive key on the same device) reaches a lower loss and
    a higher pretext accuracy than shuffle BN, and that advantage disappears when the statistics are decoupled."""
    data = load_digits_split(device=device)
    runs = {}
    for mode in ("per_device", "shuffle", "global"):  # MoCo §3.3 no fix / MoCo fix / SimCLR §2.2 fix
        q_enc, k_enc, _, hist = train_moco(
            data,
            **moco_setup(seeds),
            norm="bn",
            bn_mode=mode,
            steps=STEPS,
            device=device,
        )
        runs[mode] = (q_enc, k_enc, hist)
        loss, acc = hist["loss"], hist["pretext_acc"]  # T x R each
        _summary(evidence, f"{mode}_loss_step100", loss[90:110].mean(0))  # seed symptom: loss at step t
        _summary(evidence, f"{mode}_loss_end", loss[-20:].mean(0))
        _summary(evidence, f"{mode}_pretext_acc_train", acc[-20:].mean(0))  # what the training loop reports
        coupled, shuffled, evalmode = _decoupled_accuracies(q_enc, k_enc, data)
        _summary(evidence, f"{mode}_acc_coupled", coupled)
        _summary(evidence, f"{mode}_acc_shuffled", shuffled)
        _summary(evidence, f"{mode}_acc_eval", evalmode)
        runs[mode] += (coupled, shuffled, evalmode)
    L = {m: runs[m][2]["loss"] for m in runs}
    A = {m: runs[m][2]["pretext_acc"][-20:].mean(0) for m in runs}
    # symptom 1: "training loss drops faster with the bug than without it" (per seed; seeds share inits)
    _summary(evidence, "loss_step100_shuffle_minus_nofix", L["shuffle"][90:110].mean(0) - L["per_device"][90:110].mean(0))
    _summary(evidence, "loss_step100_global_minus_nofix", L["global"][90:110].mean(0) - L["per_device"][90:110].mean(0))
    # counterpart: the same gap with the no-fix model replaced by the other leak-free model (global BN)
    _summary(evidence, "loss_step100_shuffle_minus_global", L["shuffle"][90:110].mean(0) - L["global"][90:110].mean(0))
    # symptom 2: pretext accuracy higher with the bug
    _summary(evidence, "pretext_acc_nofix_minus_shuffle", A["per_device"] - A["shuffle"])
    _summary(evidence, "pretext_acc_nofix_minus_global", A["per_device"] - A["global"])
    _summary(evidence, "pretext_acc_global_minus_shuffle", A["global"] - A["shuffle"])  # counterpart: both leak-free
    # decoupling: accuracy in the training regime minus accuracy with the batch channel cut
    nofix_c, nofix_s, nofix_e = runs["per_device"][3:]
    shuf_c, shuf_s, shuf_e = runs["shuffle"][3:]
    glob_c, _, glob_e = runs["global"][3:]
    _summary(evidence, "nofix_drop_when_keys_shuffled", nofix_c - nofix_s)  # effect
    _summary(evidence, "nofix_drop_in_eval_mode", nofix_c - nofix_e)  # effect
    _summary(evidence, "shufflefix_drop_in_eval_mode", shuf_s - shuf_e)  # control: own regime -> decoupled
    _summary(evidence, "globalfix_drop_in_eval_mode", glob_c - glob_e)  # control (SimCLR fix, but a MoCo queue)
    # is the channel learned or passive? the shuffle-trained model read with the leaky (coupled) split
    _summary(evidence, "shufflefix_gain_when_coupled", shuf_c - shuf_s)
    _summary(evidence, "learned_cheat_margin", (nofix_c - nofix_s) - (shuf_c - shuf_s))  # > 0 only if learned
    # counterpart of the margin (as sub-batch-trend's leak-free margin): the global-BN model, trained with no device
    # split and so with nothing to learn from one (SimCLR §2.2), read with the same 8-device split in place of no fix
    q_g, k_g = runs["global"][0], runs["global"][1]
    for enc in (q_g, k_g):
        enc.set_devices(DEVICES)
    glob_c8 = moco_pretext_accuracy(q_g, k_g, data, QUEUE, BATCH, stats="train")  # q, k share one of 8 devices
    glob_s8 = moco_pretext_accuracy(q_g, k_g, data, QUEUE, BATCH, stats="shuffle")  # MoCo §3.3 split
    _summary(evidence, "leak_free_margin", (glob_c8 - glob_s8) - (shuf_c - shuf_s))
    evidence.note("pretext accuracy = top-1 of the positive among 1+256 keys; eval mode uses re-estimated BN stats")


@pytest.mark.claim("SOTA-364", "knn-monitor")
def test_knn_monitor_for_every_normalisation_variant(evidence, device, seeds):
    """A kNN monitor on held-out digits over training for per-device BN without fix, shuffle BN, global BN,
    LayerNorm and no normalisation: is the no-fix representation worse than the fixes'?"""
    data = load_digits_split(device=device)
    variants = {
        "nofix": ("bn", "per_device"),
        "shuffle": ("bn", "shuffle"),
        "global": ("bn", "global"),
        "layernorm": ("ln", "per_device"),
        "nonorm": ("none", "per_device"),
    }
    knn = {}
    for name, (norm, mode) in variants.items():
        _, _, _, hist = train_moco(
            data,
            **moco_setup(seeds),
            norm=norm,
            bn_mode=mode,
            steps=STEPS,
            monitor_every=150,
            device=device,
        )
        knn[name] = hist["knn"]  # knn: 3 x R at steps 1, 150, 300 (MoCo App. A.1 monitor, k=20, t=0.1)
        _summary(evidence, f"{name}_knn_init", knn[name][0])
        _summary(evidence, f"{name}_knn_mid", knn[name][1])
        _summary(evidence, f"{name}_knn_end", knn[name][-1])
        _summary(evidence, f"{name}_pretext_acc_train", hist["pretext_acc"][-20:].mean(0))
    for fix in ("shuffle", "global", "layernorm", "nonorm"):
        _summary(evidence, f"knn_{fix}_minus_nofix", knn[fix][-1] - knn["nofix"][-1])
    # control: two variants without any batch channel should agree with each other
    _summary(evidence, "knn_layernorm_minus_nonorm", knn["layernorm"][-1] - knn["nonorm"][-1])
    # control: global BN over shuffle BN, neither leaking (as sub-batch-trend's leak-free margin); a gap as large as
    # global - no fix means that gap comes from 64- vs 8-sample statistics, not from the leak
    _summary(evidence, "knn_global_minus_shuffle", knn["global"][-1] - knn["shuffle"][-1])
    # counterpart of knn_shuffle_minus_nofix: the no-fix model replaced by the other leak-free model (global BN)
    _summary(evidence, "knn_shuffle_minus_global", knn["shuffle"][-1] - knn["global"][-1])


def _train_memory_bank(data, seeds, device, steps=STEPS, n_neg=QUEUE, tau=0.2, bank_m=0.5, lr=3e-3):
    """Instance discrimination with a memory bank (Wu et al. 2018, as MoCo §3.2 / Fig. 2b describe): the positive
    for image i is its bank entry written in an earlier mini-batch, negatives are random bank entries.
    Per-device BN (8 x 8), no shuffle; R = len(seeds) replicas drawn from a generator seeded with seeds[0].
    Returns (encoder, bank, per-step pretext accuracy T x R)."""
    r = len(seeds)
    g = torch.Generator().manual_seed(seeds[0])
    torch.manual_seed(seeds[0])
    enc = Encoder(r, "bn", DEVICES).to(device)
    opt = torch.optim.Adam(enc.parameters(), lr=lr)
    x_tr = data["x_train"]
    n = x_tr.shape[0]
    views = flat(shift_noise(x_tr.expand(r, -1, -1, -1), g))  # views: R x Ntr x 64
    bank = F.normalize(frozen_features(enc, views), dim=-1)  # bank: R x Ntr x D, one entry per image
    rows = torch.arange(r, device=device)[:, None]
    accs = []
    for _ in range(steps):
        idx = sample_batch(x_tr, r, BATCH, g)  # idx: R x N
        q = F.normalize(enc(flat(shift_noise(x_tr[idx], g))), dim=-1)  # q: R x N x D, per-device BN in train mode
        neg = bank[rows, torch.randint(0, n, (r, n_neg), generator=g).to(device)]  # neg: R x K x D
        logits = moco_logits(q, bank[rows, idx], neg, tau)  # R x N x (1+K); positive from an earlier batch
        loss = F.cross_entropy(logits.reshape(-1, 1 + n_neg), torch.zeros(r * BATCH, dtype=torch.long, device=device))
        opt.zero_grad(set_to_none=True)
        (loss * r).backward()  # sum over replicas
        opt.step()
        with torch.no_grad():
            accs.append((logits.argmax(-1) == 0).float().mean(1).cpu())
            bank[rows, idx] = F.normalize(bank_m * bank[rows, idx] + (1 - bank_m) * q, dim=-1)  # Wu et al. §3.2 update
    return enc, bank, torch.stack(accs)


@torch.no_grad()
def _bank_pretext_accuracy(enc, bank, data, stats, n_batches=8, n_neg=QUEUE, tau=0.2, seed=123):
    """Pretext top-1 of the memory-bank model on fresh batches, queries encoded with the training device split
    (`stats="train"`), re-split across devices (`"shuffle"`, as MoCo §3.3 does to keys) or in eval mode (`"eval"`)."""
    g = torch.Generator().manual_seed(seed)
    r = enc.n_replicas
    rows = torch.arange(r, device=bank.device)[:, None]
    saved = [(b, b.clone()) for b in enc.buffers()]
    enc.train(stats != "eval")
    accs = []
    for _ in range(n_batches):
        idx = sample_batch(data["x_train"], r, BATCH, g)  # idx: R x N
        x = flat(shift_noise(data["x_train"][idx], g))  # x: R x N x 64
        q = F.normalize(shuffled_forward(enc, x, g) if stats == "shuffle" else enc(x), dim=-1)  # q: R x N x D
        neg = bank[rows, torch.randint(0, bank.shape[1], (r, n_neg), generator=g).to(bank.device)]
        accs.append((moco_logits(q, bank[rows, idx], neg, tau).argmax(-1) == 0).float().mean(1))
    for b, v in saved:
        b.copy_(v)
    enc.train()
    return torch.stack(accs).mean(0)  # R


@pytest.mark.claim("SOTA-364", "memory-bank-immune")
def test_memory_bank_shows_no_batch_channel_advantage(evidence, device, seeds):
    """A memory-bank model with per-device BN gains nothing from the batch statistics (train-mode pretext
    accuracy ~ eval-mode), while the in-batch MoCo model without shuffle loses accuracy when they are decoupled."""
    data = load_digits_split(device=device)
    enc, bank, acc_hist = _train_memory_bank(data, seeds, device=device)
    bank_train = _bank_pretext_accuracy(enc, bank, data, "train")
    bank_shuf = _bank_pretext_accuracy(enc, bank, data, "shuffle")
    recalibrate_bn(enc, data)
    bank_eval = _bank_pretext_accuracy(enc, bank, data, "eval")
    _summary(evidence, "bank_pretext_acc_train", acc_hist[-20:].mean(0))
    _summary(evidence, "bank_acc_trainmode", bank_train)
    _summary(evidence, "bank_acc_evalmode", bank_eval)
    _summary(evidence, "bank_drop_when_shuffled", bank_train - bank_shuf)  # immune: ~0
    _summary(evidence, "bank_drop_in_eval_mode", bank_train - bank_eval)  # immune: <= ~0
    q_enc, k_enc, _, hist = train_moco(
        data,
        **moco_setup(seeds),
        norm="bn",
        bn_mode="per_device",
        steps=STEPS,
        device=device,
    )
    coupled, shuffled, evalmode = _decoupled_accuracies(q_enc, k_enc, data)
    _summary(evidence, "inbatch_acc_coupled", coupled)
    _summary(evidence, "inbatch_drop_when_keys_shuffled", coupled - shuffled)
    _summary(evidence, "inbatch_drop_in_eval_mode", coupled - evalmode)
    _summary(evidence, "inbatch_minus_bank_drop_when_shuffled", (coupled - shuffled) - (bank_train - bank_shuf))
    # counterpart: the same difference with the leaky in-batch model replaced by the fixed one, in-batch MoCo with
    # global BN (SimCLR §2.2: one set of statistics, no per-device signature), read in its own regime
    q_g, k_g, _, _ = train_moco(data, **moco_setup(seeds), norm="bn", bn_mode="global", steps=STEPS, device=device)
    g_coupled = moco_pretext_accuracy(q_g, k_g, data, QUEUE, BATCH, stats="train")
    g_shuffled = moco_pretext_accuracy(q_g, k_g, data, QUEUE, BATCH, stats="shuffle")
    _summary(evidence, "inbatch_global_drop_when_keys_shuffled", g_coupled - g_shuffled)
    _summary(evidence, "inbatch_global_minus_bank_drop_when_shuffled", (g_coupled - g_shuffled) - (bank_train - bank_shuf))


def _train_batch_ranking(data, norm, devices, label, seeds, device, steps=STEPS, tau=0.2, lr=3e-3):
    """In-batch ranking: for each query, rank the other N-1 samples of its batch with a learned bilinear score
    z_i^T W z_j; relevant candidates are those on the query's device (`label="device"`: the target is a function of
    batch membership only, devices are filled at random) or of the query's class (`label="class"`: content).
    R = len(seeds) replicas drawn from a generator seeded with seeds[0]. Returns train-mode and eval-mode top-1
    accuracy (R each) on held-out batches, and chance level."""
    r = len(seeds)
    g = torch.Generator().manual_seed(seeds[0])
    torch.manual_seed(seeds[0])
    enc = Encoder(r, norm, devices).to(device)
    w = torch.nn.Parameter(0.01 * torch.randn(r, 32, 32, generator=g).to(device))  # scorer W: R x D x D
    opt = torch.optim.Adam(list(enc.parameters()) + [w], lr=lr)
    eye = torch.eye(BATCH, dtype=torch.bool, device=device)
    group = torch.arange(BATCH, device=device) // (BATCH // 16)  # 16 groups of 4 (the device split of the BN effect)

    def loss_acc(x, y):
        z = F.normalize(enc(x), dim=-1)  # z: R x N x D
        s = torch.bmm(torch.bmm(z, w), z.transpose(1, 2)) / tau  # s: R x N x N
        s = s.masked_fill(eye, float("-inf"))  # a query never ranks itself
        if label == "device":
            rel = (group[:, None] == group[None, :]).expand(r, -1, -1) & ~eye  # rel: R x N x N, same group
        else:
            rel = (y[:, :, None] == y[:, None, :]) & ~eye  # same class
        loss = torch.logsumexp(s, -1) - torch.logsumexp(s.masked_fill(~rel, float("-inf")), -1)  # multi-positive
        acc = rel.gather(-1, s.argmax(-1, keepdim=True)).float().squeeze(-1).mean(1)  # top-1 relevant, R
        return loss.mean(1), acc, rel.float().sum(-1).mean(1) / (BATCH - 1)

    for _ in range(steps):
        idx = sample_batch(data["x_train"], r, BATCH, g)
        loss, _, _ = loss_acc(flat(shift_noise(data["x_train"][idx], g)), data["y_train"][idx])
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        opt.step()
    out = {}
    with torch.no_grad():
        for mode in ("train", "eval"):
            enc.train(mode == "train")
            accs, chance = [], []
            for _ in range(8):
                idx = sample_batch(data["x_test"], r, BATCH, g)
                _, acc, ch = loss_acc(flat(shift_noise(data["x_test"][idx], g)), data["y_test"][idx])
                accs.append(acc), chance.append(ch)
            out[mode] = torch.stack(accs).mean(0)
            out["chance"] = torch.stack(chance).mean(0)
    return out


@pytest.mark.claim("SOTA-364", "beyond-contrastive")
def test_batch_membership_target_is_exploited_through_per_device_bn(evidence, device, seeds):
    """When the ranking target is a function of batch membership, a per-device-BN model solves it in train mode
    and drops to chance in eval mode; LayerNorm, global BN and a content (class) target show no such gap."""
    data = load_digits_split(device=device)
    cases = {
        "bn_device": ("bn", 16, "device"),  # effect: BN over the same 16 groups of 4 that define the target
        "ln_device": ("ln", 16, "device"),  # control: no cross-sample normalisation
        "globalbn_device": ("bn", 1, "device"),  # control: one set of statistics for the whole batch
        "bn_class": ("bn", 16, "class"),
    }  # control: target is content, not batch membership
    for name, (norm, devices, label) in cases.items():
        out = _train_batch_ranking(data, norm, devices, label, seeds, device=device)
        _summary(evidence, f"{name}_acc_trainmode", out["train"])
        _summary(evidence, f"{name}_acc_evalmode", out["eval"])
        _summary(evidence, f"{name}_gap", out["train"] - out["eval"])
        evidence.metric(f"{name}_chance", float(out["chance"].mean()))


@pytest.mark.claim("SOTA-364", "figure-a1")
def test_figure_a1_pretext_and_knn_curves_with_and_without_shuffle(evidence, device, seeds):
    """MoCo Fig. A.1's shape: pretext accuracy and a held-out kNN monitor over training with and without shuffle
    BN; and whether the no-fix kNN deficit grows from mid to end of training ("training longer ... overfits more")."""
    data = load_digits_split(device=device)
    steps = 450
    curves, encoders = {}, {}
    for mode, label in (("per_device", "per-device BN (no fix)"), ("shuffle", "shuffle BN (MoCo fix)")):
        q_enc, k_enc, _, hist = train_moco(
            data,
            **moco_setup(seeds),
            norm="bn",
            bn_mode=mode,
            steps=steps,
            monitor_every=75,
            device=device,
        )
        curves[mode], encoders[mode] = (label, hist), (q_enc, k_enc)
    knn_steps = curves["per_device"][1]["knn_step"]  # [1, 75, ..., 450]
    gap = curves["shuffle"][1]["knn"] - curves["per_device"][1]["knn"]  # gap: len(knn_steps) x R, fix - no fix
    mid = knn_steps.index(steps // 2)
    _summary(evidence, "knn_gap_mid", gap[mid])
    _summary(evidence, "knn_gap_end", gap[-1])
    _summary(evidence, "knn_gap_growth", gap[-1] - gap[mid])  # "training longer without shuffling BN overfits more"
    acc_gap = curves["per_device"][1]["pretext_acc"][-50:].mean(0) - curves["shuffle"][1]["pretext_acc"][-50:].mean(0)
    _summary(evidence, "pretext_acc_gap_end", acc_gap)  # no fix minus fix: the curve that "endorses" the bug
    # control: the same gap on fresh batches (the same images for both models), with and without the batch channel
    shuffle_own = moco_pretext_accuracy(*encoders["shuffle"], data, QUEUE, BATCH, stats="shuffle")  # R
    nofix_coupled = moco_pretext_accuracy(*encoders["per_device"], data, QUEUE, BATCH, stats="train")  # the leak
    nofix_resplit = moco_pretext_accuracy(*encoders["per_device"], data, QUEUE, BATCH, stats="shuffle")  # MoCo §3.3 cut
    _summary(evidence, "pretext_acc_gap_coupled", nofix_coupled - shuffle_own)  # the effect, read as the control is
    _summary(evidence, "pretext_acc_gap_keys_resplit", nofix_resplit - shuffle_own)  # control: no channel, no gap
    for mode in curves:
        _summary(evidence, f"{mode}_knn_end", curves[mode][1]["knn"][-1])
        _summary(evidence, f"{mode}_knn_peak_minus_end", curves[mode][1]["knn"].max(0).values - curves[mode][1]["knn"][-1])
    # counterparts: the same gaps with the no-fix model replaced by a leak-free one, global BN (SimCLR §2.2), trained
    # alike (as knn-monitor's and cheating's counterparts at 300 steps)
    _, _, _, hist_g = train_moco(
        data, **moco_setup(seeds), norm="bn", bn_mode="global", steps=steps, monitor_every=75, device=device
    )
    gap_g = curves["shuffle"][1]["knn"] - hist_g["knn"]  # len(knn_steps) x R, shuffle - global
    _summary(evidence, "knn_shuffle_minus_global_end", gap_g[-1])
    _summary(evidence, "knn_shuffle_minus_global_growth", gap_g[-1] - gap_g[mid])
    acc_gap_g = hist_g["pretext_acc"][-50:].mean(0) - curves["shuffle"][1]["pretext_acc"][-50:].mean(0)
    _summary(evidence, "pretext_acc_global_minus_shuffle_end", acc_gap_g)

    fig = figure_a1(curves, knn_steps, steps)
    evidence.figure(
        "figure_a1",
        fig,
        caption="Our toy version of MoCo Figure A.1: pretext accuracy (left) and held-out "
        "kNN accuracy (right) during training, with and without shuffle BN; mean over seeds with the min-max band.",
    )
    plt.close(fig)


def figure_a1(curves, knn_steps, steps):
    """MoCo Fig. A.1 analogue: smoothed pretext accuracy and the kNN monitor, per-device BN against shuffle BN."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.4))
    kernel = torch.ones(1, 1, 25) / 25  # moving average over 25 steps for the pretext curve
    for mode, color in (("per_device", "tab:red"), ("shuffle", "tab:blue")):
        label, hist = curves[mode]
        acc = hist["pretext_acc"].T[:, None, :]  # acc: R x 1 x T
        smooth = F.conv1d(acc, kernel).squeeze(1)  # smooth: R x (T-24)
        x = torch.arange(25, steps + 1)
        ax1.plot(x, smooth.mean(0), color=color, label=label)
        ax1.fill_between(x, smooth.min(0).values, smooth.max(0).values, color=color, alpha=0.2)
        k = hist["knn"]  # k: len(knn_steps) x R
        ax2.plot(knn_steps, k.mean(1), "o-", color=color, label=label)
        ax2.fill_between(knn_steps, k.min(1).values, k.max(1).values, color=color, alpha=0.2)
    ax1.set(xlabel="step", ylabel="pretext accuracy (train mode)", title="pretext task (1 + 256 keys)")
    ax2.set(xlabel="step", ylabel="kNN accuracy (held-out)", title="kNN monitor (k=20, cosine)")
    ax1.legend(fontsize=8)
    n_seeds = curves["per_device"][1]["pretext_acc"].shape[1]  # pretext_acc: T x R
    fig.suptitle(f"SOTA-364 toy Fig. A.1: digits MLP, 8 devices x 8, {n_seeds} seeds (mean, min-max band)", fontsize=9)
    fig.tight_layout()
    return fig
