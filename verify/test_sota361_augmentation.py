"""SOTA-361: the augmentation composition is the pretext task; crops share a colour histogram, a shortcut that colour
distortion removes (SimCLR §3.1, Figures 5 and 6)."""

import matplotlib.pyplot as plt
import pytest
import torch
from sklearn.datasets import load_sample_images

from verify.augment import Augment, colour_distortion, random_resized_crop
from verify.data import for_replicas, split, tinted_digits
from verify.layers import Encoder
from verify.probes import frozen_features, knn_probe, linear_probe, tint_r2
from verify.simclr import pretext_accuracy, train_simclr

# The trained checks read their seeds from the record (the `seeds` fixture): replicas drawn from a generator seeded
# with seeds[0]; len(seeds) replicas. The data stay fixed whatever the seeds.
SEED = 0  # the tinted digits and their split, and colour-histogram-shortcut's crops (one seeded draw, no seeds read)
TWIN_SEED = 100  # counterparts of the gains: the crop-only model again from another seed (as SOTA-362's twin)
TILE = 64  # the two photos (427 x 640) cut into 6 x 10 non-overlapping 64 x 64 tiles each: 120 "images"
DIGIT_CROP = (0.2, 1.0)  # crop area range for 8 x 8 digits (SimCLR's 0.08 leaves 2 x 2 pixels)


def photo_tiles(device):
    """The two scikit-learn sample photos as N x 3 x 64 x 64 tiles in [0, 1] (N = 120)."""
    tiles = []
    for im in load_sample_images().images:  # china.jpg, flower.jpg: 427 x 640 x 3 uint8
        x = torch.tensor(im, dtype=torch.float32).permute(2, 0, 1) / 255  # x: 3 x 427 x 640
        rows, cols = x.shape[1] // TILE, x.shape[2] // TILE
        t = x[:, : rows * TILE, : cols * TILE].reshape(3, rows, TILE, cols, TILE)
        tiles.append(t.permute(1, 3, 0, 2, 4).reshape(rows * cols, 3, TILE, TILE))  # rows*cols x 3 x 64 x 64
    return torch.cat(tiles).to(device)


def colour_histograms(x, bins):
    """Per-channel intensity histograms, normalised: N x C x H x W -> N x (C * bins)."""
    n, c = x.shape[:2]
    idx = (x.clamp(0, 1) * bins).long().clamp(max=bins - 1)  # bin of each pixel: N x C x H x W
    idx = idx + bins * torch.arange(c, device=x.device).view(1, c, 1, 1)  # channel c uses bins [c*B, (c+1)*B)
    hist = torch.zeros(n, c * bins, device=x.device)
    hist.scatter_add_(1, idx.flatten(1), torch.ones_like(x).flatten(1))  # hist: N x C*B
    return hist / (x.shape[2] * x.shape[3])


