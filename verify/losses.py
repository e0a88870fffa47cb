"""Contrastive losses over replicated embeddings: InfoNCE with a queue (MoCo eq. 1), NT-Xent (SimCLR eq. 1), and the
alternatives of SimCLR §5.1 (Table 2: NT-Logistic, margin triplet), with or without semi-hard negative mining.

Shapes: R = replicas, N = batch, D = embedding dim, Q = queue length.
"""

import torch
import torch.nn.functional as F


def moco_logits(q, k, queue, tau):
    """MoCo eq. 1 (InfoNCE): q, k: R x N x D (L2-normalised), queue: R x Q x D.
    Returns logits R x N x (1+Q); the positive is index 0."""
    l_pos = (q * k).sum(-1, keepdim=True)  # l_pos: R x N x 1
    l_neg = torch.bmm(q, queue.transpose(1, 2))  # l_neg: R x N x Q
    return torch.cat([l_pos, l_neg], dim=-1) / tau  # R x N x (1+Q)


def nt_xent(z1, z2, tau):
    """SimCLR eq. 1 (NT-Xent) over 2N views: z1, z2: R x N x D (L2-normalised).
    Returns (loss per replica R, mean over the 2N anchors; top-1 accuracy per replica R)."""
    r, n, _ = z1.shape
    z = torch.cat([z1, z2], dim=1)  # z: R x 2N x D
    sim = torch.bmm(z, z.transpose(1, 2)) / tau  # sim: R x 2N x 2N
    eye = torch.eye(2 * n, dtype=torch.bool, device=z.device)
    sim = sim.masked_fill(eye, float("-inf"))  # SimCLR eq. 1: the indicator [k != i] excludes the anchor itself
    target = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(z.device)  # target: 2N, positive of i
    loss = F.cross_entropy(sim.reshape(r * 2 * n, 2 * n), target.repeat(r), reduction="none")  # loss: R*2N
    acc = (sim.argmax(-1) == target).float().mean(1)  # acc: R
    return loss.reshape(r, 2 * n).mean(1), acc  # R, R


def other_view_pairs(z1, z2):
    """Each of the 2N anchors against the N embeddings of the other view (SimCLR §5.1 footnote 8: 'we only consider the
    negatives from one augmentation view'). z1, z2: R x N x D. Returns pos: R x 2N, neg: R x 2N x (N-1) similarities
    and the top-1 accuracy of the positive among the N candidates, R."""
    r, n, _ = z1.shape
    s = torch.bmm(z1, z2.transpose(1, 2))  # s: R x N x N, s[i, j] = z1_i . z2_j
    s = torch.cat([s, s.transpose(1, 2)], 1)  # s: R x 2N x N, anchors of view 1, then of view 2
    eye = torch.eye(n, dtype=torch.bool, device=s.device).repeat(2, 1)  # eye: 2N x N, each anchor's positive
    pos = s[:, eye].reshape(r, 2 * n)  # pos: R x 2N
    neg = s[:, ~eye].reshape(r, 2 * n, n - 1)  # neg: R x 2N x (N-1)
    acc = (s.argmax(-1) == torch.arange(n, device=s.device).repeat(2)).float().mean(1)  # acc: R
    return pos, neg, acc


@torch.no_grad()
def semi_hard(pos, neg):
    """SimCLR §5.1 semi-hard negative mining (Schroff et al. 2015 §3.2): per anchor the negative closest to it among
    those farther than the positive (u.v- < u.v+); where there is none, the farthest negative (as tf-addons'
    triplet_semihard_loss). pos: R x 2N, neg: R x 2N x (N-1). Returns indices into neg's last axis, R x 2N x 1."""
    farther = neg < pos[..., None]  # farther: R x 2N x (N-1)
    closest_farther = neg.masked_fill(~farther, float("-inf")).argmax(-1)  # R x 2N
    return torch.where(farther.any(-1), closest_farther, neg.argmin(-1))[..., None]  # R x 2N x 1


def nt_logistic(pos, neg, tau):
    """SimCLR Table 2 NT-Logistic, -log s(u.v+/tau) - log s(-u.v-/tau), with the negatives' terms averaged so that
    the positive and the negatives of an anchor weigh the same whatever their number. pos: R x A, neg: R x A x K.
    Returns the loss per replica, R."""
    return (-F.logsigmoid(pos / tau) - F.logsigmoid(-neg / tau).mean(-1)).mean(1)


def margin_triplet(pos, neg, m):
    """SimCLR Table 2 margin triplet, max(u.v- - u.v+ + m, 0), averaged over the negatives. pos: R x A, neg: R x A x K.
    Returns the loss per replica, R."""
    return torch.clamp(neg - pos[..., None] + m, min=0).mean(-1).mean(1)
