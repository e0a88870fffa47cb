"""SOTA-368, SimCLR Tables 4 and 5 on digits: NT-Xent against NT-Logistic and margin triplet losses, with and without
semi-hard negative mining (Table 4), and NT-Xent with and without l2 normalisation across temperatures, contrastive
accuracy against linear evaluation (Table 5) (SimCLR §5.1). Every loss trains its own replicas in one lock-step run."""

import math

import matplotlib.pyplot as plt
import pytest
import torch
import torch.nn.functional as F

from verify.augment import ShiftNoise
from verify.data import for_replicas, load_digits_split
from verify.losses import margin_triplet, nt_logistic, nt_xent, other_view_pairs, semi_hard
from verify.probes import frozen_features, knn_probe, linear_probe
from verify.simclr import encode_views, train_simclr

# seeds (the record's `seeds:`): every loss trains len(seeds) replicas (its seeds), all losses' replicas drawn in one
# lock-step run from a generator seeded with seeds[0]
# the digits toy of SOTA-362: MLP 64-128-128-64, h = 64-d post-ReLU, head 64-64-64; shift + noise views
NET = dict(hidden=128, rep_dim=64, out_dim=64, h_relu=True)
TRAIN = dict(steps=200, batch=128, lr=3e-3, **NET)
# Table 4 (§5.1: 'we tune the hyperparameters, and report their best results'): each loss at the temperature or
# margin that gave its best linear evaluation in a sweep over tau in {0.1, 0.2, 0.5, 1}, m in {0.2, 0.4, 0.8, 1.6}
TABLE4 = {  # name: (loss, tau or margin, negatives)
    "nt_xent": ("nt_xent", 0.2, "all"),
    "nt_logistic": ("nt_logistic", 0.2, "all"),
    "nt_logistic_sh": ("nt_logistic", 1.0, "semi_hard"),
    "margin": ("margin", 0.4, "all"),
    "margin_sh": ("margin", 0.4, "semi_hard"),
    # control: NT-Logistic as nt_logistic_sh with the semi-hard negative replaced by a random one
    "nt_logistic_random": ("nt_logistic", 1.0, "random"),
}
# counterpart of the margin loss's mining gain: margin_sh with the semi-hard negative replaced by a random one; trained
# in a run of its own, so that the six losses above keep their replicas
MARGIN_RANDOM = ("margin", 0.4, "random")
TABLE5 = {  # name: (l2-normalised, tau); SimCLR Table 5's temperatures
    "l2_tau0p05": (True, 0.05),
    "l2_tau0p1": (True, 0.1),
    "l2_tau0p5": (True, 0.5),
    "l2_tau1": (True, 1.0),
    "raw_tau10": (False, 10.0),
    "raw_tau100": (False, 100.0),
}


def pair_loss(kind, param, negatives):
    """One Table 4 loss as train_simclr's `loss`: NT-Xent over the 2N-1 other views, or a Table 2 alternative over the
    other view's negatives (§5.1 footnote 8), all of them, the semi-hard one (§5.1) or a random one per anchor."""

    def loss(z1, z2, g):  # z1, z2: R' x N x D, l2-normalised
        if kind == "nt_xent":
            return nt_xent(z1, z2, param)
        pos, neg, acc = other_view_pairs(z1, z2)  # pos: R' x 2N, neg: R' x 2N x (N-1)
        if negatives == "semi_hard":
            neg = neg.gather(-1, semi_hard(pos, neg))  # neg: R' x 2N x 1
        elif negatives == "random":
            pick = torch.randint(0, neg.shape[-1], (*neg.shape[:2], 1), generator=g).to(neg.device)  # R' x 2N x 1
            neg = neg.gather(-1, pick)
        return (nt_logistic if kind == "nt_logistic" else margin_triplet)(pos, neg, param), acc

    return loss


def l2_loss(l2, tau):
    """One Table 5 loss: NT-Xent at tau on z l2-normalised or as it is (train_simclr runs with l2=False)."""

    def loss(z1, z2, g):  # z1, z2: R' x N x D, unnormalised
        if l2:
            z1, z2 = F.normalize(z1, dim=-1), F.normalize(z2, dim=-1)
        return nt_xent(z1, z2, tau)

    return loss


def lock_step(losses, per):
    """train_simclr's `loss` for groups of `per` replicas, group k trained with losses[k]."""

    def loss(z1, z2, g):  # z1, z2: R x N x D with R = per * len(losses)
        parts = [fn(z1[k * per : (k + 1) * per], z2[k * per : (k + 1) * per], g) for k, fn in enumerate(losses)]
        return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])  # R, R

    return loss


def train_groups(data, losses, seeds, l2, steps):
    """len(seeds) replicas per loss, trained in lock-step on the digits from seeds[0]; returns the net and per-replica
    linear evaluation and kNN accuracy of h on the held-out split (R each)."""
    per = len(seeds)
    r = per * len(losses)
    net, _ = train_simclr(
        data["x_train"],
        ShiftNoise(),
        n_replicas=r,
        seed=seeds[0],
        loss=lock_step(losses, per),
        l2=l2,
        **{**TRAIN, "steps": steps},
    )
    h_tr = frozen_features(net, for_replicas(data["x_train"], r))[0]  # h_tr: R x M x 64
    h_te = frozen_features(net, for_replicas(data["x_test"], r))[0]
    return net, linear_probe(h_tr, data["y_train"], h_te, data["y_test"]), knn_probe(h_tr, data["y_train"], h_te, data["y_test"])


