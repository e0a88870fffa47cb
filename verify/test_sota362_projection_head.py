"""SOTA-362: SimCLR's nonlinear projection head is sacrificial: g(h) discards what the contrastive loss makes it invariant
to (the applied rotation), h keeps it, and h is the better representation (SimCLR §4.2, Table 3, Figure 8)."""

import functools

import matplotlib.pyplot as plt
import pytest
import torch

from verify.augment import ShiftNoise, rotate_quarters
from verify.data import for_replicas, load_digits_split
from verify.probes import frozen_features, trained_probe
from verify.simclr import HEADS, train_simclr

# seeds (the record's `seeds:`): replicas drawn from a generator seeded with seeds[0]; len(seeds) replicas
# toy SimCLR on 8x8 digits: MLP 64-128-128-64 encoder, h = 64-d post-ReLU (as a ResNet's pooled features),
# g: 64-64-64 (Table 3: dim g(h) = dim h)
TRAIN = dict(steps=400, batch=128, tau=0.5, lr=3e-3, hidden=128, rep_dim=64, out_dim=64, h_relu=True)
# the second run of pairs that differ only in their seed (other initialisation, batches and views): no-head-worst's
# control and the counterparts of nonlinear_minus_linear and rot_gap_trained_minus_random
TWIN_SEED = 100


@functools.lru_cache(maxsize=None)
def _trained(head, rotate_aug, seed, n_replicas, device_str):
    """One SimCLR run of R = n_replicas replicas from `seed` (cached: the linear-evaluation checks share the
    nonlinear-head model).
    Views: shift + noise, and with rotate_aug an independent quarter turn per view (Table 3 caption)."""
    data = load_digits_split(device=device_str)
    untrained = head == "random"  # the untrained nonlinear-head network (control)
    arch = "nonlinear" if untrained else head
    model, _ = train_simclr(
        data["x_train"],
        ShiftNoise(rotate=rotate_aug),
        n_replicas=n_replicas,
        seed=seed,
        head=arch,
        **{**TRAIN, "steps": 0 if untrained else TRAIN["steps"]},
    )
    return data, model


def features(model, x):
    """Frozen (h, g(h)) for images x: M x 8 x 8 -> two R x M x D tensors."""
    return frozen_features(model, for_replicas(x, model.n_replicas))


@torch.no_grad()
def rotation_probe_data(model, data, n_train=400):
    """Every image in all four rotations -> features and rotation labels for a transformation probe (probe-train from
    the first n_train images of the training split, probe-test from the held-out split).
    Returns dict with h_train, z_train, r_train, h_test, z_test, r_test (features R x 4M x D, labels 4M)."""
    out = {}
    for split in ("train", "test"):
        x = data[f"x_{split}"][:n_train] if split == "train" else data["x_test"]  # M x 8 x 8
        quarters = torch.arange(4, device=x.device).repeat_interleave(x.shape[0])  # 4M: 0..0,1..1,2..2,3..3
        xr = rotate_quarters(x.repeat(4, 1, 1), quarters)  # 4M x 8 x 8
        out[f"h_{split}"], out[f"z_{split}"] = features(model, xr)
        out[f"r_{split}"] = quarters
    return out


def _rotation_probes(model, data):
    """Table 3 'Rotation' row: MLP probe (one hidden layer of 64) predicting the applied quarter-turn from h and g(h)."""
    rp = rotation_probe_data(model, data)  # every image in all 4 rotations; probe-test images unseen by the probe
    acc_h = trained_probe(rp["h_train"], rp["r_train"], rp["h_test"], rp["r_test"], 4, hidden=64, steps=200)  # R
    acc_z = trained_probe(rp["z_train"], rp["r_train"], rp["z_test"], rp["r_test"], 4, hidden=64, steps=200)  # R
    return acc_h, acc_z


def _linear_eval(model, data):
    """Linear evaluation (SimCLR §2.3 protocol, digits classes) of h and g(h) on the held-out split; R each."""
    h_tr, z_tr = features(model, data["x_train"])  # R x M x D each
    h_te, z_te = features(model, data["x_test"])
    acc_h = trained_probe(h_tr, data["y_train"], h_te, data["y_test"], 10)  # R
    acc_z = trained_probe(z_tr, data["y_train"], z_te, data["y_test"], 10)  # R
    return acc_h, acc_z


def measure_rotation(seeds, device):
    """Rotation-probe accuracies from h and g(h) for the trained nonlinear head (rotation in the augmentation,
    Table 3 caption) and for the same network untrained; returns a dict of R-vectors."""
    out = {}
    for kind in ("nonlinear", "random"):
        data, model = _trained(kind, True, seeds[0], len(seeds), str(device))
        out[f"{kind}_rot_h"], out[f"{kind}_rot_gh"] = _rotation_probes(model, data)
    return out


