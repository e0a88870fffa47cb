"""Data of the verifiers: scikit-learn's 8 x 8 digits (plain, split, tinted) and replicated batches.

Nothing is downloaded: `sklearn.datasets.load_digits` ships with scikit-learn. scikit-learn is imported inside the
functions, because spawned torch.distributed ranks import the modules that import this one.
Shapes: R = replicas (independent seeds trained in lock-step), N = batch, M = data set size.
"""

import numpy as np
import torch


def digits(device="cpu"):
    """All 1797 digits as images in [0, 1] and their labels: x: 1797 x 8 x 8 float32, y: 1797 int64."""
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.as_tensor(d.images.astype(np.float32) / 16.0, device=device)  # x: 1797 x 8 x 8, pixels 0..16 -> [0, 1]
    return x, torch.as_tensor(d.target.astype(np.int64), device=device)


def load_digits_split(n_heldout=597, seed=0, device="cpu"):
    """`digits` with a stratified held-out split of `n_heldout` images: dict x_train, y_train, x_test, y_test."""
    from sklearn.model_selection import train_test_split

    x, y = (t.numpy() for t in digits())  # 1797 x 8 x 8, 1797
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=n_heldout, random_state=seed, stratify=y)
    return {
        k: torch.as_tensor(v, device=device)
        for k, v in (("x_train", x_tr), ("y_train", y_tr), ("x_test", x_te), ("y_test", y_te))
    }


def tinted_digits(seed=0):
    """`digits` tinted with a random ink and paper colour per image, drawn independently of the class, so colour
    identifies an image (a shortcut for instance discrimination, SimCLR §3 Figure 6) but not its digit.
    Returns x: 1797 x 3 x 8 x 8 in [0, 1], y: 1797 labels and tint: 1797 x 6 (ink RGB, paper RGB)."""
    images, y = digits()
    ink = images.unsqueeze(1)  # ink: M x 1 x 8 x 8
    g = torch.Generator().manual_seed(seed)
    fg = 0.5 + 0.5 * torch.rand(len(ink), 3, 1, 1, generator=g)  # bright ink colour: M x 3 x 1 x 1
    bg = 0.5 * torch.rand(len(ink), 3, 1, 1, generator=g)  # dark paper colour: M x 3 x 1 x 1
    x = fg * ink + bg * (1 - ink)  # x: M x 3 x 8 x 8
    tint = torch.cat([fg, bg], 1).flatten(1)  # tint: M x 6
    return x, y, tint


def split(n, seed=0, test_fraction=0.3):
    """A seeded random train/test split of n indices."""
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    n_test = int(round(test_fraction * n))
    return perm[n_test:], perm[:n_test]


def sample_batch(x, n_replicas, batch, generator):
    """An independent random batch per replica, without replacement: indices R x N into x's first axis."""
    keys = torch.rand(n_replicas, x.shape[0], generator=generator, device="cpu")  # keys: R x M
    return keys.argsort(dim=1)[:, :batch].to(x.device)  # idx: R x N


def flat(x):
    """Images ... x H x W -> ... x H*W."""
    return x.reshape(*x.shape[:-2], -1)


def for_replicas(x, n_replicas):
    """The same images for every replica: M x ... -> R x M x D (flattened, a broadcast view)."""
    return x.reshape(1, len(x), -1).expand(n_replicas, -1, -1)
