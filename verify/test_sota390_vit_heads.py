"""SOTA-390: in a MoCo v3 ViT (LayerNorm backbone, BN only in the MLP heads) the backbone keeps the samples of a batch
apart and the heads in train mode do not (Chen, Xie & He 2021, arXiv 2104.02057, §5 "MLP heads.", §6.2 "BatchNorm in
MLP heads.", §6.3 "ViT-BN")."""

import numpy as np
import pytest
import torch
import torch.nn as nn

from verify.test_sota364_mechanics import cross_sample_jacobian_max

DIM, HEADS, MLP_DIM, OUT = 16, 2, 32, 8  # MoCo v3: ViT-B 768-d, 12 heads, heads 4096-d hidden, 256-d out
N = 6  # batch


class Block(nn.Module):
    """A pre-norm Transformer block (ViT [16]): LN -> self-attention -> residual, LN -> MLP -> residual. `mlp_bn`:
    BN in place of the MLP's LayerNorm, MoCo v3 §6.3's "ViT-BN" ("replacing LN with BN in the ViT backbone's MLP
    blocks (i.e., excluding self-attention blocks)")."""

    def __init__(self, mlp_bn=False):
        super().__init__()
        self.ln1 = nn.LayerNorm(DIM, eps=1e-6)  # vits.py: norm_layer=partial(nn.LayerNorm, eps=1e-6)
        self.attn = nn.MultiheadAttention(DIM, HEADS, batch_first=True)
        self.mlp_bn = mlp_bn
        self.ln2 = nn.BatchNorm1d(DIM) if mlp_bn else nn.LayerNorm(DIM, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))

    def forward(self, t):  # t: N x T x D
        h = self.ln1(t)
        t = t + self.attn(h, h, h, need_weights=False)[0]  # attention mixes the tokens of one image, never images
        h = self.ln2(t.transpose(1, 2)).transpose(1, 2) if self.mlp_bn else self.ln2(t)  # BN over N and T per channel
        return t + self.mlp(h)


class Backbone(nn.Module):
    """Patch projection of 4 x 4 patches of an 8 x 8 image, a class token, two blocks, the final LayerNorm; the class
    token after it is the output (MoCo v3 §5 "ViT architecture.")."""

    def __init__(self, mlp_bn=False):
        super().__init__()
        self.patch = nn.Linear(16, DIM)  # 4 x 4 patch -> D
        self.cls = nn.Parameter(0.02 * torch.randn(1, 1, DIM))
        self.pos = nn.Parameter(0.02 * torch.randn(1, 5, DIM))
        self.blocks = nn.Sequential(Block(mlp_bn), Block(mlp_bn))
        self.norm = nn.LayerNorm(DIM, eps=1e-6)

    def forward(self, x):  # x: N x 8 x 8
        p = x.unfold(1, 4, 4).unfold(2, 4, 4).reshape(len(x), 4, 16)  # N x 4 patches x 16
        t = torch.cat([self.cls.expand(len(x), -1, -1), self.patch(p)], 1) + self.pos  # N x 5 x D
        return self.norm(self.blocks(t))[:, 0]  # N x D, the class token


def mlp(num_layers, d_in, d_hidden, d_out, last_bn=True):
    """moco-v3 moco/builder.py MoCo._build_mlp: Linear (no bias), BN and ReLU in the hidden layers, BN without affine
    parameters after the last layer."""
    layers = []
    for i in range(num_layers):
        layers.append(nn.Linear(d_in if i == 0 else d_hidden, d_out if i == num_layers - 1 else d_hidden, bias=False))
        if i < num_layers - 1:
            layers += [nn.BatchNorm1d(d_hidden), nn.ReLU()]
        elif last_bn:
            layers.append(nn.BatchNorm1d(d_out, affine=False))
    return nn.Sequential(*layers)


def heads():
    """MoCo_ViT: a 3-layer projection head and a 2-layer prediction head, BN in every layer (§5 "MLP heads.")."""
    return nn.Sequential(mlp(3, DIM, MLP_DIM, OUT), mlp(2, OUT, MLP_DIM, OUT))


@pytest.mark.claim("SOTA-390", "vit-head-cross-sample")
def test_vit_backbone_keeps_samples_apart_and_bn_heads_do_not(evidence, device, seeds):
    """A LayerNorm ViT's output has no cross-sample Jacobian; its BN heads (train mode) and a ViT-BN backbone do."""
    worst = {}  # name -> per seed, max over i != j of |d out_i / d x_j|
    for seed in seeds:
        torch.manual_seed(seed)  # drawn on the CPU, then moved: the same numbers on every device
        x = torch.rand(N, 8, 8).to(device)  # N images of 8 x 8
        backbone, head = Backbone().to(device).train(), heads().to(device).train()
        vit_bn = Backbone(mlp_bn=True).to(device).train()
        with torch.no_grad():
            for _ in range(3):  # non-trivial running statistics for the eval-mode readings
                head(backbone(torch.rand(32, 8, 8).to(device)))
        worst.setdefault("backbone", []).append(cross_sample_jacobian_max(backbone, x))
        worst.setdefault("head_train", []).append(cross_sample_jacobian_max(head, backbone(x).detach()))
        worst.setdefault("model_train", []).append(cross_sample_jacobian_max(lambda z: head(backbone(z)), x))
        worst.setdefault("vit_bn_backbone", []).append(cross_sample_jacobian_max(vit_bn, x))
        head.eval()
        worst.setdefault("model_eval", []).append(cross_sample_jacobian_max(lambda z: head(backbone(z)), x))
    for name, v in worst.items():  # one value per seed: every seed is read
        evidence.metric(f"{name}_cross_jacobian", float(np.mean(v)), seeds=v)
    evidence.note("per seed: " + "; ".join(f"{k}: {np.round(v, 4).tolist()}" for k, v in worst.items()))
