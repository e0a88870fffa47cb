"""SOTA-367: larger batches help contrastive learning at short training and the gaps shrink with longer training
(SimCLR §5.2, Figure 9)."""

import matplotlib.pyplot as plt
import pytest
import torch

from verify.augment import Augment
from verify.data import for_replicas, split, tinted_digits
from verify.probes import frozen_features, knn_probe, linear_probe
from verify.simclr import sqrt_scaled_lr, train_simclr
from verify.supervised import train_supervised

# seeds (the record's `seeds:`): replicas drawn from a generator seeded with seeds[0]; len(seeds) replicas
DATA_SEED = 0  # the tinted digits and their split: the same data whatever the seeds
BATCHES = (16, 64, 256)  # SimCLR Figure 9 spans 256..8192; scaled down to a 1258-image training set
EPOCHS = {"short": 4, "long": 16}  # same epochs for every batch size, as in Figure 9 (100 vs 800 epochs there)
FIGURE_9 = (
    "Our analogue of SimCLR Figure 9: linear-probe (left) and kNN (right) accuracy against batch size, "
    "one line per training length; mean over replicas."
)


def accuracy_vs_batch_figure(acc):
    """SimCLR Figure 9 analogue: mean probe and kNN accuracy against batch size, one line per training length."""
    fig, axes = plt.subplots(1, 2, figsize=(8, 3))
    for ax, kind in zip(axes, ("probe", "knn")):
        for length in EPOCHS:
            ax.plot(
                BATCHES, [acc[(kind, b, length)].mean().item() for b in BATCHES], marker="o", label=f"{EPOCHS[length]} epochs"
            )
        ax.set_xscale("log", base=2)
        ax.set_xlabel("batch size")
        ax.set_title(kind, fontsize=9)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def supervised_probe(x, y, tr, te, aug, batch, seeds, length="short"):
    """The control arm: the same encoder trained with cross-entropy for the run's epochs at `batch` (SimCLR §5.2: 'In
    contrast to supervised learning (Goyal et al., 2017)', no negatives), read by the same linear probe and kNN. R, R."""
    steps = round(EPOCHS[length] * len(tr) / batch)  # equal epochs, as the contrastive runs
    r = len(seeds)
    f, _ = train_supervised(
        x[tr], y[tr], aug, n_replicas=r, steps=steps, batch=batch, lr=sqrt_scaled_lr(batch), hidden=64, seed=seeds[0]
    )
    h_tr = frozen_features(f, for_replicas(x[tr], r))  # h_tr: R x M x 64
    h_te = frozen_features(f, for_replicas(x[te], r))  # h_te: R x M_test x 64
    return linear_probe(h_tr, y[tr], h_te, y[te]).cpu(), knn_probe(h_tr, y[tr], h_te, y[te]).cpu()


