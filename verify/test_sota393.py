"""SOTA-393: SimSiam learns at a small batch (16) about as much as at batch 128, and without its stop-gradient it
gains nothing at the small batch either (Chen & He 2020, Abstract: "(ii) large batches"; toy SimSiam on MNIST).

Shapes: R = replicas (one per seed, trained in lock-step), N = batch, M = probe images.
"""

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from verify.mnist_sample import mnist_5k_split
from verify.siamese import LR, STEPS, Siamese, augment, measure, pooled, simsiam_loss

SMALL, LARGE = 16, 128  # the small batch under test, and SOTA-382's batch
IMAGES = STEPS * LARGE  # 38,400 images (9.6 epochs of 4,000) for every model: the small batch takes 8x the steps


def views_at(data, r, batch, generator):
    """Two augmented views of an independent batch of `batch` images per replica: each R x N x 196."""
    x = data["x_train"]
    idx = torch.rand(r, x.shape[0], generator=generator).argsort(1)[:, :batch].to(x.device)  # idx: R x N
    imgs = x[idx].flatten(0, 1)  # imgs: R*N x 14 x 14
    return augment(imgs, generator).view(r, batch, -1), augment(imgs, generator).view(r, batch, -1)


def train_at(data, seeds, device, batch, stop):
    """SimSiam with batch norm (verify/siamese.py's network) trained on IMAGES images at `batch`, with or without the
    stop-gradient; its linear-probe accuracy before and after, and its collapse measure, each a list over seeds."""
    torch.manual_seed(seeds[0])  # the same initial weights for every model
    net = Siamese(len(seeds), "bn").to(device)
    before = measure(net, data)
    opt = torch.optim.Adam(net.parameters(), lr=LR)
    gen = torch.Generator().manual_seed(seeds[0])  # the same stream of batches and views for every model
    for _ in range(IMAGES // batch):
        v1, v2 = (v.to(device) for v in views_at(data, len(seeds), batch, gen))  # R x N x 196 each
        loss = simsiam_loss(net, v1, v2, stop=stop)  # Chen & He, Algorithm 1: z detached when stop
        opt.zero_grad()
        loss.backward()
        opt.step()
    after = measure(net, data)
    gain = [a - b for a, b in zip(after["lin"], before["lin"])]
    return {"lin_untrained": before["lin"], "lin_gain": gain, "zstd": after["zstd"]}


def train_batches(seeds, device):
    """SimSiam at batch 16 and 128 and, at batch 16, without the stop-gradient; their metrics per seed."""
    data = {k: (pooled(v) if k.startswith("x") else v).to(device) for k, v in mnist_5k_split().items()}
    out = {}
    for name, batch, stop in (("b16", SMALL, True), ("b16_nostop", SMALL, False), ("b128", LARGE, True)):
        out.update({f"simsiam_{name}_{k}": v for k, v in train_at(data, seeds, device, batch, stop).items()})
    for name in ("b16", "b16_nostop"):  # how far each small-batch model's gain is from batch 128's, per seed
        out[f"simsiam_{name}_minus_b128_gain"] = [
            a - b for a, b in zip(out[f"simsiam_{name}_lin_gain"], out["simsiam_b128_lin_gain"])
        ]
    return out


@pytest.mark.claim("SOTA-393", "small-batch-learns")
def test_small_batch_learns(evidence, seeds, device, experiment):
    """SimSiam at batch 16 gains linear-probe accuracy over its untrained network; without stop-gradient it does not."""
    runs = experiment(train_batches, seeds, device)  # trained once, read by both checks of SOTA-393
    for name, unit in (
        ("simsiam_b16_lin_gain", "accuracy"),
        ("simsiam_b16_nostop_lin_gain", "accuracy"),
        ("simsiam_b16_lin_untrained", "accuracy"),
        ("simsiam_b16_nostop_zstd", "std x sqrt(d)"),
        ("simsiam_b16_zstd", "std x sqrt(d)"),
    ):
        evidence.metric(name, float(np.mean(runs[name])), unit=unit, seeds=runs[name])


@pytest.mark.claim("SOTA-393", "small-batch-matches")
def test_small_batch_matches(evidence, seeds, device, experiment):
    """SimSiam's gain at batch 16 is no more than 3 points below its gain at batch 128 on the same 38,400 images."""
    runs = experiment(train_batches, seeds, device)
    for name in ("simsiam_b16_minus_b128_gain", "simsiam_b16_nostop_minus_b128_gain", "simsiam_b128_lin_gain"):
        evidence.metric(name, float(np.mean(runs[name])), unit="accuracy", seeds=runs[name])
    fig, ax = plt.subplots(figsize=(4, 3))
    for name, marker in (("b16", "o"), ("b128", "s"), ("b16_nostop", "x")):
        ax.plot(seeds, runs[f"simsiam_{name}_lin_gain"], marker, label=name.replace("_", " "))
    ax.set(xlabel="seed", ylabel="linear-probe gain (accuracy)")
    ax.legend()
    evidence.figure("gains", fig, caption="Linear-probe gain over the untrained network per seed, by batch.")
    plt.close(fig)
