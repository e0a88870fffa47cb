"""SOTA-361's control: crop-only NT-Xent on the same digits without their tint, so that "the task is solved through
colour" is measured against a model that has no colour to use (SimCLR §3.1, Figure 6)."""

import matplotlib.pyplot as plt
import pytest
import torch

from verify.augment import Augment, random_resized_crop
from verify.data import for_replicas, split, tinted_digits
from verify.probes import frozen_features, knn_probe, linear_probe
from verify.simclr import pretext_accuracy, train_simclr

# seeds (the record's `seeds:`): replicas drawn from a generator seeded with seeds[0]; len(seeds) replicas
DATA_SEED = 0  # the tinted digits and their split: the same data whatever the seeds
DIGIT_CROP = (0.2, 1.0)  # as crop-only-shortcut: SimCLR's 0.08 leaves 2 x 2 pixels of an 8 x 8 digit
# the setting of crop-only-shortcut (verify/test_sota361_augmentation.py), so that the two models differ only in colour
TRAIN = dict(steps=250, batch=256, tau=0.2, hidden=64)
GREY_INK, GREY_PAPER = 0.75, 0.25  # the means of tinted_digits' ink U[0.5, 1] and paper U[0, 0.5] colours
TWIN_SEED = 100  # counterparts of the kNN and probe gaps: the grey-tint model again from another seed


def ink_coverage(x, tint):
    """The ink coverage in [0, 1] of tinted digits, undoing the tint: x: M x 3 x 8 x 8, tint: M x 6 -> M x 1 x 8 x 8."""
    fg, bg = tint[:, :3, None, None], tint[:, 3:, None, None]  # ink and paper colour: M x 3 x 1 x 1 each
    return ((x - bg) / (fg - bg)).mean(1, keepdim=True)  # the three channels agree up to rounding: M x 1 x 8 x 8


class RetintedCrops:
    """SimCLR crops of the ink coverage, each view painted with a fresh random ink and paper colour (drawn as
    tinted_digits draws them): the two views of an image share its digit and its crop statistics, not its colour."""

    def views(self, ink, generator):
        """R x N x 1 x 8 x 8 ink coverage -> R x N x 192 tinted crops."""
        r, n = ink.shape[:2]
        v = random_resized_crop(ink.reshape(r * n, 1, 8, 8), generator, scale=DIGIT_CROP)  # v: RN x 1 x 8 x 8
        fg = 0.5 + 0.5 * torch.rand(r * n, 3, 1, 1, generator=generator).to(v.device)  # fg: RN x 3 x 1 x 1
        bg = 0.5 * torch.rand(r * n, 3, 1, 1, generator=generator).to(v.device)  # bg: RN x 3 x 1 x 1
        return (fg * v + bg * (1 - v)).reshape(r, n, -1)  # RN x 3 x 8 x 8 -> R x N x 192


def crop_only(x, y, tr, te, seed, n_replicas):
    """Crop-only NT-Xent (SimCLR §3.1, Figure 5's 'crop' alone) on images x, R replicas from one seed; per-replica
    pretext top-1 among 511 on held-out images, linear probe and kNN on h of held-out images. Returns (net, dict of
    R-vectors)."""
    aug = Augment(["crop"], crop_scale=DIGIT_CROP)
    net, _ = train_simclr(x[tr], aug, n_replicas=n_replicas, seed=seed, **TRAIN)
    h_tr = frozen_features(net.f, for_replicas(x[tr], n_replicas))  # h_tr: R x M x 64
    h_te = frozen_features(net.f, for_replicas(x[te], n_replicas))
    return net, {
        "pretext_acc": pretext_accuracy(net, x[te], aug, seed=seed),  # R
        "probe": linear_probe(h_tr, y[tr], h_te, y[te]),  # R
        "knn": knn_probe(h_tr, y[tr], h_te, y[te]),
    }  # R


