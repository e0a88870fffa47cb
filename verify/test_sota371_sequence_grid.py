"""SOTA-371: over sequence lengths 4..20 and batch sizes 1..7, the blog's criterion (train-mode loss < eval-mode loss on the
training data = "cheating") marks long-sequence / small-batch BatchNorm models as cheating when the target is inside the
batch (Perschewski 2021, blog "Information leakage in batch normalization", §Hidden in Plain Batch, §The Result) — and we
test whether the criterion measures the leak at all, with controls whose targets are NOT in the batch."""
import functools
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from verify.sequences import train_grid

torch.set_num_threads(1)

SEQ_LENS = list(range(4, 21))  # blog §The Experiment: sequence lengths {4, ..., 20}
BATCH_SIZES = list(range(1, 8))  # blog text: {1, ..., 7} sequence batches per batch (its code: range(1, 7))
MODES = ("leak", "far", "random")  # blog data; same inputs with the target L-1 steps beyond the batch; random windows
STEPS = 40  # blog: 1000 steps per model; 40 keep 3 x 119 models in one pass near 60-80 s on 2 shared cores (deviation)
EVAL_GROUPS = 4  # random batches of N sequence batches per model for the train/eval-mode losses
SEED = 0


def blog_cheat_region(L, N):
    """Below the blog's separating line in its cheat/fair figure (code: plt.plot([3.5, 20.5], [1, 6]))."""
    return N <= 1 + (L - 3.5) * 5 / 17


@functools.lru_cache(maxsize=2)
def grid_losses(device):
    """One vectorised pass over MODES x 17 x 7 models (shared by both checks when they run in the same process)."""
    torch.manual_seed(SEED)
    t0 = time.time()
    res = train_grid(SEQ_LENS, BATCH_SIZES, MODES, STEPS, SEED, device, eval_groups=EVAL_GROUPS)
    return res["train_loss"], res["eval_loss"], time.time() - t0


def record(evidence, device):
    """Train (or reuse) the grid and record every metric and the heatmap figure."""
    tr, ev, wall = grid_losses(device)  # n_modes x 17 x 7 each
    assert torch.isfinite(tr).all() and torch.isfinite(ev).all()
    cheat = tr < ev  # blog §The Result: "the training mode loss is smaller than test mode loss" = cheating
    region = torch.tensor([[blog_cheat_region(L, N) for N in BATCH_SIZES] for L in SEQ_LENS])  # 17 x 7
    log_ratio = torch.log10(ev / tr)  # n_modes x 17 x 7, > 0 = "cheating"

    for i, mode in enumerate(MODES):
        name = {"leak": "leak", "far": "far_control", "random": "random_control"}[mode]
        evidence.metric(f"{name}_cheat_frac", cheat[i].float().mean().item())
        evidence.metric(f"{name}_cheat_frac_in_blog_cheat_region", cheat[i][region].float().mean().item())
        evidence.metric(f"{name}_cheat_frac_in_blog_fair_region", cheat[i][~region].float().mean().item())
        evidence.metric(f"{name}_cheat_frac_n1", cheat[i][:, 0].float().mean().item())
        evidence.metric(f"{name}_median_log10_eval_over_train", log_ratio[i].median().item())
    contrast = [(cheat[i][region].float().mean() - cheat[i][~region].float().mean()).item() for i in range(len(MODES))]
    evidence.metric("leak_region_contrast", contrast[0])  # blog: cheat region cheats, fair region is fair
    evidence.metric("far_control_region_contrast", contrast[1])
    evidence.metric("random_control_region_contrast", contrast[2])
    evidence.metric("leak_minus_far_cheat_frac", (cheat[0].float().mean() - cheat[1].float().mean()).item())
    evidence.metric("leak_minus_random_cheat_frac", (cheat[0].float().mean() - cheat[2].float().mean()).item())
    evidence.metric("leak_far_map_agreement", (cheat[0] == cheat[1]).float().mean().item())
    evidence.metric("grid_wall_s", wall)
    evidence.note(f"{len(MODES)} x {len(SEQ_LENS)} x {len(BATCH_SIZES)} models trained in one vectorised pass, "
                  f"{STEPS} Adam steps each (blog: 1000), {wall:.1f} s")

    fig, axes = plt.subplots(1, len(MODES), figsize=(4.2 * len(MODES), 4.2), sharey=True)
    line_L = np.array([3.5, 20.5])
    for i, mode in enumerate(MODES):
        ax = axes[i]
        im = ax.imshow(log_ratio[i].T.numpy(), origin="lower", cmap="RdBu_r", vmin=-2, vmax=2, aspect="auto",
                       extent=[3.5, 20.5, 0.5, 7.5])
        for j, L in enumerate(SEQ_LENS):
            for n, N in enumerate(BATCH_SIZES):
                ax.text(L, N, "C" if cheat[i, j, n] else "f", ha="center", va="center", fontsize=6)
        ax.plot(line_L, 1 + (line_L - 3.5) * 5 / 17, color="k", lw=1)  # the blog figure's separating line
        ax.set_title({"leak": "target in batch (blog)", "far": "control: same inputs, target outside",
                      "random": "control: random windows"}[mode], fontsize=9)
        ax.set_xlabel("sequence length")
    axes[0].set_ylabel("batch size (sequence batches)")
    fig.colorbar(im, ax=axes, label="log10(eval-mode / train-mode loss);  C: train < eval")
    fig.suptitle(f"Blog criterion over the grid after {STEPS} steps (blog: 1000)", fontsize=10)
    evidence.figure("cheat_fair_grid", fig)
    plt.close(fig)


@pytest.mark.slow
@pytest.mark.claim("SOTA-371", "grid")
def test_blog_grid_pattern_with_target_in_batch(evidence, device):
    """Blog pattern: with the target in the batch, batch-size-1 models and the region below the blog's line 'cheat'
    (train < eval) while the region above is fair, and the no-target controls do not cheat."""
    record(evidence, device)


@pytest.mark.slow
@pytest.mark.claim("SOTA-371", "criterion-control")
def test_train_below_eval_criterion_flags_no_target_controls(evidence, device):
    """The train<eval criterion flags models whose target is NOT in the batch about as often as the leaking models."""
    record(evidence, device)