@torch.no_grad()
def contrastive_eval(net, data, groups, seed, batch=256):
    """Table 5's contrastive accuracy and entropy on held-out images: NT-Xent's softmax over the 2N-1 other views of a
    batch of N = 256, each group with its own l2 and tau. Returns top-1 and mean entropy (nats), R each."""
    g = torch.Generator().manual_seed(seed)
    x, r, per = data["x_test"][:batch], net.n_replicas, net.n_replicas // len(groups)
    imgs = x.unsqueeze(0).expand(r, -1, -1, -1)  # imgs: R x N x 8 x 8
    was = net.training
    net.eval()
    z1, z2 = encode_views(net, ShiftNoise().views(imgs, g), ShiftNoise().views(imgs, g), l2=False)  # R x N x D each
    net.train(was)
    acc, ent = [], []
    for k, (l2, tau) in enumerate(groups):
        a, b = z1[k * per : (k + 1) * per], z2[k * per : (k + 1) * per]  # per x N x D
        if l2:
            a, b = F.normalize(a, dim=-1), F.normalize(b, dim=-1)
        z = torch.cat([a, b], 1)  # z: per x 2N x D
        eye = torch.eye(2 * batch, dtype=torch.bool, device=z.device)
        logits = (z @ z.transpose(1, 2) / tau).masked_fill(eye, float("-inf"))  # logits: per x 2N x 2N
        p = logits.softmax(-1)  # p: per x 2N x 2N, the contrastive distribution of each anchor
        target = torch.cat([torch.arange(batch, 2 * batch), torch.arange(batch)]).to(z.device)  # target: 2N
        acc.append((logits.argmax(-1) == target).float().mean(1))
        ent.append(-(p * p.clamp_min(1e-30).log()).sum(-1).mean(1))
    return torch.cat(acc), torch.cat(ent)


def per_group(values, names):
    """Split an R-vector into {name: (R / len(names))-vector} in group order."""
    per = len(values) // len(names)
    return {n: values[k * per : (k + 1) * per] for k, n in enumerate(names)}


@pytest.mark.claim("SOTA-368", "table4-losses")
def test_nt_xent_against_logistic_and_margin_with_and_without_mining(evidence, device, seeds):
    """Table 4 on digits: semi-hard mining should help NT-Logistic and the margin loss (a random negative should not),
    and NT-Xent without mining should beat the best mined alternative under linear evaluation."""
    data = load_digits_split(device=device)
    _, lin, knn = train_groups(data, [pair_loss(*spec) for spec in TABLE4.values()], seeds, True, TRAIN["steps"])
    lin, knn = per_group(lin, list(TABLE4)), per_group(knn, list(TABLE4))
    _, lin["margin_random"], knn["margin_random"] = train_groups(data, [pair_loss(*MARGIN_RANDOM)], seeds, True, TRAIN["steps"])
    best_mined = torch.maximum(lin["nt_logistic_sh"], lin["margin_sh"])  # per seed, the better mined alternative
    per_seed = {
        **{f"lin_{k}": v for k, v in lin.items()},
        **{f"knn_{k}": v for k, v in knn.items()},
        "lin_mining_gain_nt_logistic": lin["nt_logistic_sh"] - lin["nt_logistic"],
        "lin_mining_gain_margin": lin["margin_sh"] - lin["margin"],
        "lin_random_negative_gain_nt_logistic": lin["nt_logistic_random"] - lin["nt_logistic"],
        "lin_random_negative_gain_margin": lin["margin_random"] - lin["margin"],  # counterpart of the margin's gain
        "lin_nt_xent_minus_best_mined": lin["nt_xent"] - best_mined,
        "lin_best_mined_minus_nt_xent": best_mined - lin["nt_xent"],
        # counterparts: the same difference for the alternatives without mining (no softmax weighting of negatives)
        "lin_best_mined_minus_nt_logistic": best_mined - lin["nt_logistic"],
        "lin_best_mined_minus_margin": best_mined - lin["margin"],
        "knn_mining_gain_nt_logistic": knn["nt_logistic_sh"] - knn["nt_logistic"],
        "knn_mining_gain_margin": knn["margin_sh"] - knn["margin"],
        "knn_random_negative_gain_nt_logistic": knn["nt_logistic_random"] - knn["nt_logistic"],
        "knn_random_negative_gain_margin": knn["margin_random"] - knn["margin"],
        "knn_nt_xent_minus_best_mined": knn["nt_xent"] - torch.maximum(knn["nt_logistic_sh"], knn["margin_sh"]),
    }
    for name, v in per_seed.items():
        evidence.metric(name, v.mean().item(), unit="fraction", seeds=v.tolist())

    fig, ax = plt.subplots(figsize=(6, 3))
    names = list(TABLE4)
    for j, (label, acc) in enumerate((("linear evaluation", lin), ("kNN", knn))):
        ax.bar(
            [i + 0.4 * j for i in range(len(names))],
            [acc[n].mean().item() for n in names],
            width=0.4,
            yerr=[acc[n].std().item() for n in names],
            label=label,
        )
    ax.set_xticks([i + 0.2 for i in range(len(names))], [n.replace("_", " ") for n in names], rotation=20, fontsize=7)
    ax.set_ylim(0.6, 1.0)
    ax.set_ylabel("held-out digit accuracy of h")
    ax.legend(fontsize=7)
    evidence.figure(
        "table4_losses",
        fig,
        caption="Table 4 on digits: linear evaluation and kNN accuracy of h for each "
        f"loss at its tuned temperature or margin (sh: semi-hard mining); means and sd of {len(seeds)} seeds.",
    )
    plt.close(fig)
    evidence.note(
        f"{len(seeds)} seeds per loss; {TRAIN['steps']} steps, batch {TRAIN['batch']}; "
        + ", ".join(f"{k}: {v[1]}" for k, v in TABLE4.items())
        + f"; counterpart run: margin_random: {MARGIN_RANDOM[1]}"
    )


