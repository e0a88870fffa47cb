"""SOTA-367: batch sizes compared at an equal number of Adam steps and at equal epochs, contrastive (SimCLR NT-Xent)
against a supervised model of the same encoder trained at the same batch sizes (SimCLR §5.2: "In contrast to
supervised learning (Goyal et al., 2017), in contrastive learning, larger batch sizes provide more negative
examples, facilitating convergence (i.e. taking fewer epochs and steps for a given accuracy)")."""

import matplotlib.pyplot as plt
import pytest
import torch

from verify.augment import Augment
from verify.data import for_replicas, split, tinted_digits
from verify.losses import nt_xent
from verify.probes import frozen_features, knn_probe, linear_probe
from verify.simclr import sqrt_scaled_lr, train_simclr
from verify.supervised import train_supervised

# seeds (the record's `seeds:`): replicas drawn from a generator seeded with seeds[0]; len(seeds) replicas
DATA_SEED = 0  # the tinted digits and their split: the same data whatever the seeds
BATCHES = (16, 256)  # 2N - 2 = 30 against 510 negatives per anchor (SimCLR eq. 1)
STEPS = 79  # equal optimiser steps: 16 epochs at batch 256 (the long run of batch-size-convergence), 1 at batch 16
EPOCHS = 2  # equal epochs for both batch sizes: 157 steps at batch 16, 10 at batch 256
HIDDEN = 64
LR = 1e-3  # Adam, at equal steps for both batch sizes
AUG = dict(names=["crop", "colour"], strength=0.5, crop_scale=(0.2, 1.0))  # as the batch-size-convergence check


def probe(f, x, y, tr, te):
    """Linear-probe (closed-form ridge) and kNN accuracy on frozen h = f(x), per replica: R, R."""
    h_tr = frozen_features(f, for_replicas(x[tr], f.n_replicas))  # h_tr: R x M x H
    h_te = frozen_features(f, for_replicas(x[te], f.n_replicas))
    return linear_probe(h_tr, y[tr], h_te, y[te]).cpu(), knn_probe(h_tr, y[tr], h_te, y[te]).cpu()


