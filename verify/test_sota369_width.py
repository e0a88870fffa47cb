"""SOTA-369: contrastive learning benefits more from bigger models than supervised learning: the linear-evaluation gap to
supervised shrinks as the width grows (SimCLR §4.1, Figure 7), on a width sweep at toy scale."""

import matplotlib.pyplot as plt
import pytest
import torch

from verify.augment import Augment
from verify.data import for_replicas, split, tinted_digits
from verify.probes import frozen_features, linear_probe
from verify.simclr import train_simclr
from verify.supervised import train_supervised

# seeds (the record's `seeds:`): replicas drawn from a generator seeded with seeds[0]; len(seeds) replicas
DATA_SEED = 0  # the tinted digits and their split: the same data whatever the seeds
WIDTHS = (16, 32, 64, 128)  # SimCLR Figure 7: ResNet-50 at widths 1x, 2x, 4x (and depths); here the MLP's hidden width
STEPS, BATCH, LR = 150, 128, 1e-3  # the same for every width and both objectives
AUG = dict(names=["crop", "colour"], strength=0.5, crop_scale=(0.2, 1.0))
TWIN_SEED = 100  # counterpart of slope_contrastive_minus_init: a second untrained encoder, initialised from another seed


def probe_accuracy(f, x, y, tr, te):
    """Linear evaluation (closed-form ridge on frozen h = f(x)), per replica, R."""
    h_tr = frozen_features(f, for_replicas(x[tr], f.n_replicas))  # h_tr: R x M x H
    h_te = frozen_features(f, for_replicas(x[te], f.n_replicas))
    return linear_probe(h_tr, y[tr], h_te, y[te]).cpu()


def sweep(x, y, tr, te, seeds):
    """Linear-evaluation accuracy per (objective, width), R = len(seeds) each; 'init' is the untrained encoder
    (steps = 0)."""
    acc, r = {}, len(seeds)
    for width in WIDTHS:
        for objective, steps in (("contrastive", STEPS), ("supervised", STEPS), ("init", 0)):
            aug = Augment(**AUG)
            if objective == "supervised":
                f, _ = train_supervised(
                    x[tr], y[tr], aug, n_replicas=r, steps=steps, batch=BATCH, lr=LR, hidden=width, seed=seeds[0]
                )
            else:  # SimCLR §2.1: NT-Xent with the nonlinear head, tau 0.2 (the SOTA-366/367 checks' setting)
                net, _ = train_simclr(
                    x[tr], aug, n_replicas=r, steps=steps, batch=BATCH, tau=0.2, lr=LR, hidden=width, seed=seeds[0]
                )
                f = net.f
            acc[(objective, width)] = probe_accuracy(f, x, y, tr, te)
    for width in WIDTHS:  # counterpart: a second untrained encoder (another draw of the initial weights), no learning
        net, _ = train_simclr(
            x[tr], Augment(**AUG), n_replicas=r, steps=0, batch=BATCH, tau=0.2, lr=LR, hidden=width, seed=TWIN_SEED
        )
        acc[("init2", width)] = probe_accuracy(net.f, x, y, tr, te)
    return acc


def slope(acc, objective):
    """Least-squares slope of accuracy against log2(width), per replica: accuracy points per doubling, R."""
    u = torch.log2(torch.tensor(WIDTHS, dtype=torch.float32))  # W
    a = torch.stack([acc[(objective, w)] for w in WIDTHS])  # W x R
    uc = u - u.mean()
    return (uc[:, None] * (a - a.mean(0))).sum(0) / (uc**2).sum()  # R


@pytest.mark.claim("SOTA-369", "width-sweep")
def test_contrastive_gains_more_from_width_than_supervised(evidence, device, seeds):
    """Over hidden widths 16-128, linear evaluation of the contrastive encoder rises faster with log2(width) than that
    of the supervised encoder, beyond what the untrained encoder of the same width gains (the control)."""
    x, y, _ = tinted_digits(DATA_SEED)
    x, y = x.to(device), y.to(device)
    tr, te = split(len(x), DATA_SEED)
    acc = sweep(x, y, tr, te, seeds)
    for (objective, width), a in acc.items():
        evidence.metric(f"{objective}_w{width}", a.mean().item(), unit="accuracy", seeds=a.tolist())
    slopes = {o: slope(acc, o) for o in ("contrastive", "supervised", "init", "init2")}  # R each
    for objective, s in slopes.items():
        evidence.metric(f"{objective}_slope", s.mean().item(), unit="accuracy points per doubling", seeds=s.tolist())
    # init2 - init: the contrastive-minus-untrained slope difference with the contrastive encoder replaced by another
    # untrained one (two random-init networks: no learning, so no width benefit of learning)
    for a, b in (("contrastive", "supervised"), ("contrastive", "init"), ("init", "supervised"), ("init2", "init")):
        diff = slopes[a] - slopes[b]  # R; init - supervised is the control: no learning, the same probe and widths
        evidence.metric(f"slope_{a}_minus_{b}", diff.mean().item(), unit="accuracy points per doubling", seeds=diff.tolist())
    narrowing = (acc[("supervised", WIDTHS[0])] - acc[("contrastive", WIDTHS[0])]) - (
        acc[("supervised", WIDTHS[-1])] - acc[("contrastive", WIDTHS[-1])]
    )  # R: gap at the smallest minus largest
    evidence.metric("gap_narrowing", narrowing.mean().item(), unit="accuracy points", seeds=narrowing.tolist())

    fig, ax = plt.subplots(figsize=(5, 3.4))
    for objective, colour in (("contrastive", "C0"), ("supervised", "C1"), ("init", "0.5")):
        runs = torch.stack([acc[(objective, w)] for w in WIDTHS])  # W x R
        ax.plot(WIDTHS, runs.numpy(), color=colour, alpha=0.3, lw=1)
        ax.plot(
            WIDTHS,
            runs.mean(1).numpy(),
            color=colour,
            marker="o",
            label=f"{objective} ({slopes[objective].mean().item():+.3f} per doubling)",
        )
    ax.set_xscale("log", base=2)
    ax.set_xlabel("hidden width")
    ax.set_ylabel("linear evaluation on h")
    ax.legend(fontsize=7)
    fig.tight_layout()
    evidence.figure("accuracy_vs_width", fig, caption="Thin lines: one seed each; thick: the mean.")
    plt.close(fig)
    evidence.note(
        f"tinted digits, crop + colour(s=0.5), MLP 192-H-H-H, {STEPS} Adam steps (lr {LR}) at batch {BATCH} "
        f"for both objectives, tau 0.2, {len(seeds)} seeds; widths {WIDTHS}"
    )
