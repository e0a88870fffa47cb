"""SOTA-366: contrastive learning wants stronger colour distortion than supervised learning (SimCLR §3.2, Table 1)."""

import math

import matplotlib.pyplot as plt
import pytest
import torch

from verify.augment import Augment
from verify.data import for_replicas, split, tinted_digits
from verify.probes import frozen_features, knn_probe, linear_probe
from verify.simclr import train_simclr
from verify.supervised import supervised_accuracy, train_supervised

# seeds (the record's `seeds:`): replicas drawn from a generator seeded with seeds[0]; len(seeds) replicas
DATA_SEED = 0  # the tinted digits and their split: the same data whatever the seeds
STRENGTHS = (1 / 8, 1 / 4, 1 / 2, 1.0)  # SimCLR Table 1 colour-distortion strengths (Appendix A)
TAGS = ("1_8", "1_4", "1_2", "1")  # metric-name suffixes for the strengths
_SWEEPS = {}  # (seeds, device) -> sweep; both checks read one sweep when they run in the same process


def slope(values):
    """Least-squares slope of accuracy against log2(strength), per replica: accuracy change per doubling of s.
    values: one R-vector per strength -> R."""
    xs = torch.tensor([math.log2(s) for s in STRENGTHS])  # S
    ys = torch.stack(values)  # S x R
    xc = (xs - xs.mean())[:, None]  # S x 1
    return (xc * (ys - ys.mean(0))).sum(0) / (xc**2).sum()  # R


def strength_sweep(seeds, device):
    """Contrastive (linear probe, kNN) and supervised held-out accuracy at each colour strength, one R-vector each."""
    key = (tuple(seeds), str(device))
    if key in _SWEEPS:
        return _SWEEPS[key]
    x, y, _ = tinted_digits(DATA_SEED)
    x, y = x.to(device), y.to(device)
    tr, te = split(len(x), DATA_SEED)
    r = len(seeds)  # replicas, each a seed
    sweep = {"probe": [], "knn": [], "supervised": [], "supervised_probe": [], "supervised_knn": []}
    for s in STRENGTHS:
        aug = Augment(["crop", "colour"], strength=s, crop_scale=(0.2, 1.0))  # SimCLR Table 1: crop + colour(s)
        net, _ = train_simclr(x[tr], aug, n_replicas=r, steps=150, batch=256, tau=0.2, hidden=64, seed=seeds[0])
        h_tr, h_te = frozen_features(net.f, for_replicas(x[tr], r)), frozen_features(net.f, for_replicas(x[te], r))
        sweep["probe"].append(linear_probe(h_tr, y[tr], h_te, y[te]).cpu())  # R
        sweep["knn"].append(knn_probe(h_tr, y[tr], h_te, y[te]).cpu())
        # SimCLR §3.2: 'When training supervised models with the same set of augmentations'
        f, clf = train_supervised(x[tr], y[tr], aug, n_replicas=r, steps=300, batch=128, lr=3e-3, hidden=64, seed=seeds[0])
        sweep["supervised"].append(supervised_accuracy(f, clf, x[te], y[te]).cpu())
        # counterparts: the supervised encoder's frozen h read by the same ridge probe and kNN as the contrastive h
        hs_tr, hs_te = frozen_features(f, for_replicas(x[tr], r)), frozen_features(f, for_replicas(x[te], r))
        sweep["supervised_probe"].append(linear_probe(hs_tr, y[tr], hs_te, y[te]).cpu())
        sweep["supervised_knn"].append(knn_probe(hs_tr, y[tr], hs_te, y[te]).cpu())
    _SWEEPS[key] = sweep
    return sweep


def record(evidence, sweep, readout):
    """Accuracies per strength, slopes per doubling of s, and the figure, for one contrastive read-out."""
    m = {}  # name -> R: replica r has the same initialisation at every strength, so its slope is one seed's
    for i, tag in enumerate(TAGS):
        m[f"contrastive_{readout}_{tag}"] = sweep[readout][i]
        m[f"supervised_acc_{tag}"] = sweep["supervised"][i]
    m[f"contrastive_{readout}_slope"] = slope(sweep[readout])
    m["supervised_slope"] = slope(sweep["supervised"])  # control: must not rise
    m[f"{readout}_slope_minus_supervised_slope"] = slope(sweep[readout]) - slope(sweep["supervised"])
    # counterparts (SimCLR §3.2: supervised models trained with the same augmentations do not gain): the supervised
    # encoder read out as the contrastive one is, and that read-out's slope minus the supervised classifier's
    for i, tag in enumerate(TAGS):
        m[f"supervised_{readout}_{tag}"] = sweep[f"supervised_{readout}"][i]
    m[f"supervised_{readout}_slope"] = slope(sweep[f"supervised_{readout}"])
    m[f"supervised_{readout}_slope_minus_supervised_slope"] = slope(sweep[f"supervised_{readout}"]) - slope(sweep["supervised"])
    for name, v in m.items():
        evidence.metric(name, v.mean().item(), seeds=v.tolist())
    fig, ax = plt.subplots(figsize=(5, 3))
    for name, label in ((readout, f"contrastive ({readout})"), ("supervised", "supervised")):
        ax.plot(STRENGTHS, [v.mean().item() for v in sweep[name]], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("colour distortion strength s")
    ax.set_ylabel("held-out accuracy")
    ax.legend(fontsize=8)
    evidence.figure(
        "accuracy_vs_strength",
        fig,
        caption=f"Held-out accuracy against colour distortion strength s (log "
        f"scale), the contrastive model read by {readout} beside the supervised model; mean over replicas.",
    )
    r = len(sweep["probe"][0])  # replicas, each a seed
    evidence.note(
        f"tinted digits; contrastive: {r} replicas x 150 steps x batch 256, tau 0.2; supervised: {r} replicas x "
        "300 steps x batch 128, lr 3e-3; MLP width 64; slopes per doubling of s"
    )


@pytest.mark.claim("SOTA-366", "stronger-colour-for-contrastive")
def test_contrastive_linear_probe_rises_with_colour_strength_supervised_does_not(evidence, device, seeds):
    """Over colour strengths 1/8..1 the contrastive model's linear-probe accuracy rises while the same encoder trained
    with cross-entropy on the same augmentation does not gain (SimCLR Table 1's opposite trends)."""
    record(evidence, strength_sweep(seeds, device), "probe")


@pytest.mark.claim("SOTA-366", "stronger-colour-knn")
def test_contrastive_knn_rises_with_colour_strength_supervised_does_not(evidence, device, seeds):
    """The same sweep read out by a kNN classifier on the contrastive representation: accuracy rises with colour
    strength, and faster than the supervised model's."""
    record(evidence, strength_sweep(seeds, device), "knn")
