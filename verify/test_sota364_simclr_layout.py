"""SOTA-364 (SimCLR's own layout): SimCLR encodes both views of an image in one forward pass on the same device
(google-research/simclr model.py: `features = tf.concat(features_list, 0)` per TPU core), so with per-device BN a
positive pair shares its normalisation statistics (SimCLR §2.2 "as positive pairs are computed in the same
device"). Trained here with per-device BN, with global BN (SimCLR's fix) and with view 2 shuffled across devices."""

import matplotlib.pyplot as plt
import pytest
import torch

from verify.augment import ShiftNoise
from verify.data import load_digits_split
from verify.moco import recalibrate_bn
from verify.simclr import pretext_accuracy, train_simclr

# seeds (the record's `seeds:`): replicas drawn from a generator seeded with seeds[0]; len(seeds) replicas
STEPS, BATCH, DEVICES = 300, 64, 8  # 8 simulated devices x 8 images = 16 views per device (SimCLR: 4096 / 128 cores)
NET = dict(hidden=128, rep_dim=32, head="none", norm="bn")  # the MoCo toy's encoder 64-128-128-32, loss on its output
READ = 8 * BATCH  # training images read per trained model and layout (8 batches)
LAYOUTS = {"per_device": ("same_device", DEVICES), "global": ("same_device", 1), "shuffle": ("shuffle", DEVICES)}


def _summary(evidence, name, per_seed):
    """Record the mean over seeds of a per-seed tensor (R) with its per-seed values, and its min and max."""
    evidence.metric(name, float(per_seed.mean()), seeds=per_seed.tolist())
    evidence.metric(name + "_min", float(per_seed.min()))
    evidence.metric(name + "_max", float(per_seed.max()))


@torch.no_grad()
def _read(net, data, layout, devices):
    """Pretext top-1 among the 2N-1 other views on fresh training batches (train mode: batch statistics) with the
    views laid out as `layout`; R."""
    net.train()
    perm = torch.randperm(len(data["x_train"]), generator=torch.Generator().manual_seed(7))[:READ]
    x = data["x_train"][perm.to(data["x_train"].device)]  # x: READ x 8 x 8
    return pretext_accuracy(net, x, ShiftNoise(), seed=123, batch=BATCH, layout=layout, devices=devices)


@pytest.mark.claim("SOTA-364", "simclr-layout")
def test_simclr_same_device_views_gain_through_per_device_bn(evidence, device, seeds):
    """With both views on one device and per-device BN, SimCLR's pretext accuracy rests on the device split, the model
    gains more from the split than two models trained without it (the learned-cheat margin, against the leak-free
    margin of the global-BN and shuffle models), and its kNN representation is worse than with either fix."""
    data = load_digits_split(device=device)
    runs, acc = {}, {}
    for name, (layout, devices) in LAYOUTS.items():
        net, hist = train_simclr(
            data["x_train"],
            ShiftNoise(),
            n_replicas=len(seeds),
            steps=STEPS,
            batch=BATCH,
            tau=0.2,
            lr=3e-3,
            seed=seeds[0],
            layout=layout,
            devices=devices,
            monitor=data,
            monitor_every=STEPS,
            **NET,
        )
        runs[name] = (net, hist)
        _summary(evidence, f"{name}_pretext_acc_train", hist["pretext_acc"][-20:].mean(0))
        _summary(evidence, f"{name}_knn_end", hist["knn"][-1])
        net.f.set_devices(DEVICES)  # read every model on the same 8-device split
        acc[name] = {
            "coupled": _read(net, data, "same_device", DEVICES),  # both views on one device
            "shuffled": _read(net, data, "shuffle", DEVICES),
        }  # view 2 on random devices
        recalibrate_bn(net.f, data, batch=2 * BATCH)
        net.eval()
        acc[name]["eval"] = pretext_accuracy(net, data["x_test"], ShiftNoise(), batch=BATCH)  # no batch channel
        for regime, a in acc[name].items():
            _summary(evidence, f"{name}_acc_{regime}", a)
    drop = {n: acc[n]["coupled"] - acc[n]["shuffled"] for n in acc}  # R each: what the shared device is worth
    _summary(evidence, "pretext_acc_nofix_minus_global", acc["per_device"]["coupled"] - acc["global"]["coupled"])
    _summary(evidence, "nofix_drop_when_views_shuffled", drop["per_device"])  # effect
    _summary(evidence, "shufflefix_gain_when_coupled", drop["shuffle"])  # the passive channel, for a leak-free model
    _summary(evidence, "globalfix_gain_when_coupled", drop["global"])
    _summary(evidence, "learned_cheat_margin", drop["per_device"] - drop["shuffle"])  # > 0 only if learned
    _summary(evidence, "leak_free_margin", drop["global"] - drop["shuffle"])  # control: two models trained leak-free
    _summary(evidence, "knn_global_minus_nofix", runs["global"][1]["knn"][-1] - runs["per_device"][1]["knn"][-1])
    _summary(evidence, "knn_shuffle_minus_nofix", runs["shuffle"][1]["knn"][-1] - runs["per_device"][1]["knn"][-1])
    # counterparts: the same kNN gaps with the per-device-BN model replaced by the other leak-free model
    _summary(evidence, "knn_global_minus_shuffle", runs["global"][1]["knn"][-1] - runs["shuffle"][1]["knn"][-1])
    _summary(evidence, "knn_shuffle_minus_global", runs["shuffle"][1]["knn"][-1] - runs["global"][1]["knn"][-1])
    evidence.figure(
        "simclr_layouts",
        _figure(runs),
        caption="Pretext top-1 during training in SimCLR's layout (both views "
        "of an image on one device) with per-device BN, global BN and view 2 shuffled across devices; "
        "mean over seeds.",
    )
    evidence.note(
        f"digits, encoder 64-128-128-32 (per-device BN), NT-Xent tau 0.2, batch {BATCH} over {DEVICES} "
        f"devices, {STEPS} Adam steps (lr 3e-3), {len(seeds)} seeds; read on fresh training batches"
    )


def _figure(runs):
    """Pretext accuracy over training per layout (mean and min-max over seeds)."""
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    kernel = torch.ones(1, 1, 25) / 25  # moving average over 25 steps
    for name, color in (("per_device", "tab:red"), ("shuffle", "tab:blue"), ("global", "tab:green")):
        acc = runs[name][1]["pretext_acc"].T[:, None, :]  # acc: R x 1 x T
        smooth = torch.nn.functional.conv1d(acc, kernel).squeeze(1)  # smooth: R x (T-24)
        steps = torch.arange(25, STEPS + 1)
        ax.plot(steps, smooth.mean(0), color=color, label=name.replace("_", "-") + " BN")
        ax.fill_between(steps, smooth.min(0).values, smooth.max(0).values, color=color, alpha=0.2)
    ax.set(xlabel="step", ylabel="pretext top-1 (train mode, 2N-1 candidates)")
    ax.legend(fontsize=8)
    fig.suptitle(f"SimCLR toy: both views on one device ({DEVICES} devices x {BATCH // DEVICES} images)", fontsize=9)
    fig.tight_layout()
    return fig
