"""SOTA-371 (our machinery): the vectorised sequence grid (`verify.sequences.Bucket`) trains each of its packed,
padded and masked models exactly as the blog's nn.Sequential trained alone on the same batches would."""

from contextlib import contextmanager

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from verify.sequences import Bucket, blog_function, blog_model, load_blog_model, sequence_batches

# seeds: the record's `seeds:`, one trial per seed
SPECS = [("leak", 5, 3), ("leak", 8, 1), ("far", 6, 2), ("random", 7, 3)]  # (mode, L, N): unequal L and N, padded
STEPS = 10  # Adam steps, blog code: torch.optim.Adam defaults, lr 1e-3


def _slot_batch(bucket, m, x, y):
    """Model m's real samples of a drawn bucket batch: inputs N*L x 1 x (L-1), targets N*L (the rest is padding)."""
    _, L, N = bucket.specs[m]
    xs = x[m, 0].view(bucket.n_max, bucket.E, bucket.T)[:N, :L, : L - 1]  # xs: N x L x (L-1)
    ys = y[m, 0].view(bucket.n_max, bucket.E)[:N, :L]  # ys: N x L
    return xs.reshape(N * L, 1, L - 1), ys.reshape(N * L)


def _padded_batch(bucket, m, x, y):
    """Control: the slot with its padding samples fed to the blog model (not masked out of the batch statistics)."""
    _, L, _ = bucket.specs[m]
    xs = x[m, 0].view(bucket.n_max, bucket.E, bucket.T)[:, :, : L - 1]  # xs: Nmax x E x (L-1), zero rows included
    return xs.reshape(-1, 1, L - 1), y[m, 0]


def _blog_models(bucket, seed):
    """One blog nn.Sequential per slot, copied into the bucket; pre-BN conv biases are zero and frozen, as the grid
    omits them (train-mode outputs are invariant to them, and their exact gradient is zero)."""
    models = []
    for m, (_, L, _) in enumerate(bucket.specs):
        torch.manual_seed(seed * 100 + m)
        model = blog_model(L)
        convs = [layer for layer in model if isinstance(layer, nn.Conv1d)]
        for conv in convs[:-1]:
            nn.init.zeros_(conv.bias)
            conv.bias.requires_grad_(False)
        load_blog_model(bucket, m, model)
        models.append(model)
    return models


def _bias_invariance(seed):
    """Largest change of a train-mode blog model's output when its pre-BN conv biases are randomised."""
    torch.manual_seed(seed)
    model = blog_model(6).train()
    x = torch.randn(12, 1, 5)  # x: N*E x 1 x (L-1)
    with torch.no_grad():
        before = model(x)  # before: N*E x 1
        for conv in [layer for layer in model if isinstance(layer, nn.Conv1d)][:-1]:
            conv.bias.normal_()
        return (model(x) - before).abs().max().item()


def _trial(seed):
    """Train the bucket and the blog models side by side on the same batches; worst differences."""
    g = torch.Generator().manual_seed(seed)
    f = blog_function()
    datasets = {(mode, L): sequence_batches(f, L, mode, g) for mode, L, _ in SPECS}
    bucket = Bucket(SPECS, datasets, g, "cpu")
    models = _blog_models(bucket, seed)
    opt_b = torch.optim.Adam(bucket.parameters(), lr=1e-3)
    opts = [torch.optim.Adam([p for p in mdl.parameters() if p.requires_grad], lr=1e-3) for mdl in models]
    err = {"train_loss": 0.0, "pred_train": 0.0, "pred_eval": 0.0, "padded_ctl": float("inf")}
    for _ in range(STEPS):
        x, y = bucket.draw(1, g)  # x: M x 1 x S x T, y: M x 1 x S
        loss_b = bucket.mse(bucket.forward(x, train=True, update_stats=True), y)  # loss_b: M x 1
        opt_b.zero_grad(set_to_none=True)
        loss_b.sum().backward()  # the models are independent: each gets its own gradient
        opt_b.step()
        for m, (mdl, opt) in enumerate(zip(models, opts)):
            xs, ys = _slot_batch(bucket, m, x, y)
            loss = F.mse_loss(mdl.train()(xs).squeeze(1), ys)  # blog code: nn.MSELoss on the model's batch
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            err["train_loss"] = max(err["train_loss"], abs(loss.item() - loss_b[m, 0].item()))
    x, y = bucket.draw(1, g)  # a fresh batch for the predictions
    with torch.no_grad():
        pred = {"pred_train": bucket.forward(x, train=True), "pred_eval": bucket.forward(x, train=False)}  # M x 1 x S
        for m, mdl in enumerate(models):
            xs, _ = _slot_batch(bucket, m, x, y)
            _, L, N = bucket.specs[m]
            for key, train in (("pred_eval", False), ("pred_train", True)):  # eval first: train mode updates stats
                ref = mdl.train(train)(xs).squeeze(1)  # ref: N*L
                got = pred[key][m, 0].view(bucket.n_max, bucket.E)[:N, :L].reshape(-1)
                err[key] = max(err[key], (got - ref).abs().max().item())
            if bucket.n_max * bucket.E > N * L:  # control: an implementation that lets the padding into BN
                xp, _ = _padded_batch(bucket, m, x, y)
                padded = mdl.train()(xp).squeeze(1).view(bucket.n_max, bucket.E)[:N, :L].reshape(-1)
                got = pred["pred_train"][m, 0].view(bucket.n_max, bucket.E)[:N, :L].reshape(-1)
                err["padded_ctl"] = min(err["padded_ctl"], (got - padded).abs().max().item())
    return err


@contextmanager
def _default_dtype(dtype):
    """Tensors made inside (the bucket's, the blog models', the data) of ``dtype``."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(before)


@pytest.mark.claim("SOTA-371", "grid-equivalence")
def test_vectorised_grid_equals_blog_model_trained_alone(evidence, device, seeds):
    """Four blog models of unequal sequence length and batch size packed into one padded bucket train as the blog's
    nn.Sequential trained alone (losses, train- and eval-mode predictions); letting the padding into BN does not.
    The same trials in float64 as well: there a BatchNorm output within float32's rounding of zero, whose ReLU
    decision the two implementations may take differently, is no longer likely enough to happen."""
    runs = [_trial(seed) for seed in seeds]
    for key in ("train_loss", "pred_train", "pred_eval"):
        evidence.metric(f"{key}_max_abs_diff", max(r[key] for r in runs))
    with _default_dtype(torch.float64):
        exact = [_trial(seed) for seed in seeds]
    for key in ("train_loss", "pred_train", "pred_eval"):
        evidence.metric(f"f64_{key}_max_abs_diff", max(r[key] for r in exact))
    evidence.metric("padded_bn_min_abs_diff", min(r["padded_ctl"] for r in runs))
    evidence.metric("f64_padded_bn_min_abs_diff", min(r["padded_ctl"] for r in exact))
    evidence.metric("pre_bn_bias_train_output_change", max(_bias_invariance(s) for s in seeds))
    evidence.note(
        f"float32, specs {SPECS} in one bucket, {STEPS} Adam steps, {len(seeds)} seeds; per seed: "
        + "; ".join(", ".join(f"{k}={v:.2g}" for k, v in r.items()) for r in runs)
        + "; float64: "
        + "; ".join(", ".join(f"{k}={v:.2g}" for k, v in r.items()) for r in exact)
    )