@pytest.mark.claim("SOTA-361", "crop-only-untinted-control")
def test_crop_only_on_untinted_digits_has_no_colour_route(evidence, device, seeds):
    """Trained with crops alone, the tinted digits' pretext task is easy and their kNN accuracy poor; the same digits in
    one grey tint make the task hard and the representation learn digits; re-painting the views undoes the easy task."""
    x, y, tint = (t.to(device) for t in tinted_digits(DATA_SEED))  # x: 1797 x 3 x 8 x 8
    tr, te = split(len(x), DATA_SEED)
    r = len(seeds)  # replicas, each a seed
    ink = ink_coverage(x, tint)  # ink: 1797 x 1 x 8 x 8
    grey = (GREY_INK * ink + GREY_PAPER * (1 - ink)).expand(-1, 3, -1, -1)  # one ink and paper colour for all: 1797 x 3 x 8 x 8
    tinted_net, tinted = crop_only(x, y, tr, te, seeds[0], r)
    untinted_net, untinted = crop_only(grey, y, tr, te, seeds[0], r)
    # the tinted model's pretext task on views of the same crops whose colours are drawn afresh per view
    retinted = pretext_accuracy(tinted_net, ink[te], RetintedCrops(), seed=seeds[0])  # R
    # the same re-painting for the grey-tint model, which has no colour route (counterpart of the tinted model's loss)
    untinted_retinted = pretext_accuracy(untinted_net, ink[te], RetintedCrops(), seed=seeds[0])  # R
    # the untinted-minus-tinted kNN and probe gaps where neither model has a colour route: a second grey-tint model,
    # trained alike from another seed (other initialisation, batches and crops), in place of the tinted one
    _, untinted_twin = crop_only(grey, y, tr, te, TWIN_SEED, r)
    per_seed = {
        "tinted_pretext_acc": tinted["pretext_acc"],
        "untinted_pretext_acc": untinted["pretext_acc"],
        "pretext_acc_tinted_minus_untinted": tinted["pretext_acc"] - untinted["pretext_acc"],
        "tinted_retinted_pretext_acc": retinted,
        "pretext_acc_lost_by_retinting": tinted["pretext_acc"] - retinted,
        "untinted_pretext_acc_lost_by_retinting": untinted["pretext_acc"] - untinted_retinted,
        "retinted_pretext_acc_tinted_minus_untinted": retinted - untinted_retinted,  # both models on re-painted views
        "tinted_knn": tinted["knn"],
        "untinted_knn": untinted["knn"],
        "knn_untinted_minus_tinted": untinted["knn"] - tinted["knn"],
        "tinted_probe": tinted["probe"],
        "untinted_probe": untinted["probe"],
        "probe_untinted_minus_tinted": untinted["probe"] - tinted["probe"],
        "untinted_twin_knn": untinted_twin["knn"],
        "untinted_twin_probe": untinted_twin["probe"],
        "knn_untinted_minus_untinted_twin": untinted["knn"] - untinted_twin["knn"],  # counterpart of the kNN gap
        "probe_untinted_minus_untinted_twin": untinted["probe"] - untinted_twin["probe"],  # counterpart of the probe gap
    }
    for name, v in per_seed.items():
        evidence.metric(name, v.mean().item(), unit="fraction", seeds=v.tolist())
    evidence.metric("pretext_chance", 1 / 511, unit="fraction")

    fig, ax = plt.subplots(figsize=(5, 3))
    bars = {
        "pretext top-1": ("tinted_pretext_acc", "untinted_pretext_acc", "tinted_retinted_pretext_acc"),
        "kNN digits": ("tinted_knn", "untinted_knn", None),
    }
    for j, label in enumerate(("tinted", "one grey tint", "tinted, views re-painted")):
        vals = [per_seed[k[j]].mean().item() if k[j] else 0.0 for k in bars.values()]
        ax.bar([i + 0.27 * j for i in range(len(bars))], vals, width=0.27, label=label)
    ax.set_xticks([i + 0.27 for i in range(len(bars))], list(bars))
    ax.set_ylabel("held-out accuracy")
    ax.legend(fontsize=7)
    evidence.figure(
        "crop_only_tinted_vs_untinted",
        fig,
        caption="Crop-only NT-Xent on tinted digits and on the same digits "
        f"in one grey tint: pretext top-1 among 511 and kNN digit accuracy on held-out images (means of {r} seeds).",
    )
    plt.close(fig)
    evidence.note(
        f"{r} replicas, crop area {DIGIT_CROP}, MLP 192-64-64-64 + head, NT-Xent tau 0.2, batch 256, 250 steps; "
        f"untinted: ink {GREY_INK}, paper {GREY_PAPER} grey for every image"
    )