@pytest.mark.claim("SOTA-362", "head-loses-transformation")
def test_head_discards_the_rotation_that_h_keeps(evidence, device, seeds):
    """After SimCLR training with random rotations, an MLP recovers the rotation from h far better than from g(h);
    in the untrained network h and g(h) are about equally informative."""
    m = measure_rotation(seeds, device)
    gap = m["nonlinear_rot_h"] - m["nonlinear_rot_gh"]  # R, trained: h minus g(h)
    gap0 = m["random_rot_h"] - m["random_rot_gh"]  # R, control: untrained
    # rot_gap_trained_minus_random's counterpart: the same difference of gaps between two untrained networks, the
    # second initialised from TWIN_SEED: nothing but the initialisation separates them
    data, twin = _trained("random", True, TWIN_SEED, len(seeds), str(device))
    twin_h, twin_gh = _rotation_probes(twin, data)  # R each
    per_replica = {
        "rot_acc_h": m["nonlinear_rot_h"],
        "rot_acc_gh": m["nonlinear_rot_gh"],
        "rot_gap_h_minus_gh": gap,
        "random_init_rot_acc_h": m["random_rot_h"],
        "random_init_rot_acc_gh": m["random_rot_gh"],
        "random_init_rot_gap_h_minus_gh": gap0,
        "rot_gap_trained_minus_random": gap - gap0,
        "random_init_twin_rot_gap_h_minus_gh": twin_h - twin_gh,
        "random_init_minus_twin_rot_gap": gap0 - (twin_h - twin_gh),  # counterpart of rot_gap_trained_minus_random
    }
    for name, v in per_replica.items():  # each replica is a seed
        evidence.metric(name, v.mean().item(), seeds=v.tolist())
    evidence.metric("rot_gap_h_minus_gh_min_seed", gap.min().item())
    evidence.metric("chance", 0.25)
    evidence.note(
        f"R={len(seeds)} seeds; per seed h/g(h): {m['nonlinear_rot_h'].tolist()} / {m['nonlinear_rot_gh'].tolist()}; "
        f"untrained {m['random_rot_h'].tolist()} / {m['random_rot_gh'].tolist()}"
    )


def measure_linear_eval(seeds, device, heads=HEADS, controls=("random",)):
    """Linear-evaluation accuracy of h and g(h) for each head type (standard shift+noise views, no rotation) and for
    the untrained network(s); returns a dict of R-vectors."""
    out = {}
    for kind in (*heads, *controls):
        data, model = _trained(kind, False, seeds[0], len(seeds), str(device))
        out[f"{kind}_lin_h"], out[f"{kind}_lin_gh"] = _linear_eval(model, data)
    return out


@pytest.mark.claim("SOTA-362", "h-better-than-gh")
def test_h_beats_gh_under_linear_evaluation(evidence, device, seeds):
    """With a nonlinear head, the layer before the head (h) gives a better linear classifier than g(h); in the
    untrained network the gap is small."""
    m = measure_linear_eval(seeds, device, heads=("nonlinear",))
    gap = m["nonlinear_lin_h"] - m["nonlinear_lin_gh"]  # R
    gap0 = m["random_lin_h"] - m["random_lin_gh"]  # R
    per_replica = {
        "lin_acc_h": m["nonlinear_lin_h"],
        "lin_acc_gh": m["nonlinear_lin_gh"],
        "lin_gap_h_minus_gh": gap,
        "random_init_lin_acc_h": m["random_lin_h"],
        "random_init_lin_gap_h_minus_gh": gap0,
        "lin_gap_trained_minus_random": gap - gap0,
    }
    for name, v in per_replica.items():  # each replica is a seed
        evidence.metric(name, v.mean().item(), seeds=v.tolist())
    evidence.metric("lin_gap_h_minus_gh_min_seed", gap.min().item())
    evidence.note(f"R={len(seeds)} seeds; per seed h/g(h): {m['nonlinear_lin_h'].tolist()} / {m['nonlinear_lin_gh'].tolist()}")


@pytest.mark.claim("SOTA-362", "gh-rotation-near-chance")
def test_gh_rotation_accuracy_falls_to_chance(evidence, device, seeds):
    """Table 3 magnitude: the rotation probe on g(h) is near chance (paper 25.6% vs chance 25%) while h keeps it (67.6%);
    the untrained network's g(h) is far above chance."""
    m = measure_rotation(seeds, device)
    per_replica = {
        "rot_acc_gh": m["nonlinear_rot_gh"],
        "rot_acc_gh_above_chance": m["nonlinear_rot_gh"] - 0.25,
        "rot_acc_h": m["nonlinear_rot_h"],
        "random_init_rot_acc_gh_above_chance": m["random_rot_gh"] - 0.25,
        "random_init_rot_acc_gh": m["random_rot_gh"],  # rot_acc_gh's counterpart: the untrained network's g(h)
    }
    for name, v in per_replica.items():  # each replica is a seed
        evidence.metric(name, v.mean().item(), seeds=v.tolist())