def nt_xent_within_groups(group, tau):
    """train_simclr's `loss`: NT-Xent (SimCLR eq. 1) within consecutive groups of `group` images of the (random) batch,
    so that each anchor has 2 * group - 2 negatives whatever the batch size; the mean over all 2N anchors."""

    def loss(z1, z2, g):  # z1, z2: R x N x D, l2-normalised
        r, n, d = z1.shape
        part_loss, part_acc = nt_xent(z1.reshape(r * n // group, group, d), z2.reshape(r * n // group, group, d), tau)
        return part_loss.view(r, -1).mean(1), part_acc.view(r, -1).mean(1)  # R, R

    return loss


def accuracy(objective, batch, steps, lr, x, y, tr, te, seeds):
    """Train R = len(seeds) replicas from seeds[0] with `objective` at `batch` for `steps` Adam steps at `lr` and
    probe h: R, R."""
    aug = Augment(**AUG)
    r, seed = len(seeds), seeds[0]
    if objective == "contrastive_fixed_negatives":  # the images of `batch`, the negatives of batch BATCHES[0]
        grouped = nt_xent_within_groups(BATCHES[0], 0.2)  # tau as the contrastive runs
        net, _ = train_simclr(x[tr], aug, n_replicas=r, steps=steps, batch=batch, lr=lr, hidden=HIDDEN, seed=seed, loss=grouped)
        return probe(net.f, x, y, tr, te)
    if objective == "contrastive":
        net, _ = train_simclr(x[tr], aug, n_replicas=r, steps=steps, batch=batch, tau=0.2, lr=lr, hidden=HIDDEN, seed=seed)
        return probe(net.f, x, y, tr, te)
    f, _ = train_supervised(x[tr], y[tr], aug, n_replicas=r, steps=steps, batch=batch, lr=lr, hidden=HIDDEN, seed=seed)
    return probe(f, x, y, tr, te)


def measure(x, y, tr, te, seeds):
    """Probe and kNN accuracy per (objective, budget, batch), R each: equal steps, equal epochs and the untrained net."""
    epoch_steps = {b: round(EPOCHS * len(tr) / b) for b in BATCHES}  # equal epochs -> steps per batch size
    acc = {}  # (readout, objective, budget, batch) -> R
    # equal steps: one learning rate for every batch size, so that only the batch (its images and its 2N - 2
    # negatives) differs; equal epochs: SimCLR Appendix B.1's square-root scaling, as the batch-size-convergence check
    plans = (
        ("steps", {b: STEPS for b in BATCHES}, lambda b: LR),
        ("epochs", epoch_steps, sqrt_scaled_lr),
        ("init", {BATCHES[0]: 0}, lambda b: LR),
    )
    for objective in ("contrastive", "supervised"):
        for budget, steps, lr in plans:
            for b, n in steps.items():
                acc[("probe", objective, budget, b)], acc[("knn", objective, budget, b)] = accuracy(
                    objective, b, n, lr(b), x, y, tr, te, seeds
                )
    # the counterpart arm: batch 256's images per step with batch 16's negatives (NT-Xent within groups of 16), at
    # equal steps and the same learning rate, so that of SimCLR §5.2's "more negative examples" only the images remain
    key = ("contrastive_fixed_negatives", "steps", BATCHES[-1])
    acc[("probe", *key)], acc[("knn", *key)] = accuracy(key[0], BATCHES[-1], STEPS, LR, x, y, tr, te, seeds)
    return acc, epoch_steps


def plot(evidence, acc):
    fig, axes = plt.subplots(2, 2, figsize=(8, 5.5), sharex=True)
    for row, readout in zip(axes, ("probe", "knn")):
        for ax, budget in zip(row, ("steps", "epochs")):
            for objective, colour in (("contrastive", "C0"), ("supervised", "C1")):
                runs = torch.stack([acc[(readout, objective, budget, b)] for b in BATCHES])  # batches x R
                ax.plot(BATCHES, runs.numpy(), color=colour, alpha=0.3, lw=1)
                ax.plot(BATCHES, runs.mean(1).numpy(), color=colour, marker="o", label=objective)
                ax.axhline(acc[(readout, objective, "init", BATCHES[0])].mean().item(), color=colour, ls=":", lw=1)
            ax.set_xscale("log", base=2)
            ax.set_title(f"{readout}, equal " + (f"steps ({STEPS})" if budget == "steps" else f"epochs ({EPOCHS})"), fontsize=9)
    for ax in axes[1]:
        ax.set_xlabel("batch size")
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    evidence.figure(
        "accuracy_vs_batch_equal_steps", fig, caption="Thin lines: one seed each; thick: the mean; dotted: the untrained encoder."
    )
    plt.close(fig)


@pytest.mark.claim("SOTA-367", "equal-steps")
def test_at_equal_steps_the_larger_batch_gains_more_for_contrastive_than_supervised(evidence, device, seeds):
    """At equal Adam steps batch 256 beats batch 16 by more for the contrastive model (30 vs 510 negatives) than for
    the supervised one (no negatives, the same images per step); at equal epochs the supervised gain stays small."""
    x, y, _ = tinted_digits(DATA_SEED)
    x, y = x.to(device), y.to(device)
    tr, te = split(len(x), DATA_SEED)
    acc, epoch_steps = measure(x, y, tr, te, seeds)
    small, large = BATCHES
    for (readout, objective, budget, b), a in acc.items():
        evidence.metric(f"{readout}_{objective}_{budget}_b{b}", a.mean().item(), unit="accuracy", seeds=a.tolist())
    gap = {}  # (readout, objective, budget) -> R, large minus small batch per seed
    for readout in ("probe", "knn"):
        for objective in ("contrastive", "supervised"):
            for budget in ("steps", "epochs"):
                d = acc[(readout, objective, budget, large)] - acc[(readout, objective, budget, small)]
                gap[(readout, objective, budget)] = d
                evidence.metric(
                    f"{readout}_{objective}_equal_{budget}_gap", d.mean().item(), unit="accuracy points", seeds=d.tolist()
                )
        excess = gap[(readout, "contrastive", "steps")] - gap[(readout, "supervised", "steps")]  # R
        evidence.metric(
            f"{readout}_equal_steps_gap_contrastive_minus_supervised",
            excess.mean().item(),
            unit="accuracy points",
            seeds=excess.tolist(),
        )
        # counterpart: the same excess with the larger batch's extra negatives removed (30 per anchor in both arms)
        fixed = acc[(readout, "contrastive_fixed_negatives", "steps", large)] - acc[(readout, "contrastive", "steps", small)]
        name = f"{readout}_contrastive_fixed_negatives_equal_steps_gap"
        evidence.metric(name, fixed.mean().item(), unit="accuracy points", seeds=fixed.tolist())
        excess = fixed - gap[(readout, "supervised", "steps")]  # R
        evidence.metric(
            f"{readout}_equal_steps_gap_fixed_negatives_minus_supervised",
            excess.mean().item(),
            unit="accuracy points",
            seeds=excess.tolist(),
        )
    plot(evidence, acc)
    evidence.note(
        f"tinted digits, crop + colour(s=0.5), MLP width {HIDDEN}, tau 0.2, Adam lr {LR} at equal steps and "
        f"1e-3*sqrt(B/256) at equal epochs for both objectives, {len(seeds)} seeds; equal steps {STEPS}, "
        f"equal epochs {EPOCHS} ({epoch_steps}); counterpart arm: contrastive at batch {large}, NT-Xent within groups "
        f"of {small} ({2 * small - 2} negatives per anchor), {STEPS} steps, lr {LR}"
    )
