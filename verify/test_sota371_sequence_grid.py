"""SOTA-371: over sequence lengths 4..20 and batch sizes 1..7, the blog's criterion (train-mode loss < eval-mode loss on the
training data = "cheating") marks long-sequence / small-batch BatchNorm models as cheating when the target is inside the
batch (Perschewski 2021, blog "Information leakage in batch normalization", §Hidden in Plain Batch, §The Result) — and we
test whether the criterion measures the leak at all, with controls whose targets are NOT in the batch."""

import time

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from verify.sequences import train_grid

SEQ_LENS = list(range(4, 21))  # blog §The Experiment: sequence lengths {4, ..., 20}
BATCH_SIZES = list(range(1, 8))  # blog text: {1, ..., 7} sequence batches per batch (its code: range(1, 7))
NAMES = {"leak": "leak", "far": "far_control"}  # blog data; same inputs with the target L-1 steps beyond the batch
TITLES = {"leak": "target in batch (blog)", "far": "control: same inputs, target outside"}
STEPS = 40  # blog: 1000 steps per model; 40 keep one grid of 119 models near 15 s on one core (deviation)
EVAL_GROUPS = 4  # random batches of N sequence batches per model for the train/eval-mode losses
SEED = 0
PAIR_LENS = list(range(4, 21, 3))  # 4, 7, ..., 19: every third length, so both data sets train in one check's budget
PRECISE_BN = 32  # batches whose statistics replace the running ones before evaluating: no lag behind the weights


def blog_cheat_region(L, N):
    """Below the blog's separating line in its cheat/fair figure (code: plt.plot([3.5, 20.5], [1, 6]))."""
    return N <= 1 + (L - 3.5) * 5 / 17


def grid_panel(ax, log_ratio, cheat, seq_lens, title):
    """One data set's grid: log10(eval / train) per cell, 'C' where the blog's criterion flags it, the blog's line."""
    half = (seq_lens[1] - seq_lens[0]) / 2  # evenly spaced lengths: each column centred on its length
    im = ax.imshow(
        log_ratio.T.numpy(),
        origin="lower",
        cmap="RdBu_r",
        vmin=-2,
        vmax=2,
        aspect="auto",
        extent=[seq_lens[0] - half, seq_lens[-1] + half, 0.5, len(BATCH_SIZES) + 0.5],
    )
    for j, L in enumerate(seq_lens):
        for n, N in enumerate(BATCH_SIZES):
            ax.text(L, N, "C" if cheat[j, n] else "f", ha="center", va="center", fontsize=6)
    line_L = np.array([3.5, 20.5])
    ax.plot(line_L, 1 + (line_L - 3.5) * 5 / 17, color="k", lw=1)  # the blog figure's separating line
    ax.set_xlim(seq_lens[0] - half, seq_lens[-1] + half)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("sequence length")
    return im


def record(evidence, device, mode):
    """Train one data set's 17 x 7 grid in one vectorised pass; record the blog criterion's verdicts and a heatmap."""
    torch.manual_seed(SEED)
    t0 = time.time()
    res = train_grid(SEQ_LENS, BATCH_SIZES, (mode,), STEPS, SEED, device, eval_groups=EVAL_GROUPS)
    wall = time.time() - t0
    tr, ev = res["train_loss"][0], res["eval_loss"][0]  # 17 x 7 each
    assert torch.isfinite(tr).all() and torch.isfinite(ev).all()
    cheat = tr < ev  # blog §The Result: "the training mode loss is smaller than test mode loss" = cheating
    region = torch.tensor([[blog_cheat_region(L, N) for N in BATCH_SIZES] for L in SEQ_LENS])  # 17 x 7
    log_ratio = torch.log10(ev / tr)  # 17 x 7, > 0 = "cheating"
    name = NAMES[mode]
    evidence.metric(f"{name}_cheat_frac", cheat.float().mean().item())
    evidence.metric(f"{name}_cheat_frac_in_blog_cheat_region", cheat[region].float().mean().item())
    evidence.metric(f"{name}_cheat_frac_in_blog_fair_region", cheat[~region].float().mean().item())
    evidence.metric(f"{name}_cheat_frac_n1", cheat[:, 0].float().mean().item())
    evidence.metric(f"{name}_median_log10_eval_over_train", log_ratio.median().item())
    # blog: the region below its line cheats, the region above is fair
    evidence.metric(f"{name}_region_contrast", (cheat[region].float().mean() - cheat[~region].float().mean()).item())
    evidence.metric("grid_wall_s", wall)
    evidence.note(
        f"{len(SEQ_LENS)} x {len(BATCH_SIZES)} models trained in one vectorised pass, "
        f"{STEPS} Adam steps each (blog: 1000), {wall:.1f} s"
    )

    fig, ax = plt.subplots(figsize=(5.2, 4.2))
    im = grid_panel(ax, log_ratio, cheat, SEQ_LENS, TITLES[mode])
    ax.set_ylabel("batch size (sequence batches)")
    fig.colorbar(im, ax=ax, label="log10(eval-mode / train-mode loss);  C: train < eval")
    fig.suptitle(f"Blog criterion over the grid after {STEPS} steps (blog: 1000)", fontsize=10)
    evidence.figure(
        "cheat_fair_grid",
        fig,
        caption="The blog's criterion over sequence length and batch size: colour is "
        "log10 of eval-mode over train-mode loss; C marks the cells it calls cheating (train loss below eval loss).",
    )
    plt.close(fig)


