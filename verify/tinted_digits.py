"""scikit-learn's 8 x 8 digits tinted with a random foreground and background colour per image.

The colours are drawn independently of the class, so colour identifies an image (a shortcut for an
instance-discrimination pretext task, SimCLR §3 Figure 6) but says nothing about which digit it is.
"""
import torch
from sklearn.datasets import load_digits


def tinted_digits(seed=0):
    """Return x: N x 3 x 8 x 8 in [0, 1], y: N digit labels (N = 1797) and tint: N x 6 (ink RGB, paper RGB),
    the tints seeded by `seed`."""
    data = load_digits()
    ink = torch.tensor(data.images, dtype=torch.float32).unsqueeze(1) / 16.0  # ink: N x 1 x 8 x 8
    g = torch.Generator().manual_seed(seed)
    fg = 0.5 + 0.5 * torch.rand(len(ink), 3, 1, 1, generator=g)  # bright ink colour: N x 3 x 1 x 1
    bg = 0.5 * torch.rand(len(ink), 3, 1, 1, generator=g)  # dark paper colour: N x 3 x 1 x 1
    x = fg * ink + bg * (1 - ink)  # x: N x 3 x 8 x 8
    tint = torch.cat([fg, bg], 1).flatten(1)  # tint: N x 6
    return x, torch.tensor(data.target), tint


def split(n, seed=0, test_fraction=0.3):
    """A seeded random train/test split of n indices."""
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    n_test = int(round(test_fraction * n))
    return perm[n_test:], perm[:n_test]
