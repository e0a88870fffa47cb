"""SOTA-361: does crop + colour stand out among the compositions of SimCLR Figure 5? Crop + colour against its row and
column of the grid (each member alone, each pair that swaps one member), in no-single-transform's (SOTA-365) toy."""

import matplotlib.pyplot as plt
import pytest

from verify.augment import Augment
from verify.data import for_replicas, split, tinted_digits
from verify.probes import frozen_features, knn_probe, linear_probe
from verify.simclr import pretext_accuracy, train_simclr

# seeds (the record's `seeds:`): replicas drawn from a generator seeded with seeds[0]; len(seeds) replicas
DATA_SEED = 0  # the tinted digits and their split: the same data whatever the seeds
DIGIT_CROP = (0.2, 1.0)  # as no-single-transform: SimCLR's 0.08 leaves 2 x 2 pixels of an 8 x 8 digit
# no-single-transform's budget, the same for every composition; SimCLR §3.1: the transformation(s) on one branch,
# the identity on the other
TRAIN = dict(batch=256, tau=0.2, hidden=64)
STEPS = 120
PARTNERS = ("cutout", "blur", "rotate", "noise")  # no-single-transform's other transformations (SimCLR Figure 4)
# SimCLR Figure 5's rows and columns of crop and colour, the first named applied first: each member alone and each
# pair that swaps one member for another transformation
OTHERS = [["crop"], ["colour"]] + [["crop", t] for t in PARTNERS] + [["colour", t] for t in PARTNERS]
COMPOSITION = ["crop", "colour"]


def one_branch(x, y, tr, te, names, seeds):
    """NT-Xent with `names` on one branch and the identity on the other; per-replica held-out linear probe, kNN and
    pretext top-1 among 511 (R each)."""
    aug = Augment(names, strength=1.0, crop_scale=DIGIT_CROP)
    r = len(seeds)
    net, _ = train_simclr(x[tr], aug, n_replicas=r, seed=seeds[0], steps=STEPS, asymmetric=True, **TRAIN)
    h_tr, h_te = frozen_features(net.f, for_replicas(x[tr], r)), frozen_features(net.f, for_replicas(x[te], r))  # R x M x 64
    return {
        "probe": linear_probe(h_tr, y[tr], h_te, y[te]),  # R
        "knn": knn_probe(h_tr, y[tr], h_te, y[te]),  # R
        "pretext_acc": pretext_accuracy(net, x[te], aug, seed=seeds[0], asymmetric=True),  # R
    }


def untrained(x, y, tr, te, seeds):
    """The network every model starts from (same seed, same initialisation), not trained: probe and kNN (R each)."""
    r = len(seeds)
    net, _ = train_simclr(x[tr], None, n_replicas=r, seed=seeds[0], steps=0, **TRAIN)
    h_tr, h_te = frozen_features(net.f, for_replicas(x[tr], r)), frozen_features(net.f, for_replicas(x[te], r))
    return {"probe": linear_probe(h_tr, y[tr], h_te, y[te]), "knn": knn_probe(h_tr, y[tr], h_te, y[te])}


def best_of(runs, keys, read):
    """The configuration among `keys` with the highest mean over replicas of `read` ("probe" or "knn")."""
    return max(keys, key=lambda k: runs[k][read].mean().item())


def compositions_figure(runs, random_init):
    """Bars of the mean linear probe and kNN of each configuration, the untrained network as dashed lines."""
    fig, ax = plt.subplots(figsize=(7, 3))
    keys = list(runs)
    for shift, read in ((-0.2, "probe"), (0.2, "knn")):
        ax.bar([i + shift for i in range(len(keys))], [runs[k][read].mean().item() for k in keys], 0.4, label=read)
        ax.axhline(random_init[read].mean().item(), ls="--", lw=0.8, color="C0" if read == "probe" else "C1")
    ax.set_xticks(range(len(keys)), [k.replace("_", "+") for k in keys], rotation=35, fontsize=7)
    ax.set_ylabel("held-out digit accuracy")
    ax.legend(fontsize=8, ncol=2, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    fig.tight_layout()
    return fig


@pytest.mark.claim("SOTA-361", "composition-stands-out")
def test_crop_plus_colour_against_its_row_and_column(evidence, device, seeds):
    """Crop + colour against each of its members alone and each pair that swaps one member, at the same budget:
    it should give the best linear probe (SimCLR §3.1: 'One composition of augmentations stands out')."""
    x, y, _ = tinted_digits(DATA_SEED)
    x, y = x.to(device), y.to(device)  # x: 1797 x 3 x 8 x 8
    tr, te = split(len(x), DATA_SEED)
    runs = {"_".join(names): one_branch(x, y, tr, te, names, seeds) for names in [COMPOSITION] + OTHERS}
    random_init = untrained(x, y, tr, te, seeds)
    comp, others = runs["crop_colour"], [k for k in runs if k != "crop_colour"]
    m = {f"{k}_{read}": v for k, run in runs.items() for read, v in run.items()}
    for read in ("probe", "knn"):
        best = best_of(runs, others, read)
        m[f"best_other_{read}"] = runs[best][read]
        m[f"composition_minus_best_other_{read}"] = comp[read] - runs[best][read]
        m[f"random_init_{read}"] = random_init[read]
        m[f"random_init_minus_best_other_{read}"] = random_init[read] - runs[best][read]  # counterpart: no training
        # counterpart: crop alone, the composition without colour, against the best of the rest (crop + colour included)
        rest = [k for k in runs if k != "crop"]
        m[f"crop_minus_best_other_{read}"] = runs["crop"][read] - runs[best_of(runs, rest, read)][read]
        m[f"composition_rank_{read}"] = 1 + sum((runs[k][read] > comp[read]).float() for k in others)  # 1: the best
        evidence.note(f"best other by {read}: {best.replace('_', ' + ')}")
        # SimCLR §3.1: 'it is critical to compose cropping with color distortion': crop composed with anything else
        best_pair = best_of(runs, [f"crop_{t}" for t in PARTNERS], read)
        m[f"best_crop_pair_minus_crop_{read}"] = runs[best_pair][read] - runs["crop"][read]  # control
        m[f"composition_minus_crop_{read}"] = comp[read] - runs["crop"][read]  # the control's counterpart
    for k, v in m.items():  # each replica is a seed
        evidence.metric(k, v.mean().item(), seeds=v.tolist())
    evidence.figure(
        "compositions",
        compositions_figure(runs, random_init),
        caption="Held-out linear-probe and kNN digit accuracy of crop + colour and of the configurations next to it in "
        "SimCLR Figure 5's grid (one branch transformed), tinted digits; dashed: the untrained network; mean over replicas.",
    )
    evidence.note(f"one branch identity (SimCLR §3.1), {len(seeds)} replicas x {STEPS} steps x batch 256, MLP width 64, tau 0.2")