@pytest.mark.claim("SOTA-368", "table5-l2-temperature")
def test_without_l2_the_task_is_easier_and_the_representation_worse(evidence, device, seeds):
    """Table 5 on digits: without l2 normalisation the contrastive task is solved more often but h is worse under
    linear evaluation; with l2, a lower temperature sharpens the contrastive distribution (lower entropy)."""
    data = load_digits_split(device=device)
    groups = list(TABLE5.values())
    out = {}
    for kind, steps in (("trained", TRAIN["steps"]), ("untrained", 0)):
        net, lin, knn = train_groups(data, [l2_loss(*spec) for spec in groups], seeds, False, steps)
        acc, ent = contrastive_eval(net, data, groups, seeds[0])
        out[kind] = {key: per_group(v, list(TABLE5)) for key, v in (("lin", lin), ("knn", knn), ("acc", acc), ("entropy", ent))}
    m = out["trained"]
    per_seed = {f"{key}_{name}": v for key in ("lin", "knn", "acc", "entropy") for name, v in m[key].items()}
    per_seed["acc_raw_tau10_minus_l2_tau0p1"] = m["acc"]["raw_tau10"] - m["acc"]["l2_tau0p1"]
    per_seed["lin_l2_tau0p1_minus_raw_tau10"] = m["lin"]["l2_tau0p1"] - m["lin"]["raw_tau10"]
    per_seed["lin_l2_tau0p1_minus_tau1"] = m["lin"]["l2_tau0p1"] - m["lin"]["l2_tau1"]  # what the temperature buys
    per_seed["knn_l2_tau0p1_minus_raw_tau10"] = m["knn"]["l2_tau0p1"] - m["knn"]["raw_tau10"]
    per_seed["entropy_l2_tau1_minus_tau0p05"] = m["entropy"]["l2_tau1"] - m["entropy"]["l2_tau0p05"]
    u = out["untrained"]["acc"]
    per_seed["random_init_acc_raw_tau10_minus_l2_tau0p1"] = u["raw_tau10"] - u["l2_tau0p1"]  # control
    for name, v in per_seed.items():
        unit = "nats" if name.startswith("entropy") else "fraction"
        evidence.metric(name, v.mean().item(), unit=unit, seeds=v.tolist())
    # counterparts on the untrained networks (same groups, no training): the entropy drop and the temperature's gain
    ue, ul = out["untrained"]["entropy"], out["untrained"]["lin"]
    v = ue["l2_tau1"] - ue["l2_tau0p05"]
    evidence.metric("random_init_entropy_l2_tau1_minus_tau0p05", v.mean().item(), unit="nats", seeds=v.tolist())
    v = ul["l2_tau0p1"] - ul["l2_tau1"]
    evidence.metric("random_init_lin_l2_tau0p1_minus_tau1", v.mean().item(), unit="fraction", seeds=v.tolist())
    evidence.metric("max_entropy", math.log(2 * 256 - 1), unit="nats")

    fig, ax = plt.subplots(figsize=(5, 3.5))
    for name in TABLE5:
        ax.errorbar(
            m["acc"][name].mean().item(),
            m["lin"][name].mean().item(),
            xerr=m["acc"][name].std().item(),
            yerr=m["lin"][name].std().item(),
            fmt="o" if name.startswith("l2") else "s",
            label=name,
        )
    ax.set_xlabel("contrastive accuracy (held-out, top-1 of 511)")
    ax.set_ylabel("linear evaluation of h")
    ax.legend(fontsize=7)
    evidence.figure(
        "table5_task_vs_representation",
        fig,
        caption="Table 5 on digits: contrastive-task accuracy against "
        f"linear evaluation, l2-normalised (circles) and not (squares), means and sd of {len(seeds)} seeds.",
    )
    plt.close(fig)
    evidence.note(f"{len(seeds)} seeds per setting; {TRAIN['steps']} steps, batch {TRAIN['batch']}")