def linear_eval_h(kind, seed, n_replicas, device):
    """Linear evaluation of h alone (R) for one run of _trained (standard shift+noise views, no rotation)."""
    data, model = _trained(kind, False, seed, n_replicas, str(device))
    h_tr, _ = features(model, data["x_train"])  # R x M x D
    h_te, _ = features(model, data["x_test"])
    return trained_probe(h_tr, data["y_train"], h_te, data["y_test"], 10)  # R


@pytest.mark.claim("SOTA-362", "no-head-worst")
def test_any_head_beats_no_head(evidence, device, seeds):
    """Figure 8: the linear evaluation of h is clearly worse with no head (the loss acting on h itself) than with a
    nonlinear head; two nonlinear-head runs from different seeds differ far less (control)."""
    r = len(seeds)
    nonlinear, none = linear_eval_h("nonlinear", seeds[0], r, device), linear_eval_h("none", seeds[0], r, device)  # R each
    twin = linear_eval_h("nonlinear", TWIN_SEED, r, device)  # R: same head and training, another seed
    untrained = linear_eval_h("random", seeds[0], r, device)  # R: the encoder both heads start from, no training
    per_replica = {
        "lin_acc_h_nonlinear_head": nonlinear,
        "lin_acc_h_none_head": none,
        "nonlinear_minus_none": nonlinear - none,  # replica r of both runs: same encoder init and batches
        "lin_acc_h_nonlinear_head_twin": twin,
        "same_head_abs_diff": (nonlinear - twin).abs(),  # control: the head is not what differs
        "nonlinear_minus_twin": nonlinear - twin,  # nonlinear_minus_none's counterpart: the same head on both sides
        "nonlinear_none_abs_diff": (nonlinear - none).abs(),  # the control's counterpart: the heads differ
        "random_init_lin_acc_h": untrained,
        "nonlinear_minus_random_init": nonlinear - untrained,
        "none_minus_random_init": none - untrained,
    }
    for name, v in per_replica.items():  # each replica is a seed
        evidence.metric(name, v.mean().item(), unit="fraction", seeds=v.tolist())
    evidence.note(
        f"R={r} seeds; per seed nonlinear/none/nonlinear (seed {TWIN_SEED}): {nonlinear.tolist()} / "
        f"{none.tolist()} / {twin.tolist()}"
    )


@pytest.mark.claim("SOTA-362", "nonlinear-beats-linear")
def test_nonlinear_head_beats_linear_head(evidence, device, seeds):
    """Figure 8: a nonlinear head gives a better h than a linear head (+3% in the paper); control: with the linear head
    g(h) is about as good as h under linear evaluation, unlike with the nonlinear head (recorded beside it)."""
    m = measure_linear_eval(seeds, device, heads=("nonlinear", "linear"))
    per_replica = {
        "lin_acc_h_nonlinear_head": m["nonlinear_lin_h"],
        "lin_acc_h_linear_head": m["linear_lin_h"],
        "nonlinear_minus_linear": m["nonlinear_lin_h"] - m["linear_lin_h"],
        "linear_head_gap_h_minus_gh": m["linear_lin_h"] - m["linear_lin_gh"],  # control
        # the control's statistic on the model with the effect (§4.2: h better than g(h)), not asserted here
        "nonlinear_head_gap_h_minus_gh": m["nonlinear_lin_h"] - m["nonlinear_lin_gh"],
        # nonlinear_minus_linear's counterpart: the same difference with the nonlinear head on both sides, the second
        # run from TWIN_SEED (as no-head-worst's nonlinear_minus_twin): no head differs
        "nonlinear_minus_twin": m["nonlinear_lin_h"] - linear_eval_h("nonlinear", TWIN_SEED, len(seeds), device),
    }
    for name, v in per_replica.items():  # each replica is a seed
        evidence.metric(name, v.mean().item(), seeds=v.tolist())

    fig, ax = plt.subplots(figsize=(5, 3.5))
    kinds = ("nonlinear", "linear", "random")
    for j, (name, key) in enumerate((("h", "lin_h"), ("g(h)", "lin_gh"))):
        ax.bar(
            [i + 0.4 * j for i in range(len(kinds))],
            [m[f"{k}_{key}"].mean().item() for k in kinds],
            width=0.4,
            yerr=[m[f"{k}_{key}"].std().item() for k in kinds],
            label=name,
        )
    ax.set_xticks([i + 0.2 for i in range(len(kinds))], ["nonlinear head", "linear head", "untrained"])
    ax.set_ylim(0.5, 1.0)
    ax.set_ylabel("linear evaluation accuracy (digits)")
    ax.legend()
    evidence.figure(
        "linear_eval_by_head",
        fig,
        caption="Linear evaluation on digits from h and from g(h) for a nonlinear "
        "head, a linear head and the untrained network; bars: mean over replicas, whiskers: their standard "
        "deviation.",
    )
    plt.close(fig)
    evidence.note(
        f"R={len(seeds)} seeds; per seed nonlinear/linear: {m['nonlinear_lin_h'].tolist()} / {m['linear_lin_h'].tolist()}"
    )