@pytest.mark.claim("SOTA-367", "batch-size-convergence")
def test_larger_batches_help_at_short_training_and_the_gap_shrinks(evidence, device, seeds):
    """At equal epochs, batch 256 beats batch 16 after short training by more than seed noise, and the gap is smaller
    after four times as many epochs; the same encoder trained with cross-entropy gains nothing from the larger batch."""
    x, y, _ = tinted_digits(DATA_SEED)
    x, y = x.to(device), y.to(device)
    tr, te = split(len(x), DATA_SEED)
    r = len(seeds)  # replicas, each a seed
    aug = Augment(["crop", "colour"], strength=0.5, crop_scale=(0.2, 1.0))
    acc = {}  # (metric, batch, length) -> accuracy per replica, R

    for batch in BATCHES:
        steps_at = {length: round(e * len(tr) / batch) for length, e in EPOCHS.items()}  # epochs -> steps

        def on_eval(step, net, batch=batch, steps_at=steps_at):
            h_tr = frozen_features(net.f, for_replicas(x[tr], r))  # h_tr: R x M x 64
            h_te = frozen_features(net.f, for_replicas(x[te], r))  # h_te: R x M_test x 64
            for length, s in steps_at.items():
                if s == step:
                    acc[("probe", batch, length)] = linear_probe(h_tr, y[tr], h_te, y[te]).cpu()
                    acc[("knn", batch, length)] = knn_probe(h_tr, y[tr], h_te, y[te]).cpu()

        # SimCLR Appendix B.1: square-root learning-rate scaling, which helps small batches (Figure B.1)
        train_simclr(
            x[tr],
            aug,
            n_replicas=r,
            steps=steps_at["long"],
            batch=batch,
            tau=0.2,
            lr=sqrt_scaled_lr(batch),
            hidden=64,
            seed=seeds[0],
            eval_steps=set(steps_at.values()),
            on_eval=on_eval,
        )
        for (kind, b, length), a in acc.items():
            if b == batch:
                evidence.metric(f"{kind}_b{b}_{length}", a.mean().item(), seeds=a.tolist())  # each replica a seed

    small, large = BATCHES[0], BATCHES[-1]
    for kind in ("probe", "knn"):
        gap = {L: acc[(kind, large, L)] - acc[(kind, small, L)] for L in EPOCHS}  # gap per replica, R
        # seed noise: the replica-to-replica sd of a single run's accuracy, pooled over the six runs
        noise = torch.stack([acc[(kind, b, L)] for b in BATCHES for L in EPOCHS]).std(1).mean().item()
        # replica r has the same initialisation at every batch size: the gaps are per replica, each a seed
        for name, v in (("gap_short", gap["short"]), ("gap_long", gap["long"]), ("gap_shrink", gap["short"] - gap["long"])):
            evidence.metric(f"{kind}_{name}", v.mean().item(), seeds=v.tolist())  # large minus small batch
        evidence.metric(f"{kind}_seed_sd", noise)
        evidence.metric(f"{kind}_gap_short_over_sd", gap["short"].mean().item() / max(noise, 1e-6))
    # the supervised encoder (SimCLR §5.2, "In contrast to supervised learning (Goyal et al., 2017)": no negatives) at
    # every (batch, length) of Figure 9: its short runs at batch 16 and 256 are the control, all six the counterparts
    sacc = {}  # (metric, batch, length) -> accuracy per replica, R
    for b in BATCHES:
        for length in EPOCHS:
            sacc[("probe", b, length)], sacc[("knn", b, length)] = supervised_probe(x, y, tr, te, aug, b, seeds, length)
    for b in (small, large):
        a = sacc[("probe", b, "short")]
        evidence.metric(f"supervised_probe_b{b}_short", a.mean().item(), seeds=a.tolist())
    # control: one value, the replica mean (per replica the gap's sd, 0.023, is wider than the effect it must exclude)
    sup_gap = sacc[("probe", large, "short")] - sacc[("probe", small, "short")]  # R
    evidence.metric("supervised_probe_gap_short", sup_gap.mean().item())
    # the control's counterpart, the model with the effect: the contrastive probe gap, read as the control is (the mean)
    con_gap = acc[("probe", large, "short")] - acc[("probe", small, "short")]  # R
    evidence.metric("contrastive_probe_gap_short", con_gap.mean().item())
    # the effect expectations' counterparts: the same statistics for the supervised encoder, computed as above
    for (kind, b, length), a in sacc.items():
        if (kind, length) != ("probe", "short") or b not in (small, large):  # those two are recorded above
            evidence.metric(f"supervised_{kind}_b{b}_{length}", a.mean().item(), seeds=a.tolist())
    for kind in ("probe", "knn"):
        gap = {L: sacc[(kind, large, L)] - sacc[(kind, small, L)] for L in EPOCHS}  # gap per replica, R
        noise = torch.stack([sacc[(kind, b, L)] for b in BATCHES for L in EPOCHS]).std(1).mean().item()  # six runs
        for name, v in (("gap_short", gap["short"]), ("gap_long", gap["long"]), ("gap_shrink", gap["short"] - gap["long"])):
            if (kind, name) != ("probe", "gap_short"):  # the control, its replica mean, is recorded above
                evidence.metric(f"supervised_{kind}_{name}", v.mean().item(), seeds=v.tolist())
        evidence.metric(f"supervised_{kind}_seed_sd", noise)
        evidence.metric(f"supervised_{kind}_gap_short_over_sd", gap["short"].mean().item() / max(noise, 1e-6))
    evidence.figure("accuracy_vs_batch", accuracy_vs_batch_figure(acc), caption=FIGURE_9)
    evidence.note(
        f"tinted digits, crop + colour(s=0.5), MLP width 64, tau 0.2, Adam lr 1e-3*sqrt(B/256), "
        f"{r} replicas; epochs {EPOCHS}; control: the same encoder trained with cross-entropy at batch {small} "
        f"and {large} for {EPOCHS['short']} epochs, same lr scaling, read by the same probe; counterparts: the same "
        f"encoder trained with cross-entropy at batches {BATCHES} for {tuple(EPOCHS.values())} epochs, read as the "
        f"contrastive runs"
    )