def record_far_control_n1(evidence, device):
    """Control of grid: the batch-size-1 column of the same-input data set whose target is L-1 steps beyond the batch
    (no target in the batch), trained and judged as the leak grid; 17 models, one pass."""
    torch.manual_seed(SEED)
    res = train_grid(SEQ_LENS, [1], ("far",), STEPS, SEED, device, eval_groups=EVAL_GROUPS)
    tr, ev = res["train_loss"][0, :, 0], res["eval_loss"][0, :, 0]  # 17 each: lengths 4..20 at batch size 1
    assert torch.isfinite(tr).all() and torch.isfinite(ev).all()
    cheat = tr < ev  # 17, blog §The Result: train-mode loss below test-mode loss = "cheating"
    evidence.metric("far_control_cheat_frac_n1", cheat.float().mean().item(), unit="fraction")  # vs leak_cheat_frac_n1


def record_far_control_region(evidence, device):
    """Counterpart of leak_region_contrast: the same-input data set whose target is L-1 steps beyond the batch (no
    target in the batch) over the whole 17 x 7 grid, trained and judged as the leak grid in a pass of its own."""
    torch.manual_seed(SEED)
    res = train_grid(SEQ_LENS, BATCH_SIZES, ("far",), STEPS, SEED, device, eval_groups=EVAL_GROUPS)
    tr, ev = res["train_loss"][0], res["eval_loss"][0]  # 17 x 7 each
    assert torch.isfinite(tr).all() and torch.isfinite(ev).all()
    cheat = tr < ev  # 17 x 7, blog §The Result: train-mode loss below test-mode loss = "cheating"
    region = torch.tensor([[blog_cheat_region(L, N) for N in BATCH_SIZES] for L in SEQ_LENS])  # 17 x 7, below the line
    evidence.metric("far_control_cheat_frac", cheat.float().mean().item(), unit="fraction")
    contrast = (cheat[region].float().mean() - cheat[~region].float().mean()).item()  # below minus above the blog's line
    evidence.metric("far_control_region_contrast", contrast, unit="fraction")  # vs leak_region_contrast


@pytest.mark.claim("SOTA-371", "grid")
def test_blog_grid_pattern_with_target_in_batch(evidence, device):
    """Blog pattern: with the target in the batch, batch-size-1 models and the region below the blog's line 'cheat'
    (train < eval) while the region above is fair, and batch-size-1 models without the target in the batch are fair."""
    record(evidence, device, "leak")
    record_far_control_n1(evidence, device)
    record_far_control_region(evidence, device)


@pytest.mark.claim("SOTA-371", "criterion-control")
def test_train_below_eval_criterion_flags_no_target_controls(evidence, device):
    """The train<eval criterion draws the blog's boundary in a grid whose targets are NOT in the batch (same inputs,
    target beyond it) and flags the leak grid no more often than that control."""
    torch.manual_seed(SEED)
    res = train_grid(
        PAIR_LENS, BATCH_SIZES, ("leak", "far"), STEPS, SEED, device, eval_groups=EVAL_GROUPS, precise_bn=PRECISE_BN
    )  # both data sets in one pass, the same steps
    tr, ev = res["train_loss"], res["eval_loss"]  # 2 x L x N each: leak, far
    assert torch.isfinite(tr).all() and torch.isfinite(ev).all()
    cheat = tr < ev  # 2 x L x N, blog §The Result: train-mode loss below test-mode loss = "cheating"
    region = torch.tensor([[blog_cheat_region(L, N) for N in BATCH_SIZES] for L in PAIR_LENS])  # L x N
    frac = cheat.float().flatten(1).mean(1)  # 2: share flagged, leak and control
    contrast = [(c[region].float().mean() - c[~region].float().mean()).item() for c in cheat]  # below minus above
    evidence.metric("leak_cheat_frac", frac[0].item(), unit="fraction")
    evidence.metric("far_control_cheat_frac", frac[1].item(), unit="fraction")
    evidence.metric("leak_minus_far_cheat_frac", (frac[0] - frac[1]).item(), unit="fraction")  # the one comparison
    evidence.metric("leak_region_contrast", contrast[0], unit="fraction")
    evidence.metric("far_control_region_contrast", contrast[1], unit="fraction")
    evidence.metric("leak_cheat_frac_n1", cheat[0, :, 0].float().mean().item(), unit="fraction")
    evidence.metric("far_control_cheat_frac_n1", cheat[1, :, 0].float().mean().item(), unit="fraction")
    evidence.metric("leak_far_map_agreement", (cheat[0] == cheat[1]).float().mean().item(), unit="fraction")
    evidence.note(
        f"{len(PAIR_LENS)} x {len(BATCH_SIZES)} cells x 2 data sets in one vectorised pass, {STEPS} Adam "
        f"steps each (blog: 1000), running statistics re-estimated over {PRECISE_BN} batches (precise BN)"
    )

    fig, axes = plt.subplots(1, 2, figsize=(9.5, 4.0), sharey=True)
    log_ratio = torch.log10(ev / tr)  # 2 x L x N, > 0 = flagged
    for k, mode in enumerate(("leak", "far")):
        im = grid_panel(axes[k], log_ratio[k], cheat[k], PAIR_LENS, TITLES[mode])
    axes[0].set_ylabel("batch size (sequence batches)")
    fig.colorbar(im, ax=axes, label="log10(eval-mode / train-mode loss);  C: train < eval")
    fig.suptitle(f"Blog criterion, leak grid against its same-input control, {STEPS} steps, precise BN", fontsize=10)
    evidence.figure(
        "leak_vs_control_grid",
        fig,
        caption="The same criterion on the leak grid (left) and on its same-input "
        "control, whose target is never in the batch (right); a criterion that measures the leak would flag only "
        "the left.",
    )
    plt.close(fig)