def histogram_matching_accuracy(x, crop_scale, bins, group, strength, generator, draws):
    """Two crops of every image (colour-distorted when strength > 0); each first crop picks, by L1 distance between
    colour histograms, its partner among the second crops of `group` images. Mean top-1 over `draws`."""
    accs = []
    for _ in range(draws):
        va = random_resized_crop(x, generator, scale=crop_scale)
        vb = random_resized_crop(x, generator, scale=crop_scale)
        if strength > 0:
            va, vb = colour_distortion(va, generator, strength), colour_distortion(vb, generator, strength)
        ha, hb = colour_histograms(va, bins), colour_histograms(vb, bins)  # N x C*B each
        correct = 0
        for s in range(0, len(x) - group + 1, group):
            d = torch.cdist(ha[s : s + group], hb[s : s + group], p=1)  # d: group x group
            correct += (d.argmin(1) == torch.arange(group, device=x.device)).sum().item()
        accs.append(correct / (len(x) // group * group))
    return sum(accs) / len(accs)


def figure6(tiles, generator):
    """SimCLR Figure 6 analogue: pooled pixel-intensity histograms of crops of two tiles, without / with colour."""
    fig, axes = plt.subplots(2, 2, figsize=(8, 4), sharex=True)
    for col, strength in enumerate((0.0, 1.0)):
        for row, tile in enumerate((tiles[15], tiles[75])):  # one tile of each photo
            crops = random_resized_crop(tile.expand(4, -1, -1, -1), generator)  # crops: 4 x 3 x 64 x 64
            if strength > 0:
                crops = colour_distortion(crops, generator, strength)
            for crop in crops:
                axes[row, col].hist(crop.flatten().cpu().numpy(), bins=32, range=(0, 1), histtype="step")
            axes[row, col].set_title(f"tile {row}, {'with' if strength else 'without'} colour distortion", fontsize=8)
    fig.tight_layout()
    return fig


@pytest.mark.claim("SOTA-361", "colour-histogram-shortcut")
def test_colour_histograms_identify_crops_unless_colour_is_distorted(evidence, device):
    """Crops of one image are matched by colour histogram alone well above chance; colour distortion makes it fail."""
    g = torch.Generator().manual_seed(SEED)
    tiles = photo_tiles(device)  # tiles: 120 x 3 x 64 x 64
    x, _, _ = tinted_digits(SEED)
    x = x.to(device)  # x: 1797 x 3 x 8 x 8
    # SimCLR §3.1 / Figure 6: histograms of crops; 16 bins per channel for 64 x 64 crops, 8 for 8 x 8 ones
    photo_crop = histogram_matching_accuracy(tiles, (0.08, 1.0), 16, len(tiles), 0.0, g, draws=5)
    photo_colour = histogram_matching_accuracy(tiles, (0.08, 1.0), 16, len(tiles), 1.0, g, draws=5)
    digit_crop = histogram_matching_accuracy(x, DIGIT_CROP, 8, 256, 0.0, g, draws=1)  # 256 = a SimCLR batch
    digit_colour = histogram_matching_accuracy(x, DIGIT_CROP, 8, 256, 1.0, g, draws=1)
    evidence.metric("photo_crop_hist_acc", photo_crop)
    evidence.metric("photo_crop_colour_hist_acc", photo_colour)  # control: colour distortion, s = 1
    evidence.metric("photo_chance", 1 / len(tiles))
    evidence.metric("photo_hist_acc_drop", photo_crop - photo_colour)
    evidence.metric("digit_crop_hist_acc", digit_crop)
    evidence.metric("digit_crop_colour_hist_acc", digit_colour)  # control
    evidence.metric("digit_chance", 1 / 256)
    evidence.metric("digit_hist_acc_drop", digit_crop - digit_colour)
    evidence.figure(
        "figure6_histograms",
        figure6(tiles, g),
        caption="Our analogue of SimCLR Figure 6: pixel-intensity "
        "histograms of four crops of each of two photo tiles, without (left) and with (right) colour distortion.",
    )
    # photo_hist_acc_drop's counterpart: the same drop where the second arm is not colour-distorted either (5 further
    # draws of crops alone; drawn after everything above, so those numbers are unchanged)
    photo_crop_again = histogram_matching_accuracy(tiles, (0.08, 1.0), 16, len(tiles), 0.0, g, draws=5)
    evidence.metric("photo_hist_acc_drop_without_colour", photo_crop - photo_crop_again)
    evidence.note(f"120 photo tiles of {TILE}px, 5 draws; 1797 tinted digits in groups of 256; L1 nearest histogram")


@pytest.mark.claim("SOTA-361", "crop-only-shortcut")
def test_crop_only_contrastive_solves_pretext_but_learns_colour_not_digits(evidence, device, seeds):
    """NT-Xent with crops alone solves the pretext task through colour and learns little about the digit class;
    adding colour distortion makes the representation classify digits better."""
    x, y, tint = tinted_digits(SEED)
    x, y, tint = x.to(device), y.to(device), tint.to(device)
    tr, te = split(len(x), SEED)
    r = len(seeds)  # replicas, each a seed
    torch.manual_seed(seeds[0])
    f0 = Encoder(r, norm="none", hidden=64, out_dim=64, d_in=x[0].numel()).to(device)  # random-init reference encoder
    h0_tr, h0_te = frozen_features(f0, for_replicas(x[tr], r)), frozen_features(f0, for_replicas(x[te], r))  # R x M x 64
    m = {
        "random_probe": linear_probe(h0_tr, y[tr], h0_te, y[te]),  # m[k]: one value per replica (R)
        "random_knn": knn_probe(h0_tr, y[tr], h0_te, y[te]),
    }
    curves = {}
    for name, names in (("crop", ["crop"]), ("crop_colour", ["crop", "colour"])):  # SimCLR §3.1 Figure 5 pair
        aug = Augment(names, strength=1.0, crop_scale=DIGIT_CROP)
        net, hist = train_simclr(x[tr], aug, n_replicas=r, steps=250, batch=256, tau=0.2, hidden=64, seed=seeds[0])
        h_tr, h_te = frozen_features(net.f, for_replicas(x[tr], r)), frozen_features(net.f, for_replicas(x[te], r))
        m[f"{name}_pretext_acc"] = pretext_accuracy(net, x[te], aug, seed=seeds[0])
        m[f"{name}_probe"] = linear_probe(h_tr, y[tr], h_te, y[te])
        m[f"{name}_knn"] = knn_probe(h_tr, y[tr], h_te, y[te])
        m[f"{name}_tint_r2"] = tint_r2(h_tr, tint[tr], h_te, tint[te])  # colour read out of h
        curves[name] = hist["pretext_acc"].mean(1)  # curves[name]: steps
    m["probe_gain"] = m["crop_colour_probe"] - m["crop_probe"]
    m["knn_gain"] = m["crop_colour_knn"] - m["crop_knn"]
    m["crop_probe_minus_random"] = m["crop_probe"] - m["random_probe"]
    m["crop_colour_probe_minus_random"] = m["crop_colour_probe"] - m["random_probe"]  # counterpart of the above
    m["tint_r2_drop"] = m["crop_tint_r2"] - m["crop_colour_tint_r2"]
    # counterparts of the three gains: the same differences with crops alone on both sides (no colour distortion,
    # SimCLR §3.1), the second crop-only model trained from another seed (other initialisation, batches and crops)
    aug = Augment(["crop"], strength=1.0, crop_scale=DIGIT_CROP)
    twin, _ = train_simclr(x[tr], aug, n_replicas=r, steps=250, batch=256, tau=0.2, hidden=64, seed=TWIN_SEED)
    t_tr, t_te = frozen_features(twin.f, for_replicas(x[tr], r)), frozen_features(twin.f, for_replicas(x[te], r))
    m["crop_twin_probe"] = linear_probe(t_tr, y[tr], t_te, y[te])  # R
    m["crop_twin_knn"] = knn_probe(t_tr, y[tr], t_te, y[te])
    m["crop_twin_tint_r2"] = tint_r2(t_tr, tint[tr], t_te, tint[te])
    m["probe_gain_crop_twin"] = m["crop_twin_probe"] - m["crop_probe"]  # counterpart of probe_gain
    m["knn_gain_crop_twin"] = m["crop_twin_knn"] - m["crop_knn"]  # counterpart of knn_gain
    m["tint_r2_drop_crop_twin"] = m["crop_tint_r2"] - m["crop_twin_tint_r2"]  # counterpart of tint_r2_drop
    for k, v in m.items():  # each replica is a seed
        evidence.metric(k, v.mean().item(), seeds=v.tolist())
    fig, ax = plt.subplots(figsize=(5, 3))
    for name, c in curves.items():
        ax.plot(c.numpy(), label=name)
    ax.set_xlabel("step")
    ax.set_ylabel("train pretext top-1 (chance 1/511)")
    ax.legend()
    evidence.figure(
        "pretext_accuracy",
        fig,
        caption="Train pretext top-1 (chance 1/511) during training for each augmentation on tinted digits; mean over replicas.",
    )
    evidence.note(
        "tinted digits, MLP 192-64-64-64 + head 64-64-64, NT-Xent tau 0.2, batch 256, 250 Adam steps, "
        f"{r} replicas (each a seed); probes on h of held-out 30%"
    )


def single_vs_composition_figure(probe, pretext):
    """Bars of the mean linear probe and pretext top-1 of each transformation (probe[key], pretext[key]: R each)."""
    fig, ax = plt.subplots(figsize=(6, 3))
    keys = list(probe)
    ax.bar([i - 0.2 for i in range(len(keys))], [probe[k].mean().item() for k in keys], 0.4, label="linear probe")
    ax.bar([i + 0.2 for i in range(len(keys))], [pretext[k].mean().item() for k in keys], 0.4, label="pretext top-1")
    ax.set_xticks(range(len(keys)), keys, rotation=30, fontsize=8)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


@pytest.mark.claim("SOTA-365", "no-single-transform")
def test_no_single_transform_matches_crop_plus_colour(evidence, device, seeds):
    """Each single transformation (crop, colour, cutout, blur, rotate, noise) versus crop + colour, in SimCLR Figure 5's
    one-branch setting: the composition should give the best linear probe while singles solve their pretext task."""
    x, y, _ = tinted_digits(SEED)
    x, y = x.to(device), y.to(device)
    tr, te = split(len(x), SEED)
    r = len(seeds)  # replicas, each a seed
    singles = ("crop", "colour", "cutout", "blur", "rotate", "noise")  # SimCLR Figure 4 / 5 transformations
    probe, knn, pretext = {}, {}, {}
    for names in [[s] for s in singles] + [["crop", "colour"]]:
        key = "_".join(names)
        aug = Augment(names, strength=1.0, crop_scale=DIGIT_CROP)
        # SimCLR §3.1: 'apply the targeted transformation(s) only to one branch ... leaving the other branch as the identity'
        net, _ = train_simclr(x[tr], aug, n_replicas=r, steps=120, batch=256, tau=0.2, hidden=64, seed=seeds[0], asymmetric=True)
        h_tr = frozen_features(net.f, for_replicas(x[tr], r))  # h_tr: R x M_train x 64
        h_te = frozen_features(net.f, for_replicas(x[te], r))  # h_te: R x M_test x 64
        probe[key] = linear_probe(h_tr, y[tr], h_te, y[te])  # R: one value per replica
        knn[key] = knn_probe(h_tr, y[tr], h_te, y[te])
        pretext[key] = pretext_accuracy(net, x[te], aug, seed=seeds[0], asymmetric=True)
    # counterparts: the network every model above starts from (same seed, so the same initialisation), untrained
    untrained, _ = train_simclr(x[tr], None, n_replicas=r, steps=0, batch=256, tau=0.2, hidden=64, seed=seeds[0])
    u_tr, u_te = frozen_features(untrained.f, for_replicas(x[tr], r)), frozen_features(untrained.f, for_replicas(x[te], r))
    random_probe, random_knn = linear_probe(u_tr, y[tr], u_te, y[te]), knn_probe(u_tr, y[tr], u_te, y[te])  # R each
    random_pretext = {  # the untrained network on each single transformation's one-branch task: R each
        s: pretext_accuracy(untrained, x[te], Augment([s], strength=1.0, crop_scale=DIGIT_CROP), seed=seeds[0], asymmetric=True)
        for s in singles
    }
    # the best and the median single are ranked by their means over replicas; each replica is a seed
    best_probe = probe[max(singles, key=lambda s: probe[s].mean().item())]
    best_knn = knn[max(singles, key=lambda s: knn[s].mean().item())]
    by_pretext = sorted(singles, key=lambda s: pretext[s].mean().item())  # ascending mean pretext top-1
    m = {
        **{f"{k}_probe": v for k, v in probe.items()},
        **{f"{k}_knn": v for k, v in knn.items()},
        **{f"{k}_pretext_acc": v for k, v in pretext.items()},
        "best_single_probe": best_probe,
        "composition_minus_best_single_probe": probe["crop_colour"] - best_probe,
        "composition_minus_best_single_knn": knn["crop_colour"] - best_knn,
        "min_single_pretext_acc": pretext[by_pretext[0]],
        "median_single_pretext_acc": pretext[by_pretext[len(singles) // 2]],
        "composition_pretext_acc": pretext["crop_colour"],  # control: the composed task is harder
        "random_init_probe": random_probe,
        "random_init_knn": random_knn,
        "random_init_minus_best_single_probe": random_probe - best_probe,  # counterpart: no training at all
        "random_init_minus_best_single_knn": random_knn - best_knn,
        **{f"random_init_{s}_pretext_acc": v for s, v in random_pretext.items()},
        # median_single_pretext_acc's counterpart: the untrained network's upper median over the six, ranked by its own means
        "random_init_median_single_pretext_acc": random_pretext[
            sorted(singles, key=lambda s: random_pretext[s].mean().item())[len(singles) // 2]
        ],
    }
    for k, v in m.items():
        evidence.metric(k, v.mean().item(), seeds=v.tolist())
    evidence.figure(
        "single_vs_composition",
        single_vs_composition_figure(probe, pretext),
        caption="Our analogue of SimCLR Figure 5: linear-probe accuracy and held-out pretext top-1 for each "
        "single transformation and for crop + colour; mean over replicas.",
    )
    evidence.note(f"asymmetric (one branch identity), {r} replicas x 120 steps x batch 256, MLP width 64, tau 0.2")
