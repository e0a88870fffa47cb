"""SOTA-371 grid: the time of training all 17 x 7 blog models (per data mode) in one vectorised pass
(verify/sequences.py) vs training them one at a time as nn.Sequential models (the blog code's loop), the latter
extrapolated from a few timed models with a per-step cost a + b * (N * L * (L-1)) fitted on them.

Roofline: the grid's throughput is printed beside this machine's measured matrix-multiply rate for the same shapes,
the batched matmuls one training step of the grid makes (each bucket's convolutions as taps @ weights, forward, and
the two backward products), timed alone; the step can be no faster than those matmuls at that rate. (The grid computes
each convolution as three products of a third of the depth, verify.sequences._conv3: the same FLOPs; the roofline is
held to the single deeper product, the faster of the two.)

Times are CPU seconds of this process (torch on one thread), so that other jobs on a shared machine do not enter;
the one-time import that a process's first optimizer triggers is paid before either side is timed.

Targets, printed beside the figures with whether they hold: the vectorised pass at least 2.5x as fast as training the
models one at a time, and a training step at least 0.6 of the roofline.

usage: .venv/bin/python bench/bench_sota371_grid.py [--steps 20] [--modes leak]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # repo root, for `verify`
from verify.sequences import (
    CHANNELS,
    MODES,
    N_BLOCKS,
    blog_function,
    blog_model,
    build_grid,
    grid_optimizer,
    grid_step,
    sequence_batches,
    train_grid,
)

torch.set_num_threads(1)
clock = time.process_time  # CPU seconds of this process (one thread): other jobs on the machine do not count
SEQ_LENS, BATCH_SIZES = list(range(4, 21)), list(range(1, 8))
SPEEDUP_TARGET = 2.5  # one-at-a-time time / vectorised time
ROOFLINE_TARGET = 0.6  # matmuls-alone time / training-step time


def verdict(value, target):
    return "holds" if value >= target else "MISSED"


def time_one_model(L, N, steps, g):
    """Seconds per Adam step of one nn.Sequential blog model on N sequence batches (blog code's training loop)."""
    X, Y = sequence_batches(blog_function(), L, "leak", g)  # B x E x L-1, B x E
    model = blog_model(L)
    opt = torch.optim.Adam(model.parameters())
    t = None
    for s in range(steps + 2):  # two warm-up steps
        if s == 2:
            t = clock()
        idx = torch.randperm(X.shape[0], generator=g)[:N]
        x, y = X[idx].reshape(-1, 1, L - 1), Y[idx].reshape(-1, 1)  # N*E x 1 x L-1, N*E x 1
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return (clock() - t) / steps


def matmul_shapes(modes):
    """The batched matmuls (M, P, K) @ (M, K, N) of one training step of the grid: per bucket and block, the conv as
    taps @ weights (forward), grad of the taps and grad of the weights (backward); the final conv forward + backward."""
    buckets, _ = build_grid(SEQ_LENS, BATCH_SIZES, modes, 0, "cpu")
    shapes = []
    for b in buckets:
        M, rows = len(b.specs), b.n_max * b.E * b.T  # rows: G x S x T positions of one step (G = 1)
        for k in range(N_BLOCKS):
            c_in = 1 if k == 0 else CHANNELS
            shapes += [(M, rows, 3 * c_in, CHANNELS), (M, rows, CHANNELS, 3 * c_in), (M, 3 * c_in, rows, CHANNELS)]
        s = b.n_max * b.E  # final Conv1d(32, 1, L-1): one dot product of length T*C per sample
        shapes += [(M, s, b.T * CHANNELS, 1), (M, s, 1, b.T * CHANNELS), (M, b.T * CHANNELS, s, 1)]
    return shapes


def time_grid_steps(modes, steps):
    """Seconds per training step of the vectorised grid (train_grid's step), after one warm-up step; build excluded."""
    buckets, g = build_grid(SEQ_LENS, BATCH_SIZES, modes, 0, "cpu")
    opt = grid_optimizer(buckets)  # train_grid's
    t = None
    for s in range(steps + 1):
        if s == 1:
            t = clock()
        grid_step(buckets, opt, g)
    return (clock() - t) / steps


def time_matmuls(shapes, reps=20):
    """Seconds for one pass over the batched matmuls `shapes` (best of `reps`), and their FLOPs."""
    mats = [(torch.randn(M, P, K), torch.randn(M, K, N)) for M, P, K, N in shapes]
    best = float("inf")
    for _ in range(reps):
        t = clock()
        for a, b in mats:
            torch.bmm(a, b)
        best = min(best, clock() - t)
    return best, float(sum(2 * M * P * K * N for M, P, K, N in shapes))


def square_matmul_rate(n=1024, reps=5):
    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.mm(a, b)
    t = clock()
    for _ in range(reps):
        torch.mm(a, b)
    return 2 * n**3 * reps / (clock() - t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--modes", default="leak")  # one check trains one data set
    args = ap.parse_args()
    modes = tuple(args.modes.split(","))
    assert all(m in MODES for m in modes)
    g = torch.Generator().manual_seed(0)
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])  # a process's first optimizer imports torch._dynamo (~1 s)

    t = clock()
    train_grid(SEQ_LENS, BATCH_SIZES, modes, args.steps, 0, "cpu", eval_groups=1)
    vec = clock() - t
    n_models = len(modes) * len(SEQ_LENS) * len(BATCH_SIZES)

    sample = [(4, 1), (4, 7), (12, 4), (20, 1), (20, 7)]
    sizes = np.array([N * L * (L - 1) for L, N in sample], dtype=float)
    per_step = np.array([time_one_model(L, N, args.steps, g) for L, N in sample])
    b, a = np.polyfit(sizes, per_step, 1)  # per-step seconds ~ a + b * size
    grid_sizes = np.array([N * L * (L - 1) for L in SEQ_LENS for N in BATCH_SIZES], dtype=float)
    one_by_one = len(modes) * args.steps * float(np.sum(a + b * grid_sizes))

    print(f"models: {n_models} ({', '.join(modes)}), steps: {args.steps}")
    for (L, N), s in zip(sample, per_step):
        print(f"  one model L={L:2d} N={N}: {1e3 * s:.2f} ms/step")
    print(f"vectorised pass (incl. build + 1 eval): {vec:.2f} s  ({1e3 * vec / args.steps:.1f} ms/step for all models)")
    print(f"one model at a time (extrapolated):     {one_by_one:.2f} s")
    speedup = one_by_one / vec
    print(
        f"ratio one-at-a-time / vectorised:       {speedup:.2f}x (target {SPEEDUP_TARGET:g}x) {verdict(speedup, SPEEDUP_TARGET)}"
    )
    # forward FLOPs per real (window, position): 3x1 conv, five 3x32 convs, the final 32-tap dot product; x3 fwd+bwd
    flop = 3 * len(modes) * float(np.sum(grid_sizes)) * 2 * (3 * 32 + 5 * 96 * 32 + 32)
    print(
        f"compute: {flop / 1e9:.1f} GFLOP per step (fwd+bwd, unpadded) -> vectorised {flop / 1e9 / (vec / args.steps):.1f}"
        f" GFLOP/s, one at a time {flop / 1e9 / (one_by_one / args.steps):.1f} GFLOP/s"
    )
    print(
        f"extrapolated to the blog's 1000 steps: vectorised {vec / args.steps * 1000:.0f} s, "
        f"one at a time {one_by_one / args.steps * 1000:.0f} s"
    )
    mm_s, mm_flop = time_matmuls(matmul_shapes(modes))
    step_s = time_grid_steps(modes, args.steps)
    print(
        f"roofline: the step's batched matmuls alone (padded shapes) {mm_flop / 1e9:.1f} GFLOP in {1e3 * mm_s:.0f} ms "
        f"= {mm_flop / 1e9 / mm_s:.1f} GFLOP/s on this machine (square 1024 matmul: {square_matmul_rate() / 1e9:.1f} "
        f"GFLOP/s)"
    )
    print(
        f"grid step (training only, {args.steps} timed) {1e3 * step_s:.0f} ms: "
        f"{mm_flop / 1e9 / step_s:.1f} GFLOP/s of padded matmul work "
        f"({flop / 1e9 / step_s:.1f} of useful work), {mm_s / step_s:.3f} of the roofline for these shapes "
        f"(target {ROOFLINE_TARGET:g}) {verdict(mm_s / step_s, ROOFLINE_TARGET)}; the rest is BN statistics, masking, "
        f"Adam and Python overhead"
    )


if __name__ == "__main__":
    main()
