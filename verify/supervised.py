"""The supervised control of the SimCLR claims: the same base encoder f trained with cross-entropy on the same
augmented views (SimCLR §3.2, Table 1: 'When training supervised models with the same set of augmentations').

Shapes: R = replicas, N = batch, M = data set size.
"""

import torch
import torch.nn.functional as F

from verify.data import for_replicas, sample_batch
from verify.layers import Encoder, RLinear


def train_supervised(x_train, y_train, aug, n_replicas=3, steps=300, batch=256, lr=1e-3, hidden=128, seed=0):
    """Cross-entropy training of the base encoder f plus a linear classifier, on `aug.views` of x_train: M x ....
    Returns (encoder f, classifier)."""
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d_in = x_train[0].numel()
    f = Encoder(n_replicas, norm="none", devices=1, hidden=hidden, out_dim=hidden, d_in=d_in).to(x_train.device)
    clf = RLinear(n_replicas, hidden, 10).to(x_train.device)
    opt = torch.optim.Adam(list(f.parameters()) + list(clf.parameters()), lr=lr)
    for _ in range(steps):
        idx = sample_batch(x_train, n_replicas, batch, g)  # idx: R x N
        logits = clf(F.relu(f(aug.views(x_train[idx], g))))  # logits: R x N x 10
        loss = F.cross_entropy(logits.reshape(-1, 10), y_train[idx].reshape(-1), reduction="none")  # loss: R*N
        opt.zero_grad(set_to_none=True)
        loss.view(n_replicas, -1).mean(1).sum().backward()
        opt.step()
    return f, clf


@torch.no_grad()
def supervised_accuracy(f, clf, x, y):
    """Test accuracy of the supervised model on un-augmented images x: M x .... Returns R."""
    logits = clf(F.relu(f(for_replicas(x, f.n_replicas))))  # logits: R x M x 10
    return (logits.argmax(-1) == y).float().mean(1)
