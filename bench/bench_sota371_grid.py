"""SOTA-371 grid: wall time of training all 17 x 7 blog models (per data mode) in one vectorised pass
(verify/sequences.py) vs training them one at a time as nn.Sequential models (the blog code's loop), the latter
extrapolated from a few timed models with a per-step cost a + b * (N * L * (L-1)) fitted on them.

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
from verify.sequences import MODES, blog_function, blog_model, sequence_batches, train_grid

torch.set_num_threads(1)
SEQ_LENS, BATCH_SIZES = list(range(4, 21)), list(range(1, 8))


def time_one_model(L, N, steps, g):
    """Seconds per Adam step of one nn.Sequential blog model on N sequence batches (blog code's training loop)."""
    X, Y = sequence_batches(blog_function(), L, "leak", g)  # B x E x L-1, B x E
    model = blog_model(L)
    opt = torch.optim.Adam(model.parameters())
    t = None
    for s in range(steps + 2):  # two warm-up steps
        if s == 2:
            t = time.perf_counter()
        idx = torch.randperm(X.shape[0], generator=g)[:N]
        x, y = X[idx].reshape(-1, 1, L - 1), Y[idx].reshape(-1, 1)  # N*E x 1 x L-1, N*E x 1
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return (time.perf_counter() - t) / steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--modes", default="leak")  # one check trains one data set
    args = ap.parse_args()
    modes = tuple(args.modes.split(","))
    assert all(m in MODES for m in modes)
    g = torch.Generator().manual_seed(0)

    t = time.perf_counter()
    train_grid(SEQ_LENS, BATCH_SIZES, modes, args.steps, 0, "cpu", eval_groups=1)
    vec = time.perf_counter() - t
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
    print(f"ratio one-at-a-time / vectorised:       {one_by_one / vec:.2f}x")
    # forward FLOPs per real (window, position): 3x1 conv, five 3x32 convs, the final 32-tap dot product; x3 fwd+bwd
    flop = 3 * len(modes) * float(np.sum(grid_sizes)) * 2 * (3 * 32 + 5 * 96 * 32 + 32)
    print(f"compute: {flop / 1e9:.1f} GFLOP per step (fwd+bwd, unpadded) -> vectorised {flop / 1e9 / (vec / args.steps):.1f}"
          f" GFLOP/s, one at a time {flop / 1e9 / (one_by_one / args.steps):.1f} GFLOP/s")
    print(f"extrapolated to the blog's 1000 steps: vectorised {vec / args.steps * 1000:.0f} s, "
          f"one at a time {one_by_one / args.steps * 1000:.0f} s")


if __name__ == "__main__":
    main()
