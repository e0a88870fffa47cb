"""SOTA-364 at smaller sub-batches: MoCo with per-device BN and no shuffle, with 16, 8 and 4 simulated devices of
4, 8 and 16 images (batch 64): as the sub-batch shrinks its statistics are a stronger signature; does a learned
cheat or a worse kNN representation appear (MoCo §3.3, Appendix A.9 at 32 images per GPU)?"""

import matplotlib.pyplot as plt
import pytest
import torch

from verify.data import load_digits_split
from verify.moco import moco_pretext_accuracy, train_moco

# seeds (the record's `seeds:`): replicas drawn from a generator seeded with seeds[0]; len(seeds) replicas
STEPS, BATCH, QUEUE = 300, 64, 256  # as the cheating check
SUB_BATCHES = (4, 8, 16)  # images per simulated device; devices = 64 / sub-batch


def _gain_when_coupled(q_enc, k_enc, data, devices):
    """Pretext top-1 with the training device split minus with the keys shuffled across devices (MoCo §3.3); R."""
    for enc in (q_enc, k_enc):
        enc.set_devices(devices)  # read every model with the same split
    coupled = moco_pretext_accuracy(q_enc, k_enc, data, QUEUE, BATCH, stats="train")  # q, k share a device
    shuffled = moco_pretext_accuracy(q_enc, k_enc, data, QUEUE, BATCH, stats="shuffle")
    return coupled - shuffled


def _summary(evidence, name, per_seed):
    """Record the mean over seeds of a per-seed tensor (R) with its per-seed values, and its min and max."""
    evidence.metric(name, float(per_seed.mean()), seeds=per_seed.tolist())
    evidence.metric(name + "_min", float(per_seed.min()))
    evidence.metric(name + "_max", float(per_seed.max()))


@pytest.mark.claim("SOTA-364", "sub-batch-trend")
def test_learned_cheat_and_knn_deficit_against_sub_batch_size(evidence, device, seeds):
    """Per sub-batch of 4, 8, 16: the no-fix model's gain from the shared device minus a shuffle-trained model's
    (learned-cheat margin), the same margin between a global-BN and the shuffle model (leak-free control), and the
    held-out kNN accuracy of the shuffle fix minus no fix."""
    data = load_digits_split(device=device)
    train = dict(n_replicas=len(seeds), batch=BATCH, steps=STEPS, queue=QUEUE, monitor_every=STEPS, seed=seeds[0], device=device)
    q_g, k_g, _, hist_g = train_moco(data, norm="bn", bn_mode="global", devices=1, **train)  # no device split to learn
    rows = {}
    for n in SUB_BATCHES:
        devices = BATCH // n
        nofix = train_moco(data, norm="bn", bn_mode="per_device", devices=devices, **train)
        shuffle = train_moco(data, norm="bn", bn_mode="shuffle", devices=devices, **train)
        gain = {
            name: _gain_when_coupled(run[0], run[1], data, devices)
            for name, run in (("nofix", nofix), ("shuffle", shuffle), ("global", (q_g, k_g)))
        }  # R each
        rows[n] = {
            "passive_gain": gain["shuffle"],
            "learned_cheat_margin": gain["nofix"] - gain["shuffle"],
            "leak_free_margin": gain["global"] - gain["shuffle"],
            "knn_shuffle_minus_nofix": shuffle[3]["knn"][-1] - nofix[3]["knn"][-1],
            "nofix_knn_end": nofix[3]["knn"][-1],
            "knn_global_minus_shuffle": hist_g["knn"][-1] - shuffle[3]["knn"][-1],  # two leak-free models
        }
        for key, per_seed in rows[n].items():
            _summary(evidence, f"{key}_b{n}", per_seed)
    for key in ("learned_cheat_margin", "knn_shuffle_minus_nofix", "passive_gain", "leak_free_margin"):  # the trend: 4 against 16
        _summary(evidence, f"{key}_b4_minus_b16", rows[4][key] - rows[16][key])
    evidence.figure(
        "sub_batch_trend",
        _figure(rows, len(seeds)),
        caption="Left: the learned cheat (no-fix minus shuffle-trained gain "
        "from the shared device) against images per device; right: kNN accuracy, shuffle fix minus no fix. "
        "Mean and range over seeds.",
    )
    evidence.note(
        f"digits MoCo toy, batch {BATCH}, {STEPS} steps, queue {QUEUE}, {len(seeds)} seeds; sub-batches "
        f"{SUB_BATCHES}; one global-BN model read at each split"
    )


def _figure(rows, n_seeds):
    """Learned-cheat margin, leak-free margin, passive gain and kNN deficit against the sub-batch size."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8.5, 3.3))
    xs = list(SUB_BATCHES)
    for key, color in (("learned_cheat_margin", "tab:red"), ("leak_free_margin", "tab:grey"), ("passive_gain", "tab:blue")):
        vals = torch.stack([rows[n][key] for n in xs])  # vals: sub-batches x R
        ax1.errorbar(
            xs,
            vals.mean(1),
            yerr=[vals.mean(1) - vals.min(1).values, vals.max(1).values - vals.mean(1)],
            marker="o",
            color=color,
            capsize=3,
            label=key.replace("_", " "),
        )
    vals = torch.stack([rows[n]["knn_shuffle_minus_nofix"] for n in xs])  # vals: sub-batches x R
    ax2.errorbar(
        xs,
        vals.mean(1),
        yerr=[vals.mean(1) - vals.min(1).values, vals.max(1).values - vals.mean(1)],
        marker="o",
        capsize=3,
        color="tab:purple",
    )
    for ax in (ax1, ax2):
        ax.axhline(0, color="k", lw=0.6)
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [str(x) for x in xs])
        ax.set_xlabel("images per simulated device (batch 64)")
    ax1.set_ylabel("pretext top-1 difference")
    ax1.legend(fontsize=7)
    ax2.set_ylabel("kNN: shuffle fix - no fix")
    fig.suptitle(f"SOTA-364 toy: the signature against the sub-batch size ({n_seeds} seeds, mean and range)", fontsize=9)
    fig.tight_layout()
    return fig
